#pragma once
// `mtdesk translate --server URL [--server URL2 …]`: the translation goes to OpenAI-compatible
// servers through the remote engine instead of a model on this computer.

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QList>

#include <optional>
#include <string>
#include <vector>

#include "mtdesk/translate/glossary.h"
#include "mtdesk/translate/prompt.h"
#include "mtdesk/translate/translator.h"

namespace mtdesk::app {

/// The options of `mtdesk translate` for servers: --server, --api-key, --remote-model,
/// --concurrency, --timeout, --ca-cert.
QList<QCommandLineOption> remote_translate_options();

/// Translates with the servers the parsed options name. stdin: translate_stdin() (lines submitted
/// as they arrive, the servers batching them, written to stdout in input order). Files: the
/// document job queue (the window's, with its state in a temporary directory) with one row per
/// file, all rows' segments in flight together; each output is written next to its source as
/// FILE.<LANG>.<ext>. `request` holds the languages, `options` the sampling and bounds,
/// `style` an explicit --prompt-style. Without --remote-model the first model the servers list
/// is used. Returns the exit code (1 when a line or a file failed); throws UsageError for
/// unusable options, mtdesk::Error when no server answers the model list.
int translate_through_servers(const QCommandLineParser& p, const PromptRequest& request,
                              const Glossary& glossary, const TranslateOptions& options,
                              std::optional<PromptStyle> style);

}  // namespace mtdesk::app
