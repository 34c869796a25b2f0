#pragma once
// `mtdesk translate` without files: stdin to stdout, line by line, through any engine (the
// CPU engine, the GPU batching engine, remote servers).

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "mtdesk/translate/glossary.h"
#include "mtdesk/translate/prompt.h"
#include "mtdesk/translate/translation_engine.h"

namespace mtdesk::app {

/// What translate_stdin() translates with, besides the engine.
struct StdinTranslation {
    PromptRequest request;  ///< the languages (request.text is not used)
    const Glossary* glossary = nullptr;
    TranslateOptions options;
    /// Called once with the first text read (when it is not empty), e.g. to detect its
    /// language and warn about a pair the model was not trained for.
    std::function<void(std::string_view text)> on_first_text;
};

/// Translates stdin to stdout line by line (1:1: blank lines, indentation and line ends kept,
/// only non-blank lines go to the engine). Lines are read as they arrive (StdinReader) and
/// submitted at once, up to max(256, 4 × engine.max_in_flight()) lines ahead of the output,
/// so that a batching engine is fed, memory stays bounded and `tail -f log | mtdesk translate`
/// prints each line's translation as soon as it and the lines before it are done. Terminal
/// escape sequences (colours) are removed from the lines first, with a note. Notes on stderr
/// name a line whose translation lacks glossary terms, reached the token limit, or failed.
/// Returns the exit code: 1 when a line failed, else 0. Throws Error when stdout cannot be
/// written (the jobs still in flight are cancelled), FileError when stdin cannot be read or
/// decoded.
int translate_stdin(TranslationEngine& engine, const StdinTranslation& what);

}  // namespace mtdesk::app
