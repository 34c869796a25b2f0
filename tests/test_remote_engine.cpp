// The remote engine against scripted servers in this process (remote_fake_server.h): what it
// sends (the local engine's prompt, the sampling, the API key), streaming to on_text, the
// output clean-up, requests spread over servers within their concurrency, a failing server
// left aside while its requests go elsewhere (a 500, a stream cut off, an error event, a
// silent server past the read timeout) without text given twice, refusals that fail a job at
// once naming every server, cancellation of queued, waiting and streaming jobs, shutdown with
// jobs in flight, TLS with a certificate trusted through a CA file or not, and the connection
// test. The same engine against real `mtdesk serve` processes: test_remote_serve.cpp.

#include <QElapsedTimer>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mtdesk/error.h"
#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/translation_engine.h"
#include "remote/connection_test.h"
#include "remote/remote_engine.h"
#include "remote_fake_server.h"

using namespace mtdesk;
using namespace mtdesk::remote;
using mtdesk::test::FakeReply;
using mtdesk::test::FakeServer;
using namespace std::chrono_literals;

namespace {

constexpr int kTimeout = 20000;

/// Collects what an engine reports for the jobs submitted through it.
class Jobs {
  public:
    uint64_t submit(TranslationEngine& engine, const std::string& text, const char* to = "de",
                    int max_tokens = 1024) {
        TranslationJob job;
        job.request.text = text;
        job.request.source = find_language("en");
        job.request.target = find_language(to);
        job.options.sampling = SamplingParams::greedy_decoding();
        job.options.casing_guard = false;
        job.options.max_new_tokens = max_tokens;
        const int index = next_++;
        JobCallbacks cb;
        cb.on_text = [this, index](std::string_view piece) {
            std::lock_guard lock(m_);
            streamed_[index] += piece;
        };
        cb.on_done = [this, index](const JobOutcome& o) {
            std::lock_guard lock(m_);
            ++done_count_[index];
            outcomes_[index] = o;
        };
        const uint64_t id = engine.submit(std::move(job), std::move(cb));
        ids_[index] = id;
        return id;
    }
    int finished() const {
        std::lock_guard lock(m_);
        return static_cast<int>(outcomes_.size());
    }
    JobOutcome outcome(int index) const {
        std::lock_guard lock(m_);
        return outcomes_.at(index);
    }
    std::string streamed(int index) const {
        std::lock_guard lock(m_);
        auto it = streamed_.find(index);
        return it == streamed_.end() ? std::string() : it->second;
    }
    /// Every job's on_done came exactly once.
    bool eachOnce() const {
        std::lock_guard lock(m_);
        for (const auto& [index, n] : done_count_)
            if (n != 1) return false;
        return static_cast<int>(done_count_.size()) == next_;
    }
    uint64_t id(int index) const { return ids_.at(index); }

  private:
    mutable std::mutex m_;
    int next_ = 0;
    std::map<int, uint64_t> ids_;
    std::map<int, std::string> streamed_;
    std::map<int, JobOutcome> outcomes_;
    std::map<int, int> done_count_;
};

/// The lines an engine's on_notice was called with.
class Notices {
  public:
    std::function<void(const std::string&)> sink() {
        return [this](const std::string& line) {
            std::lock_guard lock(m_);
            lines_.push_back(line);
        };
    }
    /// Whether a line has every one of `parts`.
    bool any(const std::vector<std::string>& parts) const {
        std::lock_guard lock(m_);
        return std::any_of(lines_.begin(), lines_.end(), [&](const std::string& l) {
            return std::all_of(parts.begin(), parts.end(),
                               [&](const std::string& p) { return l.find(p) != l.npos; });
        });
    }
    std::string all() const {
        std::lock_guard lock(m_);
        std::string out;
        for (const std::string& l : lines_)
            out += l + "\n";
        return out;
    }

