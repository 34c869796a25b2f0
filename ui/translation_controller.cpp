#include "translation_controller.h"

#include <QDir>
#include <QFile>
#include <QMetaObject>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <string>
#include <string_view>
#include <unordered_map>

#include "mtdesk/cuda/cuda_engine.h"
#include "mtdesk/error.h"
#include "mtdesk/quant/tiers.h"
#include "mtdesk/translate/detect.h"
#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/prompt.h"
#include "mtdesk/translate/translation_engine.h"
#include "mtdesk/translate/translator.h"
#include "remote/connection_test.h"
#include "remote/remote_engine.h"
#include "remote/server_url.h"

namespace mtdesk::ui {

qint64 process_resident_bytes() {
    // procfs files report size 0, so read them whole rather than testing atEnd().
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return 0;
    const QByteArray status = f.readAll();
    for (const QByteArray& line : status.split('\n')) {
        if (!line.startsWith("VmRSS:")) continue;
        // "VmRSS:	  123456 kB"
        const QList<QByteArray> parts = line.mid(6).simplified().split(' ');
        bool ok = false;
        const qint64 kib = parts.value(0).toLongLong(&ok);
        return ok ? kib * 1024 : 0;
    }
    return 0;
}

std::optional<double> percentile(QVector<double> values, double p) {
    if (values.isEmpty()) return std::nullopt;
    std::sort(values.begin(), values.end());
    // Nearest rank: the smallest value with at least p% of the values at or below it.
    const auto n = values.size();
    qsizetype rank = static_cast<qsizetype>(std::ceil(p / 100.0 * static_cast<double>(n)));
    rank = std::clamp<qsizetype>(rank, 1, n);
    return values[rank - 1];
}

QString detect_source_language(const QString& text) {
    const Language* l = mtdesk::detect_source_language(text.toStdString()).language;
    return l ? QString::fromUtf8(l->code.data(), static_cast<qsizetype>(l->code.size()))
             : QString();
}

namespace {

// Submits one segment to `engine` and waits on this thread for its outcome; cancels it as soon
// as `stale` turns true. `on_text` runs on the engine's thread while this one waits.
JobOutcome run_job(TranslationEngine& engine, TranslationJob job,
                   std::function<void(std::string_view)> on_text,
                   const std::function<bool()>& stale) {
    struct Wait {
        std::mutex m;
        std::condition_variable cv;
        std::optional<JobOutcome> outcome;
    };
    auto wait = std::make_shared<Wait>();
    JobCallbacks callbacks;
    callbacks.on_text = std::move(on_text);
    callbacks.on_done = [wait](const JobOutcome& outcome) {
        {
            std::lock_guard lock(wait->m);
            wait->outcome = outcome;
        }
        wait->cv.notify_all();
    };
    const uint64_t id = engine.submit(std::move(job), std::move(callbacks));
    std::unique_lock lock(wait->m);
    bool cancelled = false;
    // on_done comes exactly once, also for a cancelled job; until then on_text may still run.
    while (!wait->outcome) {
        wait->cv.wait_for(lock, std::chrono::milliseconds(10));
        if (!cancelled && !wait->outcome && stale()) {
            lock.unlock();
            engine.cancel(id);
            lock.lock();
            cancelled = true;
        }
    }
    return *wait->outcome;
}

}  // namespace

namespace {

/// The remote engine for `choice`. `model` comes in as the choice's model name; when it is empty
/// it is set to the first model the servers list (asked here, on the worker).
std::shared_ptr<TranslationEngine> make_remote(const RemoteChoice& choice, QString& model) {
    remote::RemoteOptions o;
    for (const QString& url : choice.servers)
        if (!url.trimmed().isEmpty()) o.servers.push_back(url.trimmed().toStdString());
    if (o.servers.empty()) throw Error(TranslationController::tr("No server given.").toStdString());
    o.api_key = choice.api_key.toStdString();
    o.concurrency = choice.concurrency;
    if (model.isEmpty()) {
        remote::HttpSettings http;
        http.api_key = o.api_key;
        const std::vector<remote::ServerCheck> checks = remote::check_servers(o.servers, http);
        const std::optional<std::string> first = remote::first_model(checks);
        if (!first) {
            QStringList why;
            for (const remote::ServerCheck& c : checks)
                why << QString::fromStdString(c.url + ": " + c.error);
            throw Error(TranslationController::tr("No server lists a model (%1).")
                            .arg(why.join(QStringLiteral("; ")))
                            .toStdString());
        }
        model = QString::fromStdString(*first);
    }
    o.model = model.toStdString();
    return remote::make_remote_engine(o);
}

/// The GPU a choice asks for, if there is one: "cuda:N" names it, "auto" takes the first.
std::optional<int> gpu_index(const EngineChoice& choice) {
    if (choice.device == QLatin1String("cpu")) return std::nullopt;
    const std::vector<cuda::DeviceInfo> gpus = cuda::devices();
    if (gpus.empty()) return std::nullopt;
    if (choice.device.startsWith(QLatin1String("cuda:"))) {
        bool ok = false;
        const int n = choice.device.mid(5).toInt(&ok);
        if (ok && n >= 0 && n < static_cast<int>(gpus.size())) return n;
        return std::nullopt;
    }
    return 0;
}

/// Figures of finished requests for the live panel, oldest first: typed requests (each whole)
/// and document segments.
struct Figures {
    std::mutex m;
    std::deque<double> ttft, tps;
    quint64 finished = 0;

