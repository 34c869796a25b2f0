// The CPU TranslationEngine: same translations as the Translator itself, every job answered
// exactly once (done, cancelled while queued or running, failed, or dropped at shutdown).

#include <QTest>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "mtdesk/runtime/latency_window.h"
#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/translation_engine.h"

using namespace mtdesk;

namespace {

const char* kDemo = MTDESK_DEMO_MODEL_DIR;

TranslationJob job(const std::string& text, const char* to, int max_tokens = 256) {
    TranslationJob j;
    j.request.text = text;
    j.request.source = find_language("en");
    j.request.target = find_language(to);
    j.options.sampling = SamplingParams::greedy_decoding();
    j.options.max_new_tokens = max_tokens;
    return j;
}

/// Collects outcomes by job id and lets a test wait for a count of them.
struct Outcomes {
    std::mutex m;
    std::condition_variable cv;
    std::map<uint64_t, std::vector<JobOutcome>> by_id;
    std::map<uint64_t, std::string> streamed;
    int count = 0;

    JobCallbacks callbacks(const uint64_t* id) {
        JobCallbacks c;
        c.on_text = [this, id](std::string_view piece) {
            std::lock_guard lock(m);
            streamed[*id] += piece;
        };
        c.on_done = [this, id](const JobOutcome& o) {
            std::lock_guard lock(m);
            by_id[*id].push_back(o);
            ++count;
            cv.notify_all();
        };
        return c;
    }
    /// Submits with the lock held, so that callbacks (which read *id under the same lock) see
    /// the id even when the engine answers before submit() returns (a job that fails at once).
    void submit(TranslationEngine& engine, TranslationJob j, uint64_t* id) {
        std::lock_guard lock(m);
        *id = engine.submit(std::move(j), callbacks(id));
    }
    bool wait_for(int n, int seconds = 120) {
        std::unique_lock lock(m);
        return cv.wait_for(lock, std::chrono::seconds(seconds), [&] { return count >= n; });
    }
};

}  // namespace

class TestTranslationEngine : public QObject {
    Q_OBJECT

  private slots:
    void sameAsTranslator() {
        auto reference = Translator::open_cpu(kDemo);
        auto engine = make_cpu_engine(Translator::open_cpu(kDemo));
        QCOMPARE(engine->max_in_flight(), 1);
        QVERIFY(engine->translator() != nullptr);

        const std::vector<std::pair<std::string, const char*>> inputs = {
            {"Open the file", "zh"},
            {"Could not connect to the server.", "de"},
            {"Save changes before closing?", "fr"}};
        Outcomes out;
        std::vector<uint64_t> ids(inputs.size());
        // The id is only known after submit returns; callbacks read it through a pointer
        // (Outcomes::submit holds the lock they take until it is set).
        for (size_t i = 0; i < inputs.size(); ++i)
            out.submit(*engine, job(inputs[i].first, inputs[i].second), &ids[i]);
        QVERIFY(out.wait_for(3));
        for (size_t i = 0; i < inputs.size(); ++i) {
            const TranslationJob j = job(inputs[i].first, inputs[i].second);
            const std::string expected = reference->translate(j.request, j.options).text;
            std::lock_guard lock(out.m);
            QCOMPARE(out.by_id[ids[i]].size(), size_t(1));
            const JobOutcome& o = out.by_id[ids[i]][0];
            QCOMPARE(o.status, JobOutcome::Status::Done);
            QCOMPARE(o.text, expected);
            QVERIFY(o.prompt_tokens > 0);
            QVERIFY(o.generated_tokens > 0);
            QVERIFY(o.total_ms >= o.ttft_ms);
            QVERIFY(!out.streamed[ids[i]].empty());
        }
        const EngineStatistics stats = engine->statistics();
        QCOMPARE(stats.finished, uint64_t(3));
        QCOMPARE(stats.queue_depth, 0);
        // Percentiles over the three requests: nearest rank, so p50 is the middle TTFT and p95
        // the largest; decode speed from the requests with two tokens or more.
        std::vector<double> ttft, speed;
        {
            std::lock_guard lock(out.m);
            for (uint64_t id : ids) {
                const JobOutcome& o = out.by_id[id][0];
                ttft.push_back(o.ttft_ms);
                if (o.generated_tokens >= 2)
                    speed.push_back((o.generated_tokens - 1) / ((o.total_ms - o.ttft_ms) / 1e3));
            }
        }
        std::sort(ttft.begin(), ttft.end());
        std::sort(speed.begin(), speed.end());
        QVERIFY(stats.ttft_p50_ms && stats.ttft_p95_ms);
        QCOMPARE(*stats.ttft_p50_ms, ttft[1]);
        QCOMPARE(*stats.ttft_p95_ms, ttft[2]);
        QVERIFY(!speed.empty() && stats.tokens_per_s_p95);
        QCOMPARE(*stats.tokens_per_s_p95, speed.back());
    }