  private:
    mutable std::mutex m_;
    std::vector<std::string> lines_;
};

RemoteOptions options(const std::vector<std::string>& servers, int concurrency = 2) {
    RemoteOptions o;
    o.servers = servers;
    o.model = "fake-model";
    o.concurrency = concurrency;
    o.connect_timeout = 2s;
    o.read_timeout = 5s;
    o.first_rest = 200ms;
    o.max_rest = 1s;
    return o;
}

FakeServer::Script ok_script(int piece_delay_ms = 0) {
    return [piece_delay_ms](const nlohmann::json&, int) {
        FakeReply r;
        r.piece_delay_ms = piece_delay_ms;
        return r;
    };
}

// A port on loopback that nothing listens on: bound without listening, then released.
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

}  // namespace

class TestRemoteEngine : public QObject {
    Q_OBJECT

  private slots:
    void rejectsBadOptions() {
        QVERIFY_THROWS_EXCEPTION(Error, make_remote_engine(options({})));
        RemoteOptions o = options({"http://127.0.0.1:1"});
        o.model.clear();
        QVERIFY_THROWS_EXCEPTION(Error, make_remote_engine(o));
        o = options({"http://127.0.0.1:1", "ftp://x"});
        try {
            make_remote_engine(o);
            QFAIL("a bad URL was accepted");
        } catch (const Error& e) {
            QVERIFY2(std::string(e.what()).find("ftp://x") != std::string::npos, e.what());
        }
        QCOMPARE(make_remote_engine(options({"a:1", "b:2", "c:3"}, 5))->max_in_flight(), 15);
    }

    void streamsOneJob() {
        FakeServer server(ok_script(20));
        QVERIFY(server.valid());
        server.requireKey("sekrit");
        RemoteOptions o = options({server.url()});
        o.api_key = "sekrit";
        auto engine = make_remote_engine(o);
        QVERIFY(engine->translator() == nullptr);
        Jobs jobs;
        jobs.submit(*engine, "Open the file.");
        QTRY_COMPARE_WITH_TIMEOUT(jobs.finished(), 1, kTimeout);
        const JobOutcome out = jobs.outcome(0);
        QCOMPARE(int(out.status), int(JobOutcome::Status::Done));
        QCOMPARE(out.text, std::string("OPEN THE FILE."));
        // Streamed in pieces, concatenating to the raw answer.
        QCOMPARE(jobs.streamed(0), std::string("OPEN THE FILE."));
        QCOMPARE(out.prompt_tokens, 11);  // from the usage chunk
        QCOMPARE(out.generated_tokens, 3);
        QVERIFY(out.ttft_ms > 0 && out.total_ms >= out.ttft_ms + 30);  // two piece delays
        // What was sent: the model, the prompt the local engine builds, greedy, the key.
        const nlohmann::json req = server.requests().at(0);
        QCOMPARE(req["model"].get<std::string>(), std::string("fake-model"));
        PromptRequest r;
        r.text = "Open the file.";
        r.source = find_language("en");
        r.target = find_language("de");
        QCOMPARE(req["messages"][0]["content"].get<std::string>(),
                 build_translation_prompt(r, PromptStyle::HyMt15));
        QCOMPARE(req["temperature"].get<double>(), 0.0);
        QVERIFY(req["stream"].get<bool>());
        QCOMPARE(server.authorizations().at(0), std::string("Bearer sekrit"));
        const EngineStatistics s = engine->statistics();
        QCOMPARE(QString::fromStdString(s.device),
                 QStringLiteral("1 server: 127.0.0.1:%1").arg(server.port()));
        QCOMPARE(s.tier, std::string("remote: fake-model"));
        QCOMPARE(s.finished, uint64_t{1});
        QCOMPARE(s.running, 0);
        QVERIFY(s.remote && s.remote->latency_p50_ms && *s.remote->latency_p50_ms > 0);
        QVERIFY(s.remote->tokens_per_s && *s.remote->tokens_per_s > 0);
        QCOMPARE(s.remote->servers_available, 1);
        QVERIFY(s.ttft_p50_ms && *s.ttft_p50_ms > 0);  // per job, as the local engines report
    }

