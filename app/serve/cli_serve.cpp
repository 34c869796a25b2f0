// mtdesk serve: the engine behind an OpenAI-compatible HTTP API (serve/http_server.h).

#include <QCommandLineParser>
#include <QDir>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "cli_commands.h"
#include "demo_model.h"
#include "engine_options.h"
#include "mtdesk/cuda/cuda_engine.h"
#include "mtdesk/error.h"
#include "mtdesk/quant/tiers.h"
#include "mtdesk/translate/translation_engine.h"
#include "mtdesk/translate/translator.h"
#include "serve/http_server.h"

namespace mtdesk::app {
namespace {

/// The engine the options ask for, loaded: a GPU's batching engine, or the CPU engine ("auto":
/// the first GPU when there is one, as `mtdesk translate` chooses).
std::unique_ptr<TranslationEngine> open_engine(const QCommandLineParser& p,
                                               const std::string& model_dir) {
    if (auto gpu = open_gpu_engine(p, model_dir)) return gpu;
    return make_cpu_engine(open_cpu_translator(p, model_dir));
}

/// A whole number option within [min, max].
long long number_option(const QCommandLineParser& p, const char* name, long long min,
                        long long max) {
    bool ok = false;
    const long long v = p.value(QString::fromLatin1(name)).toLongLong(&ok);
    if (!ok || v < min || v > max)
        throw UsageError(std::string("--") + name + " must be a whole number from " +
                         std::to_string(min) + " to " + std::to_string(max) + ", got '" +
                         p.value(QString::fromLatin1(name)).toStdString() + "'");
    return v;
}

/// Stops the server on SIGINT / SIGTERM. Any thread may receive a process signal (libraries
/// start threads of their own before main), so the handler only writes the signal's number to a
/// pipe, and a thread of ours reads it and stops the server as ordinary code.
class SignalWatcher {
  public:
    SignalWatcher() {
        if (pipe2(pipe_, O_CLOEXEC) != 0) throw Error("cannot create a pipe for signals");
        write_end = pipe_[1];
        struct sigaction sa {};
        sa.sa_handler = &SignalWatcher::on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int_);
        sigaction(SIGTERM, &sa, &old_term_);
        thread_ = std::thread([this] { run(); });
    }
    ~SignalWatcher() {
        const char quit = 0;
        [[maybe_unused]] const ssize_t n = write(pipe_[1], &quit, 1);
        thread_.join();
        sigaction(SIGINT, &old_int_, nullptr);
        sigaction(SIGTERM, &old_term_, nullptr);
        write_end = -1;
        close(pipe_[0]);
        close(pipe_[1]);
    }
    /// The server to stop from now on (null: a signal ends the process at once, e.g. while the
    /// model loads).
    void watch(serve::HttpServer* server) { server_ = server; }

  private:
    static void on_signal(int sig) {
        const char c = static_cast<char>(sig);
        [[maybe_unused]] const ssize_t n = write(write_end, &c, 1);  // async-signal-safe
    }

    void run() {
        for (;;) {
            char sig = 0;
            const ssize_t n = read(pipe_[0], &sig, 1);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0 || sig == 0) return;
            serve::HttpServer* server = server_;
            if (!server) {
                std::fprintf(stderr, "mtdesk serve: interrupted\n");
                std::_Exit(128 + sig);
            }
            std::fprintf(stderr, "mtdesk serve: %s: stopping\n",
                         sig == SIGINT ? "SIGINT" : "SIGTERM");
            server->stop();
        }
    }

    static inline volatile sig_atomic_t write_end = -1;
    int pipe_[2] = {-1, -1};
    struct sigaction old_int_ {
    }, old_term_{};
    std::atomic<serve::HttpServer*> server_{nullptr};
    std::thread thread_;
};

}  // namespace

