#pragma once
// What a model says it was trained to translate: the bundled demo model knows English <-> 13
// languages, and a pair outside that gives nonsense. The command line warns on stderr, the
// window under the language pickers.

#include <string>
#include <vector>

#include "mtdesk/translate/languages.h"

namespace mtdesk::app {

/// The languages a model was trained to translate to and from English, when it says so (a
/// `training_summary.json` with "langs", as the bundled demo model has); empty otherwise,
/// also for a file this check does not understand. Codes as languages() spells them.
std::vector<std::string> trained_languages(const std::string& model_dir);

/// Whether `from` -> `to` lies outside what a model trained for English <-> `langs` knows.
/// `from` may be null (not given, not detected): then only the target is checked. Always
/// false when `langs` is empty (the model says nothing).
bool untrained_pair(const std::vector<std::string>& langs, const Language* from,
                    const Language& to);

/// `langs` as "de, fr, ja" for messages.
std::string language_list(const std::vector<std::string>& langs);

}  // namespace mtdesk::app