    void cleansOutput() {
        // A whole (non-streamed) answer, padded with whitespace: cleaned as locally, and the
        // casing guard restores the source's casing of a brand name.
        FakeServer server([](const nlohmann::json&, int) {
            FakeReply r;
            r.stream = false;
            return r;
        });
        auto engine = make_remote_engine(options({server.url()}));
        TranslationJob job;
        job.request.text = "open GitHub";
        job.request.target = find_language("de");
        job.options.casing_guard = true;
        std::promise<JobOutcome> done;
        JobCallbacks cb;
        cb.on_done = [&](const JobOutcome& o) { done.set_value(o); };
        engine->submit(job, cb);
        auto f = done.get_future();
        QVERIFY(f.wait_for(std::chrono::milliseconds(kTimeout)) == std::future_status::ready);
        const JobOutcome o = f.get();
        QCOMPARE(int(o.status), int(JobOutcome::Status::Done));
        QCOMPARE(o.text, std::string("OPEN GitHub"));  // "  OPEN GITHUB\n" cleaned and guarded
    }

    void spreadsWithinConcurrency() {
        FakeServer a(ok_script(60)), b(ok_script(60));
        auto engine = make_remote_engine(options({a.url(), b.url()}, 3));
        QCOMPARE(engine->max_in_flight(), 6);
        Jobs jobs;
        for (int i = 0; i < 18; ++i)
            jobs.submit(*engine, "line " + std::to_string(i));
        // While they run: never more than 3 at once on a server, both servers busy.
        QTRY_VERIFY_WITH_TIMEOUT(engine->statistics().running == 6, kTimeout);
        QTRY_COMPARE_WITH_TIMEOUT(jobs.finished(), 18, kTimeout);
        QVERIFY(jobs.eachOnce());
        QCOMPARE(a.mostConcurrent(), 3);
        QCOMPARE(b.mostConcurrent(), 3);
        QCOMPARE(a.chatCalls() + b.chatCalls(), 18);
        QVERIFY(a.chatCalls() >= 6 && b.chatCalls() >= 6);
        for (int i = 0; i < 18; ++i)
            QCOMPARE(jobs.outcome(i).text, "LINE " + std::to_string(i));
    }

    void retriesElsewhere_data() {
        QTest::addColumn<int>("status");
        QTest::addColumn<int>("cutAfter");
        QTest::addColumn<bool>("errorEvent");
        QTest::addColumn<int>("delayMs");
        QTest::addColumn<QString>("expected");  // in the failing server's error
        QTest::addColumn<QString>("absent");    // not in it: says which thing happened
        QTest::newRow("500") << 500 << -1 << false << 0 << "HTTP 500"
                             << "connection";
        QTest::newRow("503") << 503 << -1 << false << 0 << "HTTP 503"
                             << "connection";
        QTest::newRow("429") << 429 << -1 << false << 0 << "HTTP 429"
                             << "connection";
        QTest::newRow("stream cut off") << 200 << 2 << false << 0 << "closed by the server"
                                        << "nothing received";
        QTest::newRow("error event") << 200 << -1 << true << 0 << "engine crashed"
                                     << "connection";
        QTest::newRow("silent past the read timeout")
            << 200 << -1 << false << 3000 << "nothing received for 1 s"
            << "closed";
    }
    void retriesElsewhere() {
        QFETCH(int, status);
        QFETCH(int, cutAfter);
        QFETCH(bool, errorEvent);
        QFETCH(int, delayMs);
        QFETCH(QString, expected);
        QFETCH(QString, absent);
        FakeServer bad([=](const nlohmann::json&, int) {
            FakeReply r;
            r.status = status;
            r.body = R"({"error":{"message":"overloaded"}})";
            r.cut_after = cutAfter;
            r.error_event = errorEvent;
            r.delay_ms = delayMs;
            return r;
        });
        FakeServer good(ok_script());
        RemoteOptions o = options({bad.url(), good.url()});
        o.read_timeout = 1s;
        Notices notices;
        o.on_notice = notices.sink();
        auto engine = make_remote_engine(o);
        Jobs jobs;
        for (int i = 0; i < 8; ++i)
            jobs.submit(*engine, "segment " + std::to_string(i));
        QTRY_COMPARE_WITH_TIMEOUT(jobs.finished(), 8, kTimeout);
        QVERIFY(jobs.eachOnce());
        for (int i = 0; i < 8; ++i) {
            const JobOutcome out = jobs.outcome(i);
            QCOMPARE(int(out.status), int(JobOutcome::Status::Done));
            QCOMPARE(out.text, "SEGMENT " + std::to_string(i));
            // Text given to on_text once, even when the failed attempt had streamed part of it.
            QCOMPARE(jobs.streamed(i), out.text);
        }
        QVERIFY(bad.chatCalls() >= 1);
        QCOMPARE(good.chatCalls(), 8);
        const EngineStatistics s = engine->statistics();
        QVERIFY(s.remote->retried >= 1);
        QCOMPARE(s.remote->failed, uint64_t{0});
        // The failing server rested: far fewer requests went to it than the eight jobs.
        QVERIFY2(bad.chatCalls() <= 4, qPrintable(QString::number(bad.chatCalls())));
        // And the user is told which server failed, and how.
        QVERIFY2(notices.any({bad.url(), expected.toStdString()}), notices.all().c_str());
        QVERIFY2(!notices.any({good.url()}), notices.all().c_str());

        // Alone, the failing server fails the job, and the message says what went wrong.
        RemoteOptions alone = options({bad.url()});
        alone.read_timeout = 1s;
        alone.attempts_per_server = 1;
        auto single = make_remote_engine(alone);
        Jobs one;
        one.submit(*single, "segment");
        QTRY_COMPARE_WITH_TIMEOUT(one.finished(), 1, kTimeout);
        QCOMPARE(int(one.outcome(0).status), int(JobOutcome::Status::Failed));
        const QString error = QString::fromStdString(one.outcome(0).error);
        QVERIFY2(error.startsWith(QStringLiteral("the server could not translate the segment: ") +
                                  QString::fromStdString(bad.url()) + ": "),
                 qPrintable(error));
        QVERIFY2(error.contains(expected), qPrintable(error));
        QVERIFY2(!error.contains(absent), qPrintable(error));
    }