    // An answer cut at max_new_tokens says so; one that ended by itself does not.
    void reachedLimit() {
        auto engine = make_cpu_engine(Translator::open_cpu(kDemo));
        Outcomes out;
        uint64_t whole = 0, cut = 0;
        out.submit(*engine, job("Could not connect to the server.", "de"), &whole);
        out.submit(*engine, job("Could not connect to the server.", "de", 1), &cut);
        QVERIFY(out.wait_for(2));
        std::lock_guard lock(out.m);
        QVERIFY(!out.by_id[whole].at(0).reached_limit);
        QVERIFY(out.by_id[whole].at(0).generated_tokens > 1);
        QVERIFY(out.by_id[cut].at(0).reached_limit);
        QCOMPARE(out.by_id[cut].at(0).generated_tokens, 1);
    }

    // Nearest-rank percentiles over a window of the most recent requests; cancelled, failed
    // and token-less requests are not counted.
    void latencyWindow() {
        QVERIFY(!LatencyWindow::percentile({}, 0.5));
        QCOMPARE(*LatencyWindow::percentile({5, 1, 4, 2, 3}, 0.5), 3.0);
        QCOMPARE(*LatencyWindow::percentile({5, 1, 4, 2, 3}, 0.95), 5.0);
        QCOMPARE(*LatencyWindow::percentile({5, 1, 4, 2, 3}, 0.2), 1.0);
        QCOMPARE(*LatencyWindow::percentile({5, 1, 4, 2, 3}, 0.21), 2.0);
        LatencyWindow w(2);
        EngineStatistics s;
        w.fill(s);
        QVERIFY(!s.ttft_p50_ms && !s.tokens_per_s_p50);
        auto done = [](double ttft, int tokens, double total) {
            JobOutcome o;
            o.ttft_ms = ttft;
            o.generated_tokens = tokens;
            o.total_ms = total;
            return o;
        };
        w.add(done(100, 11, 1100));  // 10 tokens in 1 s
        w.add(done(10, 1, 10));      // one token: TTFT only
        JobOutcome cancelled = done(1, 5, 2);
        cancelled.status = JobOutcome::Status::Cancelled;
        w.add(cancelled);
        w.add(done(30, 0, 30));  // no token: not counted
        w.fill(s);
        QCOMPARE(*s.ttft_p50_ms, 10.0);
        QCOMPARE(*s.ttft_p95_ms, 100.0);
        QCOMPARE(*s.tokens_per_s_p50, 10.0);
        w.add(done(20, 3, 220));  // the window keeps 2: drops TTFT 100
        w.fill(s);
        QCOMPARE(*s.ttft_p95_ms, 20.0);
        QCOMPARE(*s.tokens_per_s_p95, 10.0);
    }

    void cancelQueuedAndRunning() {
        auto engine = make_cpu_engine(Translator::open_cpu(kDemo));
        Outcomes out;
        // A long job to keep the worker busy, then two queued behind it.
        std::string long_text;
        for (int i = 0; i < 12; ++i)
            long_text += "Could not connect to the server. ";
        uint64_t a = 0, b = 0, c = 0;
        out.submit(*engine, job(long_text, "de", 400), &a);
        out.submit(*engine, job("Open the file", "zh"), &b);
        out.submit(*engine, job("Close the window", "zh"), &c);
        engine->cancel(b);  // queued: ends at once
        {
            std::lock_guard lock(out.m);
            QCOMPARE(out.by_id[b].size(), size_t(1));
            QCOMPARE(out.by_id[b][0].status, JobOutcome::Status::Cancelled);
        }
        // Wait until the long job streams, then cancel it mid-way.
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                std::lock_guard lock(out.m);
                return !out.streamed[a].empty();
            }(),
            60000);
        engine->cancel(a);
        QVERIFY(out.wait_for(3));
        std::lock_guard lock(out.m);
        QCOMPARE(out.by_id[a].size(), size_t(1));
        QCOMPARE(out.by_id[a][0].status, JobOutcome::Status::Cancelled);
        QCOMPARE(out.by_id[c].size(), size_t(1));
        QCOMPARE(out.by_id[c][0].status, JobOutcome::Status::Done);
        QVERIFY(!out.by_id[c][0].text.empty());
        engine->cancel(c);  // finished: ignored
        engine->cancel(12345);
    }

    void failedJobIsAnsweredNotThrown() {
        auto engine = make_cpu_engine(Translator::open_cpu(kDemo));
        Outcomes out;
        uint64_t id = 0;
        TranslationJob j = job("Open the file", "zh");
        j.request.target = nullptr;
        out.submit(*engine, std::move(j), &id);
        QVERIFY(out.wait_for(1));
        std::lock_guard lock(out.m);
        QCOMPARE(out.by_id[id][0].status, JobOutcome::Status::Failed);
        QVERIFY(!out.by_id[id][0].error.empty());
    }

    void shutdownAnswersEveryJob() {
        Outcomes out;
        std::vector<uint64_t> ids(5);
        {
            auto engine = make_cpu_engine(Translator::open_cpu(kDemo));
            for (auto& id : ids)
                out.submit(*engine, job("Open the file", "ja"), &id);
        }  // destroyed with jobs queued
        QCOMPARE(out.count, 5);
        for (uint64_t id : ids)
            QCOMPARE(out.by_id[id].size(), size_t(1));
    }
};

QTEST_GUILESS_MAIN(TestTranslationEngine)
#include "test_translation_engine.moc"
