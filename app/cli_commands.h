#pragma once
// The subcommands of the `mtdesk` executable. Each takes the argument list with the subcommand
// itself removed (args[0] is the program) and returns the exit code: 0 success, 1 failure,
// 2 usage error. Errors are printed to stderr; run_cli prints what they throw (UsageError: exit
// 2, any other exception: exit 1).

#include <QList>
#include <QString>
#include <QStringList>

#include <string>
#include <string_view>
#include <vector>

#include "mtdesk/error.h"
#include "mtdesk/translate/glossary.h"
#include "mtdesk/translate/languages.h"

class QCommandLineParser;

namespace mtdesk::app {

struct PlaceholderNote;

/// A command line that is wrong in itself, whatever the machine and the files: an unknown or
/// missing option, a value an option does not take, an unknown language, options that exclude
/// each other. run_cli prints it after the command's name and exits with 2; other errors (a
/// file that cannot be read, a model that fails to load, a failed translation) exit with 1.
class UsageError : public Error {
  public:
    using Error::Error;
};

int cmd_translate(const QStringList& args);
int cmd_models(const QStringList& args);
int cmd_languages(const QStringList& args);
int cmd_bench(const QStringList& args);
int cmd_serve(const QStringList& args);

/// `p`'s help text with its usage line naming "mtdesk <command>" (QCommandLineParser names the
/// executable alone, as the subcommand's parser sees it).
QString command_help(const QCommandLineParser& p, const QString& command);

/// Option `name`'s value (as given, or its default) as a whole number within [lo, hi]. Throws
/// UsageError "--NAME needs a whole number from LO to HI, got 'VALUE'" otherwise: a value past the
/// range never wraps round into a different one.
long long whole_number_option(const QCommandLineParser& p, const char* name, long long lo,
                              long long hi);

/// Writes `bytes` to stdout. Throws Error "cannot write to stdout: REASON" when stdout has
/// failed (a full disk, a closed descriptor), so that a translation stops at once instead of
/// going on for output that is lost.
void write_stdout(std::string_view bytes);

/// One note on stderr for a segment whose translation lacks glossary terms: "mtdesk: WHERE:
/// glossary terms missing from the translation: "src" -> "tgt", ..." (nothing when `missing` is
/// empty). `where` names the segment ("stdin: line 3", "notes.txt: segment 2").
void warn_missing_terms(const std::string& where, const std::vector<GlossaryEntry>& missing);

/// Warnings on stderr about the source language of one input (`where` names it, e.g. "stdin";
/// empty for none). `from` is --from; without it the language is detected in `text`
/// (detect_source_language). When the text reliably is in the target language `to` already:
/// a warning that says so (the translation still runs). Otherwise, when `langs` is not empty
/// (the model was trained for English <-> these only; trained_languages()) and the pair is
/// outside that: a warning naming the pair, with "(undetected)" for a source that was not
/// found (then only the target is checked).
void warn_about_source(const std::vector<std::string>& langs, const Language* from,
                       const Language& to, std::string_view text, const std::string& where);

/// The notes on stderr after a document is written, the same for a local model and for
/// servers: "mtdesk: FILE: N segments may have lost placeholders (segment 2: lost **; ...)"
/// naming the first three of `notes`, when `placeholder_issues` (all of them) is not 0; and
/// "mtdesk: FILE: N entries marked fuzzy ..." when `marked_for_review` is not 0.
void report_document_checks(const QString& file, int placeholder_issues,
                            const QList<PlaceholderNote>& notes, int marked_for_review);

}  // namespace mtdesk::app