    // A server that has not answered its model list gets no request until it does, while the
    // others translate; then it gets its share.
    void unverifiedServerWaitsForItsModelList() {
        FakeServer late(ok_script(10)), ready(ok_script(10));
        late.holdModels(true);
        RemoteOptions o = options({late.url(), ready.url()}, 1);
        o.unverified = {0};
        o.probe_timeout = 300ms;
        o.first_rest = 100ms;
        o.max_rest = 200ms;
        Notices notices;
        o.on_notice = notices.sink();
        auto engine = make_remote_engine(o);
        Jobs jobs;
        for (int i = 0; i < 6; ++i)
            jobs.submit(*engine, "before " + std::to_string(i));
        QTRY_COMPARE_WITH_TIMEOUT(jobs.finished(), 6, kTimeout);
        QCOMPARE(late.chatCalls(), 0);
        QCOMPARE(ready.chatCalls(), 6);
        QTRY_VERIFY_WITH_TIMEOUT(late.modelsCalls() >= 2, kTimeout);  // asked again, and again
        for (int i = 0; i < 6; ++i)
            QCOMPARE(int(jobs.outcome(i).status), int(JobOutcome::Status::Done));
        late.holdModels(false);
        QTRY_VERIFY_WITH_TIMEOUT(notices.any({late.url(), "answers now"}), kTimeout);
        for (int i = 6; i < 14; ++i)
            jobs.submit(*engine, "after " + std::to_string(i));
        QTRY_COMPARE_WITH_TIMEOUT(jobs.finished(), 14, kTimeout);
        QVERIFY(late.chatCalls() >= 1);
        QVERIFY_THROWS_EXCEPTION(Error, [] {
            RemoteOptions none = options({"http://127.0.0.1:1"});
            none.unverified = {0};
            make_remote_engine(none);
        }());
    }