    void add(double ttft_ms, double tokens_per_s) {
        std::lock_guard lock(m);
        ttft.push_back(ttft_ms);
        if (tokens_per_s > 0) tps.push_back(tokens_per_s);
        while (ttft.size() > static_cast<std::size_t>(TranslationController::kHistory))
            ttft.pop_front();
        while (tps.size() > static_cast<std::size_t>(TranslationController::kHistory))
            tps.pop_front();
        ++finished;
    }
};

/// The engine handed out to the document queue: the loaded engine, adding the figures of each
/// job that ends Done to the live panel's, so that it follows documents as well as typing.
/// Typed requests go to the engine underneath and are added whole by runRequest.
class RecordingEngine : public TranslationEngine {
  public:
    RecordingEngine(std::shared_ptr<TranslationEngine> inner, std::shared_ptr<Figures> figures)
        : inner_(std::move(inner)), figures_(std::move(figures)) {}

    uint64_t submit(TranslationJob job, JobCallbacks callbacks) override {
        callbacks.on_done = [figures = figures_,
                             done = std::move(callbacks.on_done)](const JobOutcome& o) {
            if (o.status == JobOutcome::Status::Done && o.generated_tokens > 0) {
                // From the job's start: a segment the queue keeps submitted to feed the batch
                // waits by design, which is no latency anyone sees.
                const double decode_ms = o.total_ms - o.ttft_ms;
                figures->add(o.ttft_ms,
                             decode_ms > 0 ? (o.generated_tokens - 1) / (decode_ms / 1000.0) : 0);
            }
            if (done) done(o);
        };
        return inner_->submit(std::move(job), std::move(callbacks));
    }
    void cancel(uint64_t id) override { inner_->cancel(id); }
    int max_in_flight() const override { return inner_->max_in_flight(); }
    EngineStatistics statistics() const override { return inner_->statistics(); }
    const Translator* translator() const noexcept override { return inner_->translator(); }

  private:
    std::shared_ptr<TranslationEngine> inner_;
    std::shared_ptr<Figures> figures_;
};

/// Translations of single lines, by language pair and text, oldest dropped first beyond a
/// bound. Valid for one engine and one set of options: the controller clears it when either
/// changes.
class LineCache {
  public:
    static constexpr std::size_t kMaxLines = 20000;

