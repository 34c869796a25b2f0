#pragma once
// Where the bundled demo model (resources/models/mtdesk-demo) is found at run time.

#include <QString>
#include <QStringList>
#include <string>

namespace mtdesk::app {

/// The directories searched for the bundled demo model, in order: next to an installed
/// executable (<prefix>/share/mtdesk/models/mtdesk-demo), the XDG data directories
/// (…/mtdesk/models/mtdesk-demo), and, for a build run from its tree, the source tree's
/// resources/models/mtdesk-demo.
QStringList demo_model_candidates();

/// The first candidate holding a config.json, as a clean absolute path; empty when none does.
QString demo_model_directory();

/// demo_model_directory() for commands whose --model was left out.
/// @throws mtdesk::Error naming every place searched when the demo model is in none of them.
std::string default_model_dir();

}  // namespace mtdesk::app