int cmd_serve(const QStringList& args) {
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Serves a model over HTTP with an OpenAI-compatible API: GET /v1/models, POST "
        "/v1/chat/completions (streamed with \"stream\": true), POST /v1/translate (text, "
        "source, target, glossary) and GET /health. Every request is a job of one engine, so "
        "concurrent clients are batched together on a GPU. Listens on 127.0.0.1 unless --host "
        "says otherwise, which needs --api-key. Prints \"listening on http://HOST:PORT\" on "
        "stdout once it answers; SIGINT or SIGTERM stop it."));
    p.addHelpOption();
    p.addOptions({
        {{QStringLiteral("m"), QStringLiteral("model")},
         QStringLiteral("Model directory (default: the bundled demo model)."),
         QStringLiteral("DIR")},
        {QStringLiteral("served-model-name"),
         QStringLiteral("The model's id in the API (default: the model directory's name)."),
         QStringLiteral("NAME")},
        {QStringLiteral("host"),
         QStringLiteral("Address to listen on; other than loopback only with --api-key."),
         QStringLiteral("HOST"), QStringLiteral("127.0.0.1")},
        {QStringLiteral("port"), QStringLiteral("Port (0: any free one)."), QStringLiteral("PORT"),
         QStringLiteral("8080")},
        {QStringLiteral("api-key"),
         QStringLiteral("Key clients must send as 'Authorization: Bearer KEY' on /v1/ routes "
                        "(default: $MTDESK_API_KEY)."),
         QStringLiteral("KEY")},
        {QStringLiteral("max-body-bytes"), QStringLiteral("Largest request body accepted."),
         QStringLiteral("N"), QStringLiteral("1048576")},
        {QStringLiteral("max-prompt-tokens"),
         QStringLiteral("Longest chat prompt accepted, in tokens (0: the model's context less "
                        "one). /v1/translate cuts its text to fit instead."),
         QStringLiteral("N"), QStringLiteral("0")},
        {QStringLiteral("max-tokens"),
         QStringLiteral("Most tokens of one answer: a request asking for more, or for "
                        "none, is cut there."),
         QStringLiteral("N"), QStringLiteral("1024")},
        {QStringLiteral("threads"),
         QStringLiteral("Requests answered at once (0: from the engine's batch)."),
         QStringLiteral("N"), QStringLiteral("0")},
        {QStringLiteral("quiet"), QStringLiteral("No line per request on stderr.")},
    });
    p.addOptions(engine_options());
    if (!p.parse(args)) {
        std::fprintf(stderr, "mtdesk serve: %s\n", qPrintable(p.errorText()));
        return 2;
    }
    if (p.isSet(QStringLiteral("help"))) {
        std::fputs(qPrintable(command_help(p, QStringLiteral("serve"))), stdout);
        return 0;
    }
    if (!p.positionalArguments().isEmpty()) {
        std::fputs("mtdesk serve: takes no arguments besides options (see --help)\n", stderr);
        return 2;
    }

    serve::ServerOptions o;
    o.host = p.value(QStringLiteral("host")).toStdString();
    o.port = static_cast<int>(number_option(p, "port", 0, 65535));
    o.api_key = p.isSet(QStringLiteral("api-key"))
                    ? p.value(QStringLiteral("api-key")).toStdString()
                    : qEnvironmentVariable("MTDESK_API_KEY").toStdString();
    o.max_body_bytes = static_cast<std::size_t>(number_option(p, "max-body-bytes", 1, 1ll << 32));
    o.limits.max_prompt_tokens =
        static_cast<int>(number_option(p, "max-prompt-tokens", 0, 1 << 30));
    o.limits.max_tokens = static_cast<int>(number_option(p, "max-tokens", 1, 1 << 30));
    o.threads = static_cast<int>(number_option(p, "threads", 0, 4096));
    o.log_requests = !p.isSet(QStringLiteral("quiet"));
    if (!serve::is_loopback_host(o.host) && o.api_key.empty()) {
        std::fprintf(stderr,
                     "mtdesk serve: refusing to listen on %s without an API key: anyone who "
                     "can reach it could use this machine's model. Give --api-key KEY (or set "
                     "MTDESK_API_KEY), or listen on 127.0.0.1.\n",
                     o.host.c_str());
        return 2;
    }

    const std::string model_dir = p.isSet(QStringLiteral("model"))
                                      ? p.value(QStringLiteral("model")).toStdString()
                                      : app::default_model_dir();
    o.model_name =
        p.isSet(QStringLiteral("served-model-name"))
            ? p.value(QStringLiteral("served-model-name")).toStdString()
            : QDir(QDir::cleanPath(QDir(QString::fromStdString(model_dir)).absolutePath()))
                  .dirName()
                  .toStdString();

    // A write to a client that has gone must fail with EPIPE, not end the server.
    signal(SIGPIPE, SIG_IGN);
    SignalWatcher stop_on_signal;
    std::unique_ptr<TranslationEngine> engine = open_engine(p, model_dir);
    note_assumed_chat_template(engine->translator(), model_dir);
    serve::HttpServer server(*engine, o);
    const int port = server.bind();
    stop_on_signal.watch(&server);

    const EngineStatistics stats = engine->statistics();
    const bool v6 = o.host.find(':') != std::string::npos && o.host.front() != '[';
    std::fprintf(stderr, "mtdesk serve: model %s (%s) on %s, %s\n", o.model_name.c_str(),
                 model_dir.c_str(), stats.device.c_str(), stats.tier.c_str());
    if (!serve::is_loopback_host(o.host))
        std::fprintf(stderr,
                     "mtdesk serve: note: plain HTTP; the API key and the texts cross the "
                     "network unencrypted unless a TLS proxy is in front\n");
    std::printf("listening on http://%s%s%s:%d\n", v6 ? "[" : "", o.host.c_str(), v6 ? "]" : "",
                port);
    std::fflush(stdout);
    server.serve();
    stop_on_signal.watch(nullptr);
    std::fprintf(stderr, "mtdesk serve: stopped\n");
    return 0;
}

}  // namespace mtdesk::app