    static std::string key(const Language* source, const Language& target, std::string_view text) {
        std::string k(source ? source->code : std::string_view());
        k.append(1, '\x1f').append(target.code).append(1, '\x1f').append(text);
        return k;
    }
    const std::string* find(const std::string& key) const {
        const auto it = lines_.find(key);
        return it == lines_.end() ? nullptr : &it->second;
    }
    void insert(const std::string& key, std::string translation) {
        if (lines_.insert_or_assign(key, std::move(translation)).second) order_.push_back(key);
        while (order_.size() > kMaxLines) {
            lines_.erase(order_.front());
            order_.pop_front();
        }
    }
    void clear() {
        lines_.clear();
        order_.clear();
    }

  private:
    std::unordered_map<std::string, std::string> lines_;
    std::deque<std::string> order_;  // keys, oldest first
};

}  // namespace

struct TranslationController::Shared {
    std::mutex m;
    std::condition_variable cv;
    bool stop = false;
    std::optional<QString> load;              // a model directory to load next
    std::optional<RemoteChoice> load_remote;  // with `load`: servers instead of the directory
    quint64 load_generation = 0;     // of `load`: its engine is handed out only if still current
    std::optional<Request> pending;  // the newest request not yet taken by the worker
    bool running = false;            // the worker is translating
    TranslationOptions options;
    EngineChoice choice;
    // The loaded model's engine: set and reset by the worker; typed requests go through it, and
    // the UI thread hands it out (engine()) to the document queue.
    std::shared_ptr<TranslationEngine> engine;
    // The servers asked for last (useServers), for the live panel while no engine is up.
    std::optional<RemoteChoice> remote;

    // Read by the worker's cancellation check at every token, without the lock.
    std::atomic<quint64> newest{0};
    std::atomic<bool> abort{false};  // stop or a model load was asked for

    // Lines translated with the current engine and options: an edit sends only the lines that
    // changed. Cleared (and its generation bumped) when the engine or the options change; a
    // request uses it only within the generation it was made in.
    LineCache lines;
    quint64 lines_generation = 0;
    void clearLines() {
        lines.clear();
        ++lines_generation;
    }