    // A server that never answers (it accepts connections and stays silent): each request to
    // it ends after the read timeout and goes to another server, the message says so.
    void silentServer() {
        mtdesk::test::SilentServer silent;
        FakeServer good(ok_script());
        RemoteOptions o = options({silent.url(), good.url()}, 1);
        o.read_timeout = 500ms;
        Notices notices;
        o.on_notice = notices.sink();
        auto engine = make_remote_engine(o);
        Jobs jobs;
        QElapsedTimer t;
        t.start();
        for (int i = 0; i < 2; ++i)
            jobs.submit(*engine, "line " + std::to_string(i));
        QTRY_COMPARE_WITH_TIMEOUT(jobs.finished(), 2, kTimeout);
        QVERIFY2(t.elapsed() < 3000, qPrintable(QString::number(t.elapsed())));
        for (int i = 0; i < 2; ++i)
            QCOMPARE(jobs.outcome(i).text, "LINE " + std::to_string(i));
        QVERIFY2(notices.any({silent.url(), "nothing received for 0.5 s"}), notices.all().c_str());
    }

    // A server that trickles text without end: cut at the tokens asked for (the answer marked
    // as reaching the limit), and abandoned after the deadline when that would take longer.
    void tricklingServer() {
        FakeServer trickle([](const nlohmann::json&, int) {
            FakeReply r;
            r.trickle_ms = 20;
            return r;
        });
        auto engine = make_remote_engine(options({trickle.url()}));
        Jobs jobs;
        jobs.submit(*engine, "segment", "de", 5);
        QTRY_COMPARE_WITH_TIMEOUT(jobs.finished(), 1, kTimeout);
        JobOutcome out = jobs.outcome(0);
        QCOMPARE(int(out.status), int(JobOutcome::Status::Done));
        QCOMPARE(out.text, std::string("XXXXX"));
        QVERIFY(out.reached_limit);
        QCOMPARE(out.generated_tokens, 5);
        QTRY_COMPARE_WITH_TIMEOUT(trickle.abandoned(), 1, kTimeout);  // the client hung up

        // One piece every 200 ms for the 60 tokens asked for would take 12 s: past 4 × the
        // read timeout of 300 ms, the request is abandoned and sent to the other server.
        FakeServer slow([](const nlohmann::json&, int) {
            FakeReply r;
            r.trickle_ms = 200;
            return r;
        });
        FakeServer good(ok_script());
        RemoteOptions o = options({slow.url(), good.url()}, 1);
        o.read_timeout = 300ms;
        Notices notices;
        o.on_notice = notices.sink();
        auto two = make_remote_engine(o);
        Jobs more;
        QElapsedTimer t;
        t.start();
        more.submit(*two, "segment");
        more.submit(*two, "another");
        QTRY_COMPARE_WITH_TIMEOUT(more.finished(), 2, kTimeout);
        QVERIFY2(t.elapsed() < 5000, qPrintable(QString::number(t.elapsed())));
        QCOMPARE(more.outcome(0).text, std::string("SEGMENT"));
        QCOMPARE(more.outcome(1).text, std::string("ANOTHER"));
        QVERIFY(!more.outcome(0).reached_limit);
        QVERIFY2(notices.any({slow.url(), "no complete answer within 1.2 s"}),
                 notices.all().c_str());
    }

    // A server's finish_reason "length" marks the answer as reaching the limit, streamed or not.
    void finishReasonLength() {
        for (const bool stream : {true, false}) {
            FakeServer server([stream](const nlohmann::json&, int) {
                FakeReply r;
                r.stream = stream;
                r.finish_reason = "length";
                return r;
            });
            auto engine = make_remote_engine(options({server.url()}));
            Jobs jobs;
            jobs.submit(*engine, "cut");
            QTRY_COMPARE_WITH_TIMEOUT(jobs.finished(), 1, kTimeout);
            QCOMPARE(jobs.outcome(0).text, std::string("CUT"));
            QVERIFY(jobs.outcome(0).reached_limit);
        }
    }

