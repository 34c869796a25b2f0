#pragma once
// The subcommands of the `mtdesk` executable. Each takes the argument list with the subcommand
// itself removed (args[0] is the program) and returns the exit code: 0 success, 1 failure,
// 2 usage error. Errors are printed to stderr.

#include <QString>
#include <QStringList>

class QCommandLineParser;

namespace mtdesk::app {

int cmd_translate(const QStringList& args);
int cmd_models(const QStringList& args);
int cmd_languages(const QStringList& args);
int cmd_bench(const QStringList& args);
int cmd_serve(const QStringList& args);

/// `p`'s help text with its usage line naming "mtdesk <command>" (QCommandLineParser names the
/// executable alone, as the subcommand's parser sees it).
QString command_help(const QCommandLineParser& p, const QString& command);

}  // namespace mtdesk::app
