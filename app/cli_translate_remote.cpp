#include "cli_translate_remote.h"

#include <QEventLoop>
#include <QTemporaryDir>
#include <QTimer>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "cli_commands.h"
#include "job_queue.h"
#include "mtdesk/error.h"
#include "mtdesk/translate/translation_engine.h"
#include "progress_bar.h"
#include "remote/connection_test.h"
#include "remote/remote_engine.h"
#include "stdin_translation.h"

namespace mtdesk::app {
namespace {

constexpr int kProgressMs = 200;
// Longest wait for a server's model list (or --timeout when shorter).
constexpr int kModelListTimeoutMs = 10000;

std::string utf8(const QString& s) {
    return s.toStdString();
}

// The files through the document job queue, one row each, until every row has ended.
int translate_files(std::shared_ptr<TranslationEngine> engine, const QStringList& files,
                    const PromptRequest& request, const Glossary& glossary,
                    const TranslateOptions& options) {
    QTemporaryDir state;  // the queue's saved rows: this run only
    if (!state.isValid())
        throw Error("cannot create a temporary directory for the job queue: " +
                    utf8(state.errorString()));
    JobQueue queue(state.path());
    DocumentOptions d;
    d.sampling = options.sampling;
    d.max_new_tokens = options.max_new_tokens;
    d.casing_guard = options.casing_guard;
    if (!glossary.empty()) d.glossary = std::make_shared<const Glossary>(glossary);
    queue.setOptions(d);
    const QString from =
        request.source ? QString::fromUtf8(request.source->code.data(),
                                           static_cast<qsizetype>(request.source->code.size()))
                       : QString();
    const QString to = QString::fromUtf8(request.target->code.data(),
                                         static_cast<qsizetype>(request.target->code.size()));
    queue.addPaths(files, from, to);
    queue.setEngine(engine);

    ProgressBar bar(stderr, isatty(fileno(stderr)) != 0);
    const QList<DocumentJob> rows = queue.jobs();
    bar.start(rows.size() == 1 ? utf8(rows.front().source_path)
                               : std::to_string(rows.size()) + " documents",
              0);
    QEventLoop loop;
    QTimer tick;
    tick.setInterval(kProgressMs);
    auto check = [&] {
        std::size_t done = 0, total = 0;
        for (const DocumentJob& row : queue.jobs()) {
            done += static_cast<std::size_t>(row.segments_done);
            total += static_cast<std::size_t>(row.segments_total);
        }
        bar.update(done, total);
        if (queue.pendingCount() == 0) loop.quit();
    };
    QObject::connect(&tick, &QTimer::timeout, &loop, check);
    QObject::connect(&queue, &JobQueue::jobChanged, &loop, check);
    tick.start();
    if (queue.pendingCount() > 0) loop.exec();
    bar.finish();

    int failures = 0;
    for (const DocumentJob& row : queue.jobs()) {
        if (row.state == JobState::Done) {
            std::fprintf(stderr, "%s -> %s (%d segment%s, %s)\n", qPrintable(row.source_path),
                         qPrintable(row.output_path), row.segments_total,
                         row.segments_total == 1 ? "" : "s",
                         format_duration(static_cast<double>(row.elapsed_ms) / 1000.0).c_str());
            report_document_checks(row.source_path, row.placeholder_issues, row.placeholder_notes,
                                   row.marked_for_review);
        } else {
            std::fprintf(stderr, "mtdesk: %s\n", qPrintable(row.error));
            ++failures;
        }
    }
    queue.setEngine(nullptr);
    return failures ? 1 : 0;
}

}  // namespace

QList<QCommandLineOption> remote_translate_options() {
    return {
        {QStringLiteral("server"),
         QStringLiteral("Translate with an OpenAI-compatible server (vLLM, SGLang, TensorRT-LLM, "
                        "mtdesk serve) at this base URL instead of a model on this computer, "
                        "e.g. http://gpu1:8000. Repeat it for several servers: requests are "
                        "spread over them, and one that fails is left aside while the others "
                        "go on."),
         QStringLiteral("URL")},
        {QStringLiteral("api-key"),
         QStringLiteral("API key for the servers (default: $MTDESK_API_KEY)."),
         QStringLiteral("KEY")},
        {QStringLiteral("remote-model"),
         QStringLiteral("The servers' model name (default: the first model they list)."),
         QStringLiteral("NAME")},
        {QStringLiteral("concurrency"), QStringLiteral("Requests in flight per server."),
         QStringLiteral("N"), QStringLiteral("4")},
        {QStringLiteral("timeout"),
         QStringLiteral("Seconds a server may stay silent within an answer (an answer may take "
                        "four times as long altogether; a model list at most 10 s)."),
         QStringLiteral("S"), QStringLiteral("120")},
        {QStringLiteral("ca-cert"),
         QStringLiteral("PEM certificates to trust for https servers (default: the system's)."),
         QStringLiteral("FILE")},
    };
}

int translate_through_servers(const QCommandLineParser& p, const PromptRequest& request,
                              const Glossary& glossary, const TranslateOptions& options,
                              std::optional<PromptStyle> style) {
    if (p.isSet(QStringLiteral("model")))
        throw UsageError(
            "--model and --server exclude each other (--remote-model names the model "
            "on the servers)");
    remote::RemoteOptions o;
    for (const QString& url : p.values(QStringLiteral("server")))
        o.servers.push_back(utf8(url));
    o.api_key = p.isSet(QStringLiteral("api-key")) ? utf8(p.value(QStringLiteral("api-key")))
                                                   : utf8(qEnvironmentVariable("MTDESK_API_KEY"));
    bool ok = false;
    o.concurrency = p.value(QStringLiteral("concurrency")).toInt(&ok);
    if (!ok || o.concurrency < 1 || o.concurrency > 256)
        throw UsageError("--concurrency needs a number from 1 to 256, got '" +
                         utf8(p.value(QStringLiteral("concurrency"))) + "'");
    const double timeout = p.value(QStringLiteral("timeout")).toDouble(&ok);
    // inf would overflow the milliseconds below.
    if (!ok || !(timeout > 0) || !std::isfinite(timeout))
        throw UsageError("--timeout needs a positive number of seconds, got '" +
                         utf8(p.value(QStringLiteral("timeout"))) + "'");
    o.read_timeout = std::chrono::milliseconds(static_cast<long long>(timeout * 1000));
    o.ca_file = utf8(p.value(QStringLiteral("ca-cert")));
    o.prompt_style = style;
    o.model = utf8(p.value(QStringLiteral("remote-model")));
    o.on_notice = [](const std::string& message) {
        std::fprintf(stderr, "mtdesk: %s\n", message.c_str());
    };
    if (o.model.empty()) {
        // Asked of all servers at once, each within a short time: one server that never
        // answers must not hold the others up for a whole --timeout.
        o.probe_timeout = std::min(o.read_timeout, std::chrono::milliseconds(kModelListTimeoutMs));
        remote::HttpSettings http;
        http.api_key = o.api_key;
        http.connect_timeout = std::min(o.connect_timeout, o.probe_timeout);
        http.read_timeout = o.probe_timeout;
        http.ca_file = o.ca_file;
        const std::vector<remote::ServerCheck> checks = remote::check_servers(o.servers, http);
        const auto model = remote::first_model(checks);
        if (!model) {
            std::string why;
            bool answered = false;  // a server that answers with no model: --remote-model helps
            for (const remote::ServerCheck& c : checks) {
                answered = answered || c.error.empty();
                why += (why.empty() ? "" : "; ") + c.url + ": " +
                       (c.error.empty() ? "lists no model" : c.error);
            }
            if (!answered) throw Error("no server answered (" + why + ")");
            throw Error("no server lists a model (" + why + "); name it with --remote-model");
        }
        o.model = *model;
        // A server that has not answered gets segments once it does (the engine asks again).
        for (std::size_t i = 0; i < checks.size(); ++i) {
            if (checks[i].error.empty()) continue;
            o.unverified.push_back(i);
            std::fprintf(stderr, "mtdesk: %s: %s; the other servers go on without it for now\n",
                         checks[i].url.c_str(), checks[i].error.c_str());
        }
    }
    std::shared_ptr<TranslationEngine> engine = remote::make_remote_engine(o);
    const QStringList files = p.positionalArguments();
    if (files.isEmpty()) {
        StdinTranslation what{request, &glossary, options, {}};
        // The servers' model is unknown here: no trained pairs to check, only the language.
        if (!request.source)
            what.on_first_text = [&](std::string_view text) {
                warn_about_source({}, nullptr, *request.target, text, "stdin");
            };
        return translate_stdin(*engine, what);
    }
    return translate_files(engine, files, request, glossary, options);
}

}  // namespace mtdesk::app