    void failsNamingEveryServer_data() {
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("message");
        QTest::addColumn<int>("callsEach");  // requests each server gets before the job fails
        QTest::newRow("400: refused at once") << 400 << "HTTP 400 Bad Request: overloaded" << 1;
        QTest::newRow("404: refused at once") << 404 << "HTTP 404 Not Found: overloaded" << 1;
        QTest::newRow("500: retried, then failed")
            << 500 << "HTTP 500 Internal Server Error: overloaded" << 3;
    }
    void failsNamingEveryServer() {
        QFETCH(int, status);
        QFETCH(QString, message);
        QFETCH(int, callsEach);
        auto script = [status](const nlohmann::json&, int) {
            FakeReply r;
            r.status = status;
            r.body = R"({"error":{"message":"overloaded"}})";
            return r;
        };
        FakeServer a(script), b(script);
        auto engine = make_remote_engine(options({a.url(), b.url()}, 1));
        Jobs jobs;
        jobs.submit(*engine, "one");
        QTRY_COMPARE_WITH_TIMEOUT(jobs.finished(), 1, kTimeout);
        const JobOutcome out = jobs.outcome(0);
        QCOMPARE(int(out.status), int(JobOutcome::Status::Failed));
        const QString error = QString::fromStdString(out.error);
        QVERIFY2(error.contains(QString::fromStdString(a.url()) + ": " + message),
                 qPrintable(error));
        QVERIFY2(error.contains(QString::fromStdString(b.url()) + ": " + message),
                 qPrintable(error));
        QCOMPARE(a.chatCalls(), callsEach);
        QCOMPARE(b.chatCalls(), callsEach);
        QCOMPARE(engine->statistics().remote->failed, uint64_t{1});
    }

    void unreachable() {
        const std::string url = "http://127.0.0.1:" + std::to_string(free_port());
        auto engine = make_remote_engine(options({url}));
        Jobs jobs;
        QElapsedTimer t;
        t.start();
        jobs.submit(*engine, "one");
        QTRY_COMPARE_WITH_TIMEOUT(jobs.finished(), 1, kTimeout);
        const JobOutcome out = jobs.outcome(0);
        QCOMPARE(int(out.status), int(JobOutcome::Status::Failed));
        QVERIFY2(out.error.find(url + ": cannot connect") != std::string::npos, out.error.c_str());
        // Three tries with rests of 200 and 400 ms between them: not at once, not for long.
        QVERIFY2(t.elapsed() >= 550 && t.elapsed() < 5000,
                 qPrintable(QString::number(t.elapsed())));
    }

    void allDownFailsEveryJobSoon() {
        // Sixteen jobs on two dead servers: a failure seen by one job counts for the others
        // waiting for the same server, so none needs a rest period of its own per attempt; and
        // once the servers have failed three times in a row, later jobs fail at once.
        const std::string one = "http://127.0.0.1:" + std::to_string(free_port());
        const std::string two = "http://127.0.0.1:" + std::to_string(free_port());
        auto engine = make_remote_engine(options({one, two}, 4));
        Jobs jobs;
        QElapsedTimer t;
        t.start();
        for (int i = 0; i < 16; ++i)
            jobs.submit(*engine, "job " + std::to_string(i));
        QTRY_COMPARE_WITH_TIMEOUT(jobs.finished(), 16, kTimeout);
        // Three rounds with rests of 200 and 400 ms for the first eight, then at once.
        QVERIFY2(t.elapsed() < 2000, qPrintable(QString::number(t.elapsed())));
        QVERIFY(jobs.eachOnce());
        for (int i = 0; i < 16; ++i) {
            const JobOutcome out = jobs.outcome(i);
            QCOMPARE(int(out.status), int(JobOutcome::Status::Failed));
            QVERIFY2(out.error.find(one + ": cannot connect") != std::string::npos &&
                         out.error.find(two + ": cannot connect") != std::string::npos,
                     out.error.c_str());
        }
        QCOMPARE(engine->statistics().remote->failed, uint64_t{16});
        QCOMPARE(engine->statistics().remote->servers_available, 0);
    }

