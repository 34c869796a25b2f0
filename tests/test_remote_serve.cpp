// The remote engine against real `mtdesk serve` processes on loopback, with the bundled demo
// model (greedy, deterministic): a document job of the job queue spread over two servers, one
// of which is killed in the middle, finishes with every segment translated once and the same
// output as the local engine; a stream cancelled in the middle ends at once and the server
// sees the client go; a queue row cancelled mid-document stops its requests; unreachable
// servers and a wrong API key fail the row with a message naming the server and what it said;
// `mtdesk translate --server` gives the local command's output.

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "documents/document.h"
#include "job_queue.h"
#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/translation_engine.h"
#include "mtdesk/translate/translator.h"
#include "remote/connection_test.h"
#include "remote/remote_engine.h"
#include "remote_fake_server.h"
#include "remote_serve_process.h"

using namespace mtdesk;
using namespace mtdesk::app;
using mtdesk::test::ServeProcess;
using namespace std::chrono_literals;

namespace {

const char* kDemo = MTDESK_DEMO_MODEL_DIR;
const QString kBinary = QStringLiteral(MTDESK_BINARY_DIR "/app/mtdesk");
constexpr int kTimeout = 120000;

// The demo model's greedy translation of one segment, on this computer.
std::string reference(const std::string& text, const char* from, const char* to) {
    static std::unique_ptr<Translator> translator = Translator::open_cpu(kDemo);
    static std::map<std::string, std::string> cache;
    const std::string key = std::string(from) + "|" + to + "|" + text;
    if (auto it = cache.find(key); it != cache.end()) return it->second;
    PromptRequest request;
    request.text = text;
    request.source = find_language(from);
    request.target = find_language(to);
    TranslateOptions options;
    options.sampling = SamplingParams::greedy_decoding();
    return cache[key] = translator->translate(request, options).text;
}

// What the local engine makes of the document: the format's output for the reference
// translations.
QByteArray expected_output(const QString& path, const char* from, const char* to) {
    const documents::DocumentFormat* format = nullptr;
    documents::Document doc = documents::read_document(path, &format);
    doc.target_language = to;
    std::vector<std::string> translations;
    for (const std::string& s : doc.segments)
        translations.push_back(reference(s, from, to));
    return format->write(doc, translations);
}

QByteArray read_bytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool write_bytes(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

// Interface strings the demo model translates well, made distinct by a number, so that every
// line is a request of its own.
QByteArray numbered_document(int lines) {
    static const char* kLines[] = {
        "Open the file.",      "Save your changes.",         "Close the window.",
        "Print the document.", "The file was deleted.",      "Download complete.",
        "Settings saved.",     "Check for updates.",         "Select a language.",
        "The disk is full.",   "Restart the computer.",      "Show hidden files.",
        "Copy the link.",      "Delete the selected files?", "Network error.",
    };
    QByteArray out;
    for (int i = 0; i < lines; ++i) {
        out += QByteArray(kLines[i % 15]);
        if (i >= 15) out += " " + QByteArray::number(i / 15 + 1);
        out += "\n";
        if (i % 7 == 3) out += "\n";  // blank lines must survive
    }
    return out;
}

// A port on loopback that nothing listens on.
int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
        port = ntohs(addr.sin_port);
    ::close(fd);
    return port;
}

// GET /health of a server, parsed; null when it does not answer.
nlohmann::json health(int port) {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(5, 0);
    const auto r = c.Get("/health");
    if (!r || r->status != 200) return nullptr;
    return nlohmann::json::parse(r->body, nullptr, false);
}

remote::RemoteOptions remote_options(const std::vector<std::string>& servers, int concurrency = 2) {
    remote::RemoteOptions o;
    o.servers = servers;
    o.model = "mtdesk-demo";
    o.concurrency = concurrency;
    o.connect_timeout = 2s;
    o.read_timeout = 30s;
    o.first_rest = 200ms;
    o.max_rest = 2s;
    return o;
}

/// The remote engine, counting what the queue submits and how each job ends.
class CountingEngine : public TranslationEngine {
  public:
    explicit CountingEngine(std::shared_ptr<TranslationEngine> inner) : inner_(std::move(inner)) {}
    uint64_t submit(TranslationJob job, JobCallbacks callbacks) override {
        const std::string text = job.request.text;
        {
            std::lock_guard lock(f_->m);
            f_->submitted.push_back(text);
        }
        auto done = std::move(callbacks.on_done);
        callbacks.on_done = [f = f_, text, done](const JobOutcome& o) {
            {
                std::lock_guard lock(f->m);
                f->ends[text].push_back(o.status);
            }
            done(o);
        };
        return inner_->submit(std::move(job), std::move(callbacks));
    }
    void cancel(uint64_t id) override { inner_->cancel(id); }
    int max_in_flight() const override { return inner_->max_in_flight(); }
    EngineStatistics statistics() const override { return inner_->statistics(); }
    const Translator* translator() const noexcept override { return inner_->translator(); }