    // What the live panel shows; shared with the engine handed to the document queue.
    std::shared_ptr<Figures> figures = std::make_shared<Figures>();
};

TranslationController::TranslationController(QObject* parent)
    : QObject(parent), shared_(std::make_unique<Shared>()) {
    qRegisterMetaType<mtdesk::ui::RequestStats>();
    worker_ = std::thread([this] { run(); });
}

TranslationController::~TranslationController() {
    {
        std::lock_guard lock(shared_->m);
        shared_->stop = true;
        shared_->abort = true;
    }
    shared_->cv.notify_all();
    worker_.join();
}

void TranslationController::post(std::function<void()> f) {
    QMetaObject::invokeMethod(this, std::move(f), Qt::QueuedConnection);
}

void TranslationController::setState(State s) {
    if (state_ == s) return;
    state_ = s;
    emit stateChanged(s);
}

void TranslationController::loadModel(const QString& dir) {
    const QString directory = QDir::cleanPath(QDir(dir).absolutePath());
    model_dir_ = directory;
    remote_.reset();
    remote_model_.clear();
    last_error_.clear();
    // Users of the old engine let go of it now, so that the worker frees the old model before
    // loading the new one.
    if (engine_) {
        engine_.reset();
        emit engineChanged();
    }
    {
        std::lock_guard lock(shared_->m);
        shared_->load = directory;
        shared_->load_remote.reset();
        shared_->remote.reset();
        shared_->clearLines();
        shared_->load_generation = ++load_generation_;
        shared_->abort = true;  // the running translation ends at its next token
    }
    shared_->cv.notify_all();
    setState(State::Loading);
}

void TranslationController::useServers(const RemoteChoice& servers) {
    model_dir_.clear();
    remote_ = servers;
    remote_model_ = servers.model;
    last_error_.clear();
    if (engine_) {  // as in loadModel: the document queue lets go of the old engine now
        engine_.reset();
        emit engineChanged();
    }
    {
        std::lock_guard lock(shared_->m);
        shared_->load = QString();
        shared_->load_remote = servers;
        shared_->remote = servers;
        shared_->clearLines();
        shared_->load_generation = ++load_generation_;
        shared_->abort = true;
    }
    shared_->cv.notify_all();
    setState(State::Loading);
}

quint64 TranslationController::translate(const QString& text, const QString& from,
                                         const QString& to) {
    const quint64 id = ++latest_id_;
    if (state_ == State::Failed) {
        // Nothing can translate it until another model or servers are loaded: said now rather
        // than left waiting in the queue.
        {
            std::lock_guard lock(shared_->m);
            shared_->pending.reset();
            shared_->newest = id;
        }
        post([this, id, message = tr("Not translated: %1").arg(last_error_)] {
            if (id == latest_id_) emit error(message);
        });
        return id;
    }
    {
        std::lock_guard lock(shared_->m);
        shared_->pending = Request{id, text, from, to, shared_->options, shared_->lines_generation};
        shared_->newest = id;
    }
    shared_->cv.notify_all();
    if (!busy_) {
        busy_ = true;
        emit busyChanged(true);
    }
    return id;
}

void TranslationController::cancel() {
    const quint64 id = ++latest_id_;
    {
        std::lock_guard lock(shared_->m);
        shared_->pending.reset();
        shared_->newest = id;
    }
    if (busy_) {
        busy_ = false;
        emit busyChanged(false);
    }
}

void TranslationController::setOptions(const TranslationOptions& options) {
    std::lock_guard lock(shared_->m);
    shared_->options = options;
    shared_->clearLines();  // sampling, limits, glossary: the same line may translate otherwise
}

void TranslationController::setEngineChoice(const EngineChoice& choice) {
    std::lock_guard lock(shared_->m);
    shared_->choice = choice;
    shared_->clearLines();
}

TranslationOptions TranslationController::options() const {
    std::lock_guard lock(shared_->m);
    return shared_->options;
}

QString TranslationController::modelName() const {
    if (remote_) return remote_model_;
    return model_dir_.isEmpty() ? QString() : QDir(model_dir_).dirName();
}

QString TranslationController::modelDirectory() const {
    return remote_ ? remote_->servers.join(QLatin1Char('\n')) : model_dir_;
}

bool TranslationController::busy() const {
    return busy_;
}

EngineStats TranslationController::stats() const {
    EngineStats s;
    s.device = tr("CPU");
    s.tier = tr("fp32 (CPU)");
    s.ram_bytes = process_resident_bytes();
    std::shared_ptr<TranslationEngine> engine;
    std::optional<RemoteChoice> servers;
    {
        std::lock_guard lock(shared_->m);
        engine = shared_->engine;
        servers = shared_->remote;
        s.queue_depth = shared_->pending ? 1 : 0;
    }
    if (servers && !engine) {
        // Servers chosen but not (yet) in use: them, none answering, rather than this computer.
        std::vector<std::string> labels;
        for (const QString& url : servers->servers) {
            if (url.trimmed().isEmpty()) continue;
            const auto parsed = remote::parse_server_url(url.trimmed().toStdString());
            labels.push_back(parsed ? parsed->label() : url.trimmed().toStdString());
        }
        s.device = QString::fromStdString(remote::describe_servers(labels));
        s.tier = servers->model.isEmpty() ? tr("remote: not connected")
                                          : tr("remote: %1 (not connected)").arg(servers->model);
        RemoteStatistics r;
        r.servers = static_cast<int>(labels.size());
        s.remote = r;
    }
    {
        Figures& f = *shared_->figures;
        std::lock_guard lock(f.m);
        s.ttft_history = QVector<double>(f.ttft.begin(), f.ttft.end());
        s.tps_history = QVector<double>(f.tps.begin(), f.tps.end());
        s.finished_requests = f.finished;
    }
    // The engine's queue and batch hold typed requests and document segments alike.
    if (engine) {
        const EngineStatistics e = engine->statistics();
        s.queue_depth += e.queue_depth;
        s.batch_size = e.running;
        if (e.remote) {  // the servers: their list, model and figures
            s.device = QString::fromStdString(e.device);
            s.tier = QString::fromStdString(e.tier);
            s.remote = e.remote;
        } else if (e.vram_total_bytes) {  // the GPU engine
            s.device = QString::fromStdString(e.device);
            s.tier = QString::fromStdString(e.tier);
            s.vram_used_bytes = e.vram_used_bytes;
            s.vram_total_bytes = e.vram_total_bytes;
            s.vram_own_bytes = e.vram_own_bytes;
        } else {  // the CPU engine: "int8 (CPU)", its tier first
            const QString tier = QString::fromStdString(e.tier).section(QLatin1Char(' '), 0, 0);
            if (!tier.isEmpty()) s.tier = tr("%1 (CPU)").arg(tier);
        }
    }
    if (!s.ttft_history.isEmpty()) s.ttft_ms.last = s.ttft_history.back();
    s.ttft_ms.p50 = percentile(s.ttft_history, 50);
    s.ttft_ms.p95 = percentile(s.ttft_history, 95);
    if (!s.tps_history.isEmpty()) s.tokens_per_s.last = s.tps_history.back();
    s.tokens_per_s.p50 = percentile(s.tps_history, 50);
    s.tokens_per_s.p95 = percentile(s.tps_history, 95);
    return s;
}

void TranslationController::run() {
    Shared& s = *shared_;
    std::unique_lock lock(s.m);
    for (;;) {
        s.cv.wait(lock, [&] { return s.stop || s.load || (s.pending && s.engine); });
        if (s.stop) break;
        if (s.load) {
            const QString dir = *s.load;
            const std::optional<RemoteChoice> remote = s.load_remote;
            const quint64 generation = s.load_generation;
            s.load.reset();
            s.load_remote.reset();
            s.abort = false;
            s.engine.reset();  // free the old model before loading the new one
            s.clearLines();
            lock.unlock();
            post([this, dir] { emit loadStarted(dir); });
            post([this, servers = remote.has_value()] {
                emit loadProgress(
                    0, 0, servers ? tr("Connecting to the servers") : tr("Loading the model"));
            });
            const EngineChoice choice = s.choice;
            std::shared_ptr<TranslationEngine> engine;
            QString failure;
            QString remote_model;
            if (remote) {
                try {
                    remote_model = remote->model;
                    engine = make_remote(*remote, remote_model);
                } catch (const std::exception& e) {
                    failure = QString::fromUtf8(e.what());
                }
            } else if (const auto gpu = gpu_index(choice)) {
                try {
                    cuda::CudaEngineOptions o;
                    o.device = *gpu;
                    o.tier = parse_tier(choice.tier.toStdString()).value_or(Tier::BF16);
                    o.kv_tokens = choice.context_tokens;
                    o.max_batch = choice.max_batch;
                    o.kv_cache = choice.int8_kv_cache ? KvCacheDtype::Int8 : KvCacheDtype::Auto;
                    engine = cuda::make_cuda_engine(
                        dir.toStdString(), o, [this](int done, int total, const std::string& what) {
                            const QString w = QString::fromStdString(what);
                            post([this, done, total, w] { emit loadProgress(done, total, w); });
                        });
                } catch (const std::exception& e) {
                    const QString why = QString::fromUtf8(e.what());
                    post([this, why] {
                        emit error(tr("The GPU engine could not load the model (%1); using the "
                                      "CPU instead.")
                                       .arg(why));
                    });
                }
            }
            if (!engine && !remote) {
                try {
                    CpuLoadOptions cpu;
                    cpu.tier = parse_cpu_tier(choice.cpu_tier.toStdString());  // "auto": none
                    engine =
                        make_cpu_engine(Translator::open_cpu(dir.toStdString(), std::nullopt, cpu));
                } catch (const std::exception& e) {
                    failure = QString::fromUtf8(e.what());
                }
            }
            lock.lock();
            if (s.load) continue;  // another directory was asked for meanwhile
            s.engine = engine;
            if (failure.isEmpty()) {
                post([this, engine, generation, remote_model] {
                    if (generation == load_generation_) {
                        if (remote_) remote_model_ = remote_model;
                        engine_ = engine
                                      ? std::make_shared<RecordingEngine>(engine, shared_->figures)
                                      : nullptr;
                        emit engineChanged();
                    }
                    setState(State::Ready);
                    emit modelLoaded(modelName());
                });
            } else {
                post([this, failure, generation] {
                    if (generation != load_generation_) return;  // another load was asked for
                    last_error_ = failure;
                    setState(State::Failed);
                    emit loadFailed(failure);
                    // A request waiting for this engine will not be served: it ends with the
                    // error instead of waiting in the queue for good.
                    if (busy_) {
                        {
                            std::lock_guard lock(shared_->m);
                            shared_->pending.reset();
                        }
                        busy_ = false;
                        emit busyChanged(false);
                        emit error(tr("Not translated: %1").arg(failure));
                    }
                });
            }
            continue;
        }
        Request request = std::move(*s.pending);
        s.pending.reset();
        s.running = true;
        lock.unlock();
        runRequest(request);
        lock.lock();
        s.running = false;
    }
    s.engine.reset();
}

void TranslationController::runRequest(const Request& r) {
    Shared& s = *shared_;
    TranslationEngine& engine = *s.engine;
    const auto stale = [&] { return s.abort.load() || s.newest.load() != r.id; };
    const auto started = std::chrono::steady_clock::now();
    const auto elapsed_ms = [&] {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    };
    const auto fail = [&](const QString& message) {
        post([this, id = r.id, message] {
            if (id != latest_id_) return;
            busy_ = false;
            emit busyChanged(false);
            emit error(message);
        });
    };

    const Language* target = find_language(r.to.toStdString());
    if (!target) return fail(tr("Unknown target language \"%1\".").arg(r.to));
    const QString from = r.from.isEmpty() ? detect_source_language(r.text) : r.from;
    const Language* source = from.isEmpty() ? nullptr : find_language(from.toStdString());

    TranslateOptions options;
    options.max_new_tokens = r.options.max_new_tokens;
    options.casing_guard = r.options.casing_guard;
    switch (r.options.mode) {
        case SamplingMode::Greedy:
            options.sampling = SamplingParams::greedy_decoding();
            break;
        case SamplingMode::Recommended:
            options.sampling = engine.translator() ? engine.translator()->recommended_sampling()
                                                   : SamplingParams::greedy_decoding();
            break;
        case SamplingMode::Custom:
            options.sampling = r.options.sampling;
            break;
    }

    RequestStats stats;
    stats.request_id = r.id;
    stats.source_language =
        source ? QString::fromUtf8(source->code.data(), static_cast<qsizetype>(source->code.size()))
               : QString();
    std::optional<double> ttft;
    double decode_ms = 0;
    int decode_tokens = 0;

    // Line by line (split_lines, as Translator::translate_lines), one engine job per line,
    // streaming every token; a newer request cancels the running job.
    const std::string text = r.text.toStdString();
    // The whole text's glossary entries; the Translator keeps each line's own.
    const std::vector<GlossaryEntry> glossary =
        r.options.glossary ? r.options.glossary->matching_entries(text, from.toStdString(),
                                                                  std::string(target->code))
                           : std::vector<GlossaryEntry>{};
    std::string done;
    const std::vector<TextLine> lines = split_lines(text);
    // The lines already translated (by an earlier request over the same text): kept, so that
    // an edit only sends the lines that changed. Looked up again line by line below, since a
    // line repeated in the text is cached once it is done.
    std::vector<std::optional<std::string>> known(lines.size());
    std::optional<std::size_t> last_known;
    const auto cached = [&](std::string_view body) -> std::optional<std::string> {
        std::lock_guard lock(s.m);
        if (s.lines_generation != r.lines_generation) return std::nullopt;
        const std::string* t = s.lines.find(LineCache::key(source, *target, body));
        return t ? std::optional<std::string>(*t) : std::nullopt;
    };
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].body.empty()) continue;
        known[i] = cached(lines[i].body);
        if (known[i]) last_known = i;
    }
    // What a partial result shows after line i: the lines after it that are known already, so
    // that an edit near the top does not blank the rest while the changed line translates.
    const auto known_after = [&](std::size_t i) {
        std::string tail;
        if (last_known)
            for (std::size_t k = i + 1; k <= *last_known; ++k)
                tail.append(lines[k].indent)
                    .append(known[k].value_or(std::string()))
                    .append(lines[k].trailing)
                    .append(lines[k].eol);
        return tail;
    };
    try {
        for (std::size_t i = 0; i < lines.size(); ++i) {
            const TextLine& line = lines[i];
            if (stale()) return;
            done.append(line.indent);
            std::optional<std::string> hit;
            if (!line.body.empty()) hit = cached(line.body);
            if (hit) {
                done.append(*hit);
                stats.cached_lines += 1;
            } else if (!line.body.empty()) {
                std::string rest = known_after(i);
                if (!rest.empty()) rest.insert(0, std::string(line.trailing).append(line.eol));
                PromptRequest segment;
                segment.text = std::string(line.body);
                segment.source = source;
                segment.target = target;
                segment.glossary = glossary;
                const double segment_start = elapsed_ms();
                std::string raw;  // written on the engine's thread while this one waits
                const JobOutcome result = run_job(
                    engine, TranslationJob{segment, options},
                    [&](std::string_view piece) {
                        raw.append(piece);
                        // One result line per source line, also while it streams.
                        post([this, id = r.id,
                              partial = QString::fromStdString(done + single_line(raw) + rest)] {
                            if (id == latest_id_) emit partialTranslation(id, partial);
                        });
                    },
                    stale);
                if (result.status == JobOutcome::Status::Cancelled || stale()) return;
                if (result.status == JobOutcome::Status::Failed)
                    return fail(QString::fromStdString(result.error));
                // The engine's figures: queued behind a document segment counts as waiting.
                if (!ttft) ttft = segment_start + result.queued_ms + result.ttft_ms;
                const int n = result.generated_tokens;
                stats.generated_tokens += n;
                stats.prompt_tokens += result.prompt_tokens;
                stats.segments += 1;
                decode_ms += std::max(0.0, result.total_ms - result.ttft_ms);
                decode_tokens += std::max(0, n - 1);
                // A line break the model put inside a line's translation becomes a space, as in
                // documents and the command line: the result keeps the source's lines 1:1.
                const std::string translation = single_line(result.text);
                done.append(translation);
                {
                    std::lock_guard lock(s.m);
                    if (s.lines_generation == r.lines_generation)
                        s.lines.insert(LineCache::key(source, *target, line.body), translation);
                }
                // The engine reports no glossary check: the same check as the Translator's.
                for (const GlossaryEntry& e :
                     Glossary::check(result.text, Glossary::entries_in(segment.text, glossary))) {
                    const QString term = QStringLiteral("%1 → %2").arg(
                        QString::fromStdString(e.source), QString::fromStdString(e.target));
                    if (!stats.missing_terms.contains(term)) stats.missing_terms.append(term);
                }
            }
            done.append(line.trailing).append(line.eol);
            if (!line.body.empty() && !hit)
                post([this, id = r.id, partial = QString::fromStdString(done + known_after(i))] {
                    if (id == latest_id_) emit partialTranslation(id, partial);
                });
        }
    } catch (const std::exception& e) {
        if (!stale()) fail(QString::fromUtf8(e.what()));
        return;
    }
    if (stale()) return;

    stats.total_ms = elapsed_ms();
    stats.ttft_ms = ttft.value_or(0);
    stats.tokens_per_s = decode_ms > 0 ? decode_tokens / (decode_ms / 1000.0) : 0;
    if (stats.segments > 0) s.figures->add(stats.ttft_ms, stats.tokens_per_s);
    post([this, id = r.id, result = QString::fromStdString(done), stats] {
        if (id != latest_id_) return;  // a newer request came in meanwhile: this one is stale
        busy_ = false;
        emit busyChanged(false);
        emit translationFinished(id, result, stats);
    });
}

}  // namespace mtdesk::ui