    void serverComesBack() {
        auto server = std::make_unique<FakeServer>(ok_script());
        const int port = server->port();
        auto engine = make_remote_engine(options({server->url()}));
        auto translate = [&](const std::string& text) {
            auto done = std::make_shared<std::promise<JobOutcome>>();
            TranslationJob job;
            job.request.text = text;
            job.request.target = find_language("de");
            JobCallbacks cb;
            cb.on_done = [done](const JobOutcome& o) { done->set_value(o); };
            engine->submit(job, cb);
            return done->get_future().get();
        };
        QCOMPARE(translate("before").text, std::string("BEFORE"));
        server.reset();  // gone: jobs fail, and once it is down, at once
        QCOMPARE(int(translate("gone").status), int(JobOutcome::Status::Failed));
        QElapsedTimer t;
        t.start();
        QCOMPARE(int(translate("still gone").status), int(JobOutcome::Status::Failed));
        QVERIFY2(t.elapsed() < 300, qPrintable(QString::number(t.elapsed())));
        // Back on the same port: after its rest the next job probes it and gets through.
        server = std::make_unique<FakeServer>(ok_script(), std::string(), std::string(), port);
        QVERIFY(server->valid());
        QTRY_VERIFY_WITH_TIMEOUT(translate("back").status == JobOutcome::Status::Done, kTimeout);
        QCOMPARE(translate("again").text, std::string("AGAIN"));
        QCOMPARE(engine->statistics().remote->servers_available, 1);
    }

    void cancelQueuedWaitingAndStreaming() {
        // One slot: the first job streams slowly, the second waits in the queue.
        FakeServer server([](const nlohmann::json&, int call) {
            FakeReply r;
            r.delay_ms = call == 0 ? 0 : 4000;  // the third job's answer never starts in time
            r.piece_delay_ms = 4000;
            return r;
        });
        auto engine = make_remote_engine(options({server.url()}, 1));
        Jobs jobs;
        jobs.submit(*engine, "streaming");
        QTRY_VERIFY_WITH_TIMEOUT(!jobs.streamed(0).empty(), kTimeout);  // the first piece came
        jobs.submit(*engine, "queued");
        QCOMPARE(engine->statistics().queue_depth, 1);
        QElapsedTimer t;
        t.start();
        engine->cancel(jobs.id(1));  // queued: ends at once, on this thread
        QCOMPARE(jobs.finished(), 1);
        QCOMPARE(int(jobs.outcome(1).status), int(JobOutcome::Status::Cancelled));
        engine->cancel(jobs.id(0));  // streaming: the connection is closed
        QTRY_COMPARE_WITH_TIMEOUT(jobs.finished(), 2, kTimeout);
        QVERIFY2(t.elapsed() < 1500, qPrintable(QString::number(t.elapsed())));
        const JobOutcome first = jobs.outcome(0);
        QCOMPARE(int(first.status), int(JobOutcome::Status::Cancelled));
        QCOMPARE(first.text, jobs.streamed(0));  // what had come so far
        // Waiting for the status line: cancelled as promptly.
        jobs.submit(*engine, "waiting");
        QTRY_COMPARE_WITH_TIMEOUT(server.chatCalls(), 2, kTimeout);
        t.restart();
        engine->cancel(jobs.id(2));
        QTRY_COMPARE_WITH_TIMEOUT(jobs.finished(), 3, kTimeout);
        QVERIFY2(t.elapsed() < 1500, qPrintable(QString::number(t.elapsed())));
        QCOMPARE(int(jobs.outcome(2).status), int(JobOutcome::Status::Cancelled));
        QVERIFY(jobs.eachOnce());
        const EngineStatistics s = engine->statistics();
        QCOMPARE(s.running, 0);
        QCOMPARE(s.queue_depth, 0);
        QCOMPARE(s.remote->failed, uint64_t{0});
        // Unknown and finished ids are ignored.
        engine->cancel(jobs.id(0));
        engine->cancel(9999);
    }

    void shutdownWithJobsInFlight() {
        FakeServer server(ok_script(3000));
        Jobs jobs;
        {
            auto engine = make_remote_engine(options({server.url()}, 2));
            for (int i = 0; i < 5; ++i)
                jobs.submit(*engine, "job " + std::to_string(i));
            QTRY_COMPARE_WITH_TIMEOUT(engine->statistics().running, 2, kTimeout);
            QElapsedTimer t;
            t.start();
            engine.reset();
            QVERIFY2(t.elapsed() < 2000, qPrintable(QString::number(t.elapsed())));
        }
        QCOMPARE(jobs.finished(), 5);
        QVERIFY(jobs.eachOnce());
        for (int i = 0; i < 5; ++i)
            QCOMPARE(int(jobs.outcome(i).status), int(JobOutcome::Status::Cancelled));
        QTRY_COMPARE_WITH_TIMEOUT(server.abandoned(), 2, kTimeout);
    }