    std::vector<std::string> submitted() const {
        std::lock_guard lock(f_->m);
        return f_->submitted;
    }
    std::map<std::string, std::vector<JobOutcome::Status>> ends() const {
        std::lock_guard lock(f_->m);
        return f_->ends;
    }

  private:
    struct Figures {
        std::mutex m;
        std::vector<std::string> submitted;
        std::map<std::string, std::vector<JobOutcome::Status>> ends;
    };
    std::shared_ptr<TranslationEngine> inner_;
    std::shared_ptr<Figures> f_ = std::make_shared<Figures>();
};

DocumentOptions greedy() {
    DocumentOptions o;
    o.sampling = SamplingParams::greedy_decoding();
    return o;
}

bool finished(const JobQueue& q) {
    return q.pendingCount() == 0;
}

}  // namespace

class TestRemoteServe : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(QFile::exists(kBinary));
    }

    // (a) Two servers, one killed while the document is being translated.
    void documentSurvivesAServerGoingAway() {
        ServeProcess a, b;
        QVERIFY2(a.ok(), qPrintable(a.error()));
        QVERIFY2(b.ok(), qPrintable(b.error()));
        QTemporaryDir dir, state;
        const QString path = dir.filePath(QStringLiteral("strings.txt"));
        const int lines = 40;
        QVERIFY(write_bytes(path, numbered_document(lines)));
        const QByteArray expected = expected_output(path, "en", "de");

        auto remote = std::shared_ptr<TranslationEngine>(
            remote::make_remote_engine(remote_options({a.url(), b.url()})));
        auto engine = std::make_shared<CountingEngine>(remote);
        JobQueue q(state.path());
        q.setOptions(greedy());
        q.setEngine(engine);
        const quint64 id = q.addPaths({path}, QStringLiteral("en"), QStringLiteral("de")).value(0);
        QVERIFY(id);
        // Some segments done by both servers, then the first one goes away mid-job.
        QTRY_VERIFY_WITH_TIMEOUT(q.job(id)->segments_done >= 8, kTimeout);
        const nlohmann::json before = health(a.port());
        QVERIFY(!before.is_null());
        QVERIFY2(before["finished"].get<int>() >= 1, before.dump().c_str());
        QVERIFY(q.job(id)->segments_done < lines);
        const nlohmann::json b_before = health(b.port());
        a.kill();
        QTRY_VERIFY_WITH_TIMEOUT(finished(q), kTimeout);

        const DocumentJob row = *q.job(id);
        QVERIFY2(row.state == JobState::Done, qPrintable(row.error));
        QCOMPARE(row.segments_done, lines);
        QCOMPARE(read_bytes(row.output_path), expected);
        // Every segment went to the engine once and ended Done once: retries stayed inside it.
        const std::vector<std::string> submitted = engine->submitted();
        QCOMPARE(int(submitted.size()), lines);
        QCOMPARE(int(std::set<std::string>(submitted.begin(), submitted.end()).size()), lines);
        for (const auto& [text, ends] : engine->ends())
            QVERIFY2(ends == std::vector<JobOutcome::Status>{JobOutcome::Status::Done},
                     text.c_str());
        // Requests in flight on the killed server were sent again to the other one, which now
        // is the only one answering.
        const EngineStatistics s = remote->statistics();
        QVERIFY2(s.remote->retried >= 1, qPrintable(QString::number(s.remote->retried)));
        QCOMPARE(s.remote->failed, uint64_t{0});
        QCOMPARE(s.remote->servers, 2);
        // The second server carried on after the first went away. (The first server's own
        // count at the kill cannot be read without a race: it may finish more segments after
        // its last /health.)
        const nlohmann::json after = health(b.port());
        QVERIFY2(after["finished"].get<int>() > b_before["finished"].get<int>(),
                 after.dump().c_str());
        QVERIFY(health(a.port()).is_null());
    }

    // (b) A stream cancelled in the middle; a row cancelled in the middle of its document.
    void cancellation() {
        ServeProcess server;
        QVERIFY2(server.ok(), qPrintable(server.error()));
        auto engine = remote::make_remote_engine(remote_options({server.url()}, 1));
        // A long segment: many tokens to stream.
        std::string text;
        for (int i = 0; i < 12; ++i)
            text += "Open the file and save your changes before you close the window. ";
        TranslationJob job;
        job.request.text = text;
        job.request.source = find_language("en");
        job.request.target = find_language("de");
        job.options.sampling = SamplingParams::greedy_decoding();
        struct State {
            std::mutex m;
            std::string streamed;
            std::optional<JobOutcome> outcome;
            int done = 0;
        };
        auto st = std::make_shared<State>();
        JobCallbacks cb;
        cb.on_text = [st](std::string_view piece) {
            std::lock_guard lock(st->m);
            st->streamed += piece;
        };
        cb.on_done = [st](const JobOutcome& o) {
            std::lock_guard lock(st->m);
            st->outcome = o;
            ++st->done;
        };
        const uint64_t id = engine->submit(job, cb);
        auto streamed = [&] {
            std::lock_guard lock(st->m);
            return st->streamed.size();
        };
        QTRY_VERIFY_WITH_TIMEOUT(streamed() > 0, kTimeout);
        const int disconnects = health(server.port())["disconnects"].get<int>();
        QElapsedTimer t;
        t.start();
        engine->cancel(id);
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                std::lock_guard lock(st->m);
                return st->outcome.has_value();
            }(),
            kTimeout);
        QVERIFY2(t.elapsed() < 2000, qPrintable(QString::number(t.elapsed())));
        {
            std::lock_guard lock(st->m);
            QCOMPARE(int(st->outcome->status), int(JobOutcome::Status::Cancelled));
            QCOMPARE(st->outcome->text, st->streamed);
            QCOMPARE(st->done, 1);
            // Stopped early: the whole translation is far longer than what had come.
            QVERIFY(st->streamed.size() < reference(text, "en", "de").size());
        }
        // The server saw the client go (and cancelled the generation), and answers the next.
        QTRY_VERIFY_WITH_TIMEOUT(health(server.port())["disconnects"].get<int>() == disconnects + 1,
                                 kTimeout);
        QTRY_COMPARE_WITH_TIMEOUT(health(server.port())["running"].get<int>(), 0, kTimeout);
        QCOMPARE(engine->statistics().running, 0);

        // A queue row cancelled after a few segments: Cancelled, its requests stopped.
        QTemporaryDir dir, state;
        const QString path = dir.filePath(QStringLiteral("long.txt"));
        QVERIFY(write_bytes(path, numbered_document(60)));
        std::shared_ptr<TranslationEngine> shared = std::move(engine);
        JobQueue q(state.path());
        q.setOptions(greedy());
        q.setEngine(shared);
        const quint64 row = q.addPaths({path}, QStringLiteral("en"), QStringLiteral("de")).value(0);
        QTRY_VERIFY_WITH_TIMEOUT(q.job(row)->segments_done >= 2, kTimeout);
        q.cancel(row);
        QCOMPARE(q.job(row)->state, JobState::Cancelled);
        QTRY_COMPARE_WITH_TIMEOUT(shared->statistics().running, 0, kTimeout);
        QCOMPARE(shared->statistics().queue_depth, 0);
        QVERIFY(q.job(row)->segments_done < 60);
        QVERIFY(q.job(row)->output_path.isEmpty());
    }

    // (c) No server reachable: the row fails, naming every URL and what went wrong.
    void unreachableServers() {
        QTemporaryDir dir, state;
        const QString path = dir.filePath(QStringLiteral("a.txt"));
        QVERIFY(write_bytes(path, numbered_document(5)));
        const std::string one = "http://127.0.0.1:" + std::to_string(free_port());
        const std::string two = "http://127.0.0.1:" + std::to_string(free_port());
        std::shared_ptr<TranslationEngine> engine =
            remote::make_remote_engine(remote_options({one, two}));
        JobQueue q(state.path());
        q.setOptions(greedy());
        q.setEngine(engine);
        const quint64 id = q.addPaths({path}, QStringLiteral("en"), QStringLiteral("de")).value(0);
        QTRY_VERIFY_WITH_TIMEOUT(finished(q), kTimeout);
        const DocumentJob row = *q.job(id);
        QCOMPARE(row.state, JobState::Failed);
        QVERIFY2(row.error.startsWith(path + QStringLiteral(": a segment could not be translated: "
                                                            "no server could translate the "
                                                            "segment: ")),
                 qPrintable(row.error));
        for (const std::string& url : {one, two})
            QVERIFY2(row.error.contains(QString::fromStdString(url + ": cannot connect")),
                     qPrintable(row.error));
        QVERIFY(row.output_path.isEmpty());

        // The command line says the same and exits with 1.
        QProcess p;
        p.start(kBinary, {"translate", "--to", "de", "--from", "en", "--server",
                          QString::fromStdString(one), "--remote-model", "mtdesk-demo", path});
        QVERIFY(p.waitForFinished(kTimeout));
        QCOMPARE(p.exitCode(), 1);
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(err.contains(QString::fromStdString(one) + ": cannot connect"), qPrintable(err));
        QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("a.de.txt"))));
        // Without --remote-model: the servers are asked for their models, and the message
        // says none answered rather than that a model name would help.
        p.start(kBinary,
                {"translate", "--to", "de", "--from", "en", "--server", QString::fromStdString(one),
                 "--server", QString::fromStdString(two), path});
        QVERIFY(p.waitForFinished(kTimeout));
        QCOMPARE(p.exitCode(), 1);
        const QString err2 = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(err2.contains(QStringLiteral("no server answered")) &&
                     err2.contains(QString::fromStdString(two) + ": cannot connect") &&
                     !err2.contains(QStringLiteral("--remote-model")),
                 qPrintable(err2));
    }

    // (d) A wrong API key: refused with the server's own message; the right one works.
    void wrongApiKey() {
        ServeProcess server({QStringLiteral("--api-key"), QStringLiteral("right-key")});
        QVERIFY2(server.ok(), qPrintable(server.error()));
        QTemporaryDir dir, state;
        const QString path = dir.filePath(QStringLiteral("a.txt"));
        QVERIFY(write_bytes(path, numbered_document(3)));
        remote::RemoteOptions o = remote_options({server.url()});
        o.api_key = "wrong-key";
        std::shared_ptr<TranslationEngine> wrong = remote::make_remote_engine(o);
        JobQueue q(state.path());
        q.setOptions(greedy());
        q.setEngine(wrong);
        const quint64 id = q.addPaths({path}, QStringLiteral("en"), QStringLiteral("de")).value(0);
        QTRY_VERIFY_WITH_TIMEOUT(finished(q), kTimeout);
        DocumentJob row = *q.job(id);
        QCOMPARE(row.state, JobState::Failed);
        QVERIFY2(row.error.contains(server.qurl() + QStringLiteral(": HTTP 401 Unauthorized: ")),
                 qPrintable(row.error));
        QVERIFY2(row.error.contains(QStringLiteral("API key")), qPrintable(row.error));
        // Refused, not retried: one request per segment tried at most.
        QCOMPARE(wrong->statistics().remote->retried, uint64_t{0});

        // The connection test says the same before any job.
        remote::HttpSettings http;
        http.api_key = "wrong-key";
        const auto checks = remote::check_servers({server.url()}, http);
        QVERIFY2(checks[0].error.starts_with("HTTP 401 Unauthorized"), checks[0].error.c_str());
        http.api_key = "right-key";
        const auto good = remote::check_servers({server.url()}, http);
        QVERIFY2(good[0].error.empty(), good[0].error.c_str());
        QCOMPARE(good[0].models, std::vector<std::string>{"mtdesk-demo"});

        // With the right key the same row, retried, is translated.
        o.api_key = "right-key";
        q.setEngine(remote::make_remote_engine(o));
        q.retry(id);
        QTRY_VERIFY_WITH_TIMEOUT(finished(q), kTimeout);
        row = *q.job(id);
        QVERIFY2(row.state == JobState::Done, qPrintable(row.error));
        QCOMPARE(read_bytes(row.output_path), expected_output(path, "en", "de"));
    }

    // A server that accepts connections and never answers, first in the list: the model lists
    // are asked for at once within --timeout, the silent server gets no segment and is named
    // on stderr, and the other translates everything.
    void commandLineWithASilentServer() {
        mtdesk::test::SilentServer silent;
        ServeProcess good;
        QVERIFY2(good.ok(), qPrintable(good.error()));
        const QByteArray input = "Open the file\nSave changes before closing?\n";
        QProcess p;
        p.start(kBinary,
                {"translate", "--to", "de", "--from", "en", "--greedy", "--timeout", "2",
                 "--server", QString::fromStdString(silent.url()), "--server", good.qurl()});
        p.write(input);
        p.closeWriteChannel();
        QVERIFY(p.waitForFinished(kTimeout));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QCOMPARE(p.exitCode(), 0);
        QCOMPARE(p.readAllStandardOutput(),
                 QByteArray::fromStdString(reference("Open the file", "en", "de") + "\n" +
                                           reference("Save changes before closing?", "en", "de") +
                                           "\n"));
        QVERIFY2(err.contains(QString::fromStdString(silent.url()) +
                              QStringLiteral(": nothing received for 2 s")),
                 qPrintable(err));
        for (const std::string& line : silent.requests())
            QVERIFY2(line.find("/chat/completions") == std::string::npos, line.c_str());
        QVERIFY(!silent.requests().empty());  // its model list was asked for
    }

    // A server whose --max-tokens is below what mtdesk's client asks for: the answer is cut
    // there (finish_reason "length"), and the client reports it as reaching the limit.
    void serverWithALowerTokenLimit() {
        ServeProcess server({QStringLiteral("--max-tokens"), QStringLiteral("3")});
        QVERIFY2(server.ok(), qPrintable(server.error()));
        httplib::Client c("127.0.0.1", server.port());
        c.set_read_timeout(60, 0);
        const nlohmann::json body = {
            {"messages",
             {{{"role", "user"},
               {"content",
                "Translate the following segment into German, without additional "
                "explanation.\n\nWhen selected, the touchpad will be disabled when the "
                "keyboard is being used"}}}},
            {"max_tokens", 60},
            {"temperature", 0}};
        const auto r = c.Post("/v1/chat/completions", body.dump(), "application/json");
        QVERIFY(r);
        QCOMPARE(r->status, 200);
        const nlohmann::json answer = nlohmann::json::parse(r->body);
        QCOMPARE(answer["choices"][0]["finish_reason"].get<std::string>(), std::string("length"));
        QCOMPARE(answer["usage"]["completion_tokens"].get<int>(), 3);

        auto engine = remote::make_remote_engine(remote_options({server.url()}));
        TranslationJob job;
        job.request.text = "When selected, the touchpad will be disabled when the keyboard is used";
        job.request.source = find_language("en");
        job.request.target = find_language("de");
        job.options.sampling = SamplingParams::greedy_decoding();
        job.options.max_new_tokens = 60;
        auto done = std::make_shared<std::promise<JobOutcome>>();
        JobCallbacks cb;
        cb.on_done = [done](const JobOutcome& o) { done->set_value(o); };
        engine->submit(job, cb);
        const JobOutcome o = done->get_future().get();
        QVERIFY2(o.status == JobOutcome::Status::Done, o.error.c_str());
        QVERIFY(o.reached_limit);
        QCOMPARE(o.generated_tokens, 3);
        QVERIFY(!o.text.empty());
    }

    // `mtdesk translate --server` on stdin and on files: the local command's output.
    void commandLine() {
        ServeProcess a, b;
        QVERIFY2(a.ok(), qPrintable(a.error()));
        QVERIFY2(b.ok(), qPrintable(b.error()));
        const QByteArray input = numbered_document(12);
        auto run = [&](const QStringList& args, const QByteArray& in) {
            QProcess p;
            p.start(kBinary, args);
            p.write(in);
            p.closeWriteChannel();
            if (!p.waitForFinished(kTimeout)) p.kill();
            return std::make_pair(p.exitCode(), p.readAllStandardOutput());
        };
        const QStringList common = {"translate", "--to", "de", "--from", "en", "--greedy"};
        const auto local = run(common, input);
        QCOMPARE(local.first, 0);
        // No --remote-model: the first model the servers list.
        const auto remote =
            run(common + QStringList{"--server", a.qurl(), "--server", b.qurl()}, input);
        QCOMPARE(remote.first, 0);
        QCOMPARE(remote.second, local.second);
        QVERIFY(remote.second.contains("Datei"));
        // stdin in Latin-1 is decoded before it goes to the server, as with a local model.
        const QString accents = QStringLiteral("Les paramètres ont été enregistrés.\n");
        const auto latin1 = run(common + QStringList{"--server", a.qurl()}, accents.toLatin1());
        const auto utf8 = run(common + QStringList{"--server", a.qurl()}, accents.toUtf8());
        QCOMPARE(latin1.first, 0);
        QCOMPARE(latin1.second, utf8.second);

        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("ui.txt"));
        QVERIFY(write_bytes(path, input));
        const auto files = run(common + QStringList{"--server", a.qurl(), path}, {});
        QCOMPARE(files.first, 0);
        QCOMPARE(read_bytes(dir.filePath(QStringLiteral("ui.de.txt"))),
                 expected_output(path, "en", "de"));
        // Without --from, text that is in the target language already gets a warning, as with
        // a local model.
        QProcess german;
        german.start(kBinary, {"translate", "--to", "de", "--greedy", "--server", a.qurl()});
        german.write(
            "Die Datei konnte nicht geöffnet werden, weil sie von einem anderen "
            "Programm verwendet wird.\n");
        german.closeWriteChannel();
        QVERIFY(german.waitForFinished(kTimeout));
        QCOMPARE(german.exitCode(), 0);
        const QByteArray warning = german.readAllStandardError();
        QVERIFY2(warning.contains("mtdesk: warning: stdin: the input already looks like German"),
                 warning.constData());
        // --model and --server exclude each other: a usage error.
        const auto both = run(common + QStringList{"--server", a.qurl(), "--model", kDemo}, input);
        QCOMPARE(both.first, 2);
    }
};

QTEST_GUILESS_MAIN(TestRemoteServe)
#include "test_remote_serve.moc"
