#include "cli.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QStringList>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include <fmt/format.h>

#include "cli_commands.h"
#include "mtdesk/error.h"

namespace mtdesk::app {
namespace {

constexpr const char* kUsage =
    "Usage: mtdesk <command> [options]\n"
    "\n"
    "Without a command, mtdesk opens its window (when there is a display).\n"
    "\n"
    "Commands:\n"
    "  gui [--model DIR]    open the window\n"
    "  translate --to LANG [--from LANG] [--model DIR] [FILE...]\n"
    "                       translate stdin to stdout, or each NAME.ext to NAME.<LANG>.ext\n"
    "  translate --to LANG --server URL [--server URL2] [--api-key KEY] [FILE...]\n"
    "                       the same through OpenAI-compatible servers (vLLM, SGLang, serve)\n"
    "  models inspect [DIR] architecture, parameters, tokenizer, tensors, memory per tier\n"
    "  languages            the 38 languages and their codes\n"
    "  bench [--model DIR | --synthetic hy-mt-7b] [--tier T] [--batch 1,8,64]\n"
    "                       GPU engine throughput, latency and memory on a model\n"
    "  serve [--model DIR] [--host 127.0.0.1] [--port 8080] [--api-key KEY]\n"
    "                       OpenAI-compatible HTTP API: /v1/chat/completions, /v1/models,\n"
    "                       /v1/translate, /health\n"
    "\n"
    "Without --model (or DIR), the bundled demo model is used: a small model for software\n"
    "interface text in 13 languages <-> English. Real translation needs Hunyuan-MT-7B or\n"
    "HY-MT1.5 (see the README).\n"
    "\n"
    "Run 'mtdesk <command> --help' for the options of a command.\n"
    "\n"
    "Exit status: 0 success; 1 failure (a file that cannot be read or written, a model that\n"
    "fails to load, a failed translation); 2 usage error (an unknown or missing option, a\n"
    "value an option does not take, an unknown language).\n";

}  // namespace

QString command_help(const QCommandLineParser& p, const QString& command) {
    QString text = p.helpText();
    const QString program = QLatin1String("Usage: ") + QCoreApplication::arguments().value(0);
    if (text.startsWith(program))
        text.replace(0, program.size(), QLatin1String("Usage: mtdesk ") + command);
    return text;
}

long long whole_number_option(const QCommandLineParser& p, const char* name, long long lo,
                              long long hi) {
    const QString value = p.value(QString::fromLatin1(name));
    bool ok = false;
    const long long v = value.toLongLong(&ok);
    if (!ok || v < lo || v > hi)
        throw UsageError(fmt::format("--{} needs a whole number from {} to {}, got '{}'", name, lo,
                                     hi, value.toStdString()));
    return v;
}

namespace {

// What a command printed is only written once stdout is flushed: a full disk or a closed
// descriptor shows here, and must not end in success.
int finish_stdout(int code) {
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        std::fprintf(stderr, "mtdesk: cannot write to stdout: %s\n",
                     errno != 0 ? std::strerror(errno) : "write error");
        return code != 0 ? code : 1;
    }
    return code;
}

}  // namespace

void write_stdout(std::string_view bytes) {
    errno = 0;
    if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size() ||
        std::fflush(stdout) != 0 || std::ferror(stdout))
        throw Error(std::string("cannot write to stdout: ") +
                    (errno != 0 ? std::strerror(errno) : "write error"));
}

int run_cli(int argc, char** argv) {
    // Into a file or a pipe, a command's output is kept whole until finish_stdout(), so that a
    // failed write is seen there with its reason (a terminal stays line-buffered; translations
    // flush each line themselves).
    static char buffer[1 << 20];  // glibc ignores the size when setvbuf allocates
    if (!isatty(fileno(stdout))) std::setvbuf(stdout, buffer, _IOFBF, sizeof buffer);
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("mtdesk"));
    QCoreApplication::setApplicationVersion(QStringLiteral(MTDESK_VERSION));
    QStringList args = QCoreApplication::arguments();
    if (args.size() < 2 || args[1] == QLatin1String("--help") || args[1] == QLatin1String("-h")) {
        std::fputs(kUsage, args.size() < 2 ? stderr : stdout);
        return finish_stdout(args.size() < 2 ? 2 : 0);
    }
    if (args[1] == QLatin1String("--version")) {
        std::printf("mtdesk %s\n", MTDESK_VERSION);
        return finish_stdout(0);
    }
    const QString command = args[1];
    args.removeAt(1);  // the subcommand's own parser sees "mtdesk [options] ..."
    int code = -1;
    try {
        if (command == QLatin1String("translate")) code = cmd_translate(args);
        if (command == QLatin1String("models")) code = cmd_models(args);
        if (command == QLatin1String("languages")) code = cmd_languages(args);
        if (command == QLatin1String("bench")) code = cmd_bench(args);
        if (command == QLatin1String("serve")) code = cmd_serve(args);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "mtdesk %s: %s\n", qPrintable(command), e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mtdesk: %s\n", e.what());
        return 1;
    }
    if (code < 0) {
        std::fprintf(stderr, "mtdesk: unknown command '%s'\n\n%s", qPrintable(command), kUsage);
        return 2;
    }
    return finish_stdout(code);
}

}  // namespace mtdesk::app