    void tls() {
        const QString openssl = QStandardPaths::findExecutable(QStringLiteral("openssl"));
        if (openssl.isEmpty()) QSKIP("no openssl command to make a certificate");
        QTemporaryDir dir;
        const QString cert = dir.filePath(QStringLiteral("cert.pem"));
        const QString key = dir.filePath(QStringLiteral("key.pem"));
        QProcess p;
        p.start(openssl,
                {"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                 "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1",
                 "-addext", "subjectAltName=IP:127.0.0.1"});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 0);
        FakeServer server(ok_script(), cert.toStdString(), key.toStdString());
        QVERIFY(server.valid());
        // Trusted through the CA file: translated over TLS.
        RemoteOptions o = options({server.url("https")});
        o.ca_file = cert.toStdString();
        auto engine = make_remote_engine(o);
        Jobs jobs;
        jobs.submit(*engine, "secret text");
        QTRY_COMPARE_WITH_TIMEOUT(jobs.finished(), 1, kTimeout);
        QCOMPARE(int(jobs.outcome(0).status), int(JobOutcome::Status::Done));
        QCOMPARE(jobs.outcome(0).text, std::string("SECRET TEXT"));
        // Not trusted (the system's store does not know it): a clear failure.
        RemoteOptions untrusted = options({server.url("https")});
        untrusted.attempts_per_server = 1;
        auto strict = make_remote_engine(untrusted);
        Jobs more;
        more.submit(*strict, "secret text");
        QTRY_COMPARE_WITH_TIMEOUT(more.finished(), 1, kTimeout);
        QCOMPARE(int(more.outcome(0).status), int(JobOutcome::Status::Failed));
        QVERIFY2(more.outcome(0).error.find("certificate") != std::string::npos,
                 more.outcome(0).error.c_str());
        // Plain HTTP to the TLS port: a clear failure too, not a hang.
        auto plain = make_remote_engine(options({server.url("http")}));
        Jobs plainJobs;
        plainJobs.submit(*plain, "x");
        QTRY_COMPARE_WITH_TIMEOUT(plainJobs.finished(), 1, kTimeout);
        QCOMPARE(int(plainJobs.outcome(0).status), int(JobOutcome::Status::Failed));
    }

    void connectionTest() {
        FakeServer good(ok_script());
        FakeServer locked(ok_script());
        locked.requireKey("right");
        const std::string nowhere = "http://127.0.0.1:" + std::to_string(free_port());
        HttpSettings http;
        http.api_key = "wrong";
        http.connect_timeout = 2s;
        const std::vector<ServerCheck> checks =
            check_servers({good.url() + "/v1", locked.url(), nowhere, "bad url://"}, http);
        QCOMPARE(checks.size(), std::size_t{4});
        QVERIFY2(checks[0].error.empty(), checks[0].error.c_str());
        QCOMPARE(checks[0].models, (std::vector<std::string>{"fake-model", "fake-lora"}));
        QVERIFY(checks[0].latency_ms > 0 && checks[0].latency_ms < 5000);
        QCOMPARE(checks[0].url, good.url() + "/v1");
        QCOMPARE(checks[1].error, std::string("HTTP 401 Unauthorized: invalid API key"));
        QVERIFY(checks[1].models.empty());
        QVERIFY2(checks[2].error.find("cannot connect") != std::string::npos,
                 checks[2].error.c_str());
        QVERIFY2(checks[3].error.find("bad url://") != std::string::npos, checks[3].error.c_str());
        QCOMPARE(*first_model(checks), std::string("fake-model"));
        QVERIFY(!first_model({checks[1], checks[2]}));
        QCOMPARE(good.authorizations().at(0), std::string("Bearer wrong"));
    }
};

QTEST_GUILESS_MAIN(TestRemoteEngine)
#include "test_remote_engine.moc"
