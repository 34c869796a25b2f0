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

#include "mtdesk/translate/detect.h"
#include "mtdesk/translate/languages.h"
#include "mtdesk/translate/prompt.h"
#include "mtdesk/translate/translator.h"

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
    const std::string utf8 = text.toStdString();
    const Detection d = detect_language(utf8);
    // Short text is often unreliable for CLD2; then only Han-majority text is called Chinese.
    if (!d.reliable) return looks_chinese(utf8) ? QStringLiteral("zh") : QString();
    return QString::fromUtf8(d.language->code.data(),
                             static_cast<qsizetype>(d.language->code.size()));
}

struct TranslationController::Shared {
    std::mutex m;
    std::condition_variable cv;
    bool stop = false;
    std::optional<QString> load;     // a model directory to load next
    std::optional<Request> pending;  // the newest request not yet taken by the worker
    bool running = false;            // the worker is translating
    TranslationOptions options;
    std::unique_ptr<Translator> translator;  // created, used and destroyed on the worker only

    // Read by the worker's cancellation check at every token, without the lock.
    std::atomic<quint64> newest{0};
    std::atomic<bool> abort{false};  // stop or a model load was asked for

    // Figures of finished requests, oldest first.
    std::deque<double> ttft, tps;
    quint64 finished = 0;
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
    last_error_.clear();
    {
        std::lock_guard lock(shared_->m);
        shared_->load = directory;
        shared_->abort = true;  // the running translation ends at its next token
    }
    shared_->cv.notify_all();
    setState(State::Loading);
}

quint64 TranslationController::translate(const QString& text, const QString& from,
                                         const QString& to) {
    const quint64 id = ++latest_id_;
    {
        std::lock_guard lock(shared_->m);
        shared_->pending = Request{id, text, from, to, shared_->options};
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
}

TranslationOptions TranslationController::options() const {
    std::lock_guard lock(shared_->m);
    return shared_->options;
}

QString TranslationController::modelName() const {
    return model_dir_.isEmpty() ? QString() : QDir(model_dir_).dirName();
}

bool TranslationController::busy() const {
    return busy_;
}

EngineStats TranslationController::stats() const {
    EngineStats s;
    s.device = tr("CPU");
    s.tier = tr("fp32 (CPU)");
    s.ram_bytes = process_resident_bytes();
    {
        std::lock_guard lock(shared_->m);
        s.queue_depth = shared_->pending ? 1 : 0;
        s.batch_size = shared_->running ? 1 : 0;
        s.ttft_history = QVector<double>(shared_->ttft.begin(), shared_->ttft.end());
        s.tps_history = QVector<double>(shared_->tps.begin(), shared_->tps.end());
        s.finished_requests = shared_->finished;
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
        s.cv.wait(lock, [&] { return s.stop || s.load || (s.pending && s.translator); });
        if (s.stop) break;
        if (s.load) {
            const QString dir = *s.load;
            s.load.reset();
            s.abort = false;
            s.translator.reset();  // free the old model before loading the new one
            lock.unlock();
            post([this, dir] { emit loadStarted(dir); });
            post([this] { emit loadProgress(0, 0, tr("Loading the model")); });
            std::unique_ptr<Translator> translator;
            QString failure;
            try {
                translator = Translator::open_cpu(dir.toStdString());
            } catch (const std::exception& e) {
                failure = QString::fromUtf8(e.what());
            }
            lock.lock();
            if (s.load) continue;  // another directory was asked for meanwhile
            s.translator = std::move(translator);
            if (failure.isEmpty()) {
                post([this] {
                    setState(State::Ready);
                    emit modelLoaded(modelName());
                });
            } else {
                post([this, failure] {
                    last_error_ = failure;
                    setState(State::Failed);
                    emit loadFailed(failure);
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
    s.translator.reset();  // destroyed on the thread that made it
}

void TranslationController::runRequest(const Request& r) {
    Shared& s = *shared_;
    Translator& translator = *s.translator;
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
    switch (r.options.mode) {
        case SamplingMode::Greedy:
            options.sampling = SamplingParams::greedy_decoding();
            break;
        case SamplingMode::Recommended:
            options.sampling = translator.recommended_sampling();
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

    // Line by line (split_lines, as Translator::translate_lines), but streaming every token and
    // checking for a newer request at each one.
    const std::string text = r.text.toStdString();
    std::string done;
    try {
        for (const TextLine& line : split_lines(text)) {
            done.append(line.indent);
            if (!line.body.empty()) {
                PromptRequest segment;
                segment.text = std::string(line.body);
                segment.source = source;
                segment.target = target;
                const double segment_start = elapsed_ms();
                std::string raw;
                const TranslationResult result =
                    translator.translate(segment, options, [&](std::string_view piece) {
                        if (stale()) return false;
                        raw.append(piece);
                        post([this, id = r.id, partial = QString::fromStdString(done + raw)] {
                            if (id == latest_id_) emit partialTranslation(id, partial);
                        });
                        return true;
                    });
                if (result.generation.finish == FinishReason::Cancelled || stale()) return;
                if (!ttft) ttft = segment_start + result.generation.prefill_ms;
                const int n = static_cast<int>(result.generation.tokens.size());
                stats.generated_tokens += n;
                stats.prompt_tokens += result.prompt_tokens;
                stats.segments += 1;
                decode_ms += result.generation.decode_ms;
                decode_tokens += std::max(0, n - 1);
                done.append(result.text);
            }
            done.append(line.trailing).append(line.eol);
            if (!line.body.empty())
                post([this, id = r.id, partial = QString::fromStdString(done)] {
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
    if (stats.segments > 0) {
        std::lock_guard lock(s.m);
        s.ttft.push_back(stats.ttft_ms);
        if (stats.tokens_per_s > 0) s.tps.push_back(stats.tokens_per_s);
        while (s.ttft.size() > static_cast<std::size_t>(kHistory))
            s.ttft.pop_front();
        while (s.tps.size() > static_cast<std::size_t>(kHistory))
            s.tps.pop_front();
        ++s.finished;
    }
    post([this, id = r.id, result = QString::fromStdString(done), stats] {
        if (id != latest_id_) return;  // a newer request came in meanwhile: this one is stale
        busy_ = false;
        emit busyChanged(false);
        emit translationFinished(id, result, stats);
    });
}

}  // namespace mtdesk::ui
