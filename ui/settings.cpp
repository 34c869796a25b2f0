#include "settings.h"

#include "demo_model.h"

#include <QFileInfo>
#include <QLocale>

namespace mtdesk::ui {
namespace {

const QString kModelDir = QStringLiteral("model/directory");
const QString kTier = QStringLiteral("model/tier");
const QString kCpuTier = QStringLiteral("model/cpuTier");
const QString kDevice = QStringLiteral("model/device");
const QString kContext = QStringLiteral("model/contextTokens");
const QString kBatch = QStringLiteral("model/maxBatch");
const QString kInt8Kv = QStringLiteral("model/int8KvCache");
const QString kEngineMode = QStringLiteral("engine/mode");
const QString kServers = QStringLiteral("remote/servers");
const QString kRemoteModel = QStringLiteral("remote/model");
const QString kApiKey = QStringLiteral("remote/apiKey");
const QString kConcurrency = QStringLiteral("remote/concurrency");
const QString kMode = QStringLiteral("sampling/mode");
const QString kTemperature = QStringLiteral("sampling/temperature");
const QString kTopK = QStringLiteral("sampling/topK");
const QString kTopP = QStringLiteral("sampling/topP");
const QString kRepetition = QStringLiteral("sampling/repetitionPenalty");
// "sampling/seed" held 0 for "not chosen" too; the seed chosen now lives under another key.
const QString kOldSeed = QStringLiteral("sampling/seed");
const QString kSeed = QStringLiteral("sampling/fixedSeed");
const QString kMaxTokens = QStringLiteral("sampling/maxNewTokens");
const QString kGlossary = QStringLiteral("glossary/terms");
const QString kCasingGuard = QStringLiteral("translation/casingGuard");
const QString kUiLanguage = QStringLiteral("ui/language");
const QString kFontSize = QStringLiteral("ui/fontPointSize");
const QString kSource = QStringLiteral("ui/sourceLanguage");
const QString kTarget = QStringLiteral("ui/targetLanguage");
const QString kLivePanel = QStringLiteral("ui/livePanel");
const QString kGeometry = QStringLiteral("ui/geometry");
const QString kState = QStringLiteral("ui/state");

bool is_model_dir(const QString& dir) {
    return !dir.isEmpty() && QFileInfo::exists(dir + QStringLiteral("/config.json"));
}

}  // namespace

Settings::Settings(QObject* parent) : QObject(parent) {}

void Settings::set(const QString& key, const QVariant& value) {
    if (settings_.value(key) == value) return;
    settings_.setValue(key, value);
    emit changed();
}

QString Settings::modelDirectory() const {
    return settings_.value(kModelDir).toString();
}
void Settings::setModelDirectory(const QString& dir) {
    set(kModelDir, dir);
}

QString Settings::effectiveModelDirectory() const {
    const QString chosen = modelDirectory();
    if (is_model_dir(chosen)) return chosen;
    return demoModelDirectory();
}

QString Settings::demoModelDirectory() {
    return app::demo_model_directory();
}

SamplingMode Settings::samplingMode() const {
    const QString m = settings_.value(kMode, QStringLiteral("recommended")).toString();
    if (m == QLatin1String("greedy")) return SamplingMode::Greedy;
    if (m == QLatin1String("custom")) return SamplingMode::Custom;
    return SamplingMode::Recommended;
}
void Settings::setSamplingMode(SamplingMode mode) {
    switch (mode) {
        case SamplingMode::Greedy:
            return set(kMode, QStringLiteral("greedy"));
        case SamplingMode::Recommended:
            return set(kMode, QStringLiteral("recommended"));
        case SamplingMode::Custom:
            return set(kMode, QStringLiteral("custom"));
    }
}

SamplingParams Settings::customSampling() const {
    const SamplingParams d = SamplingParams::hunyuan_mt();
    SamplingParams p;
    p.greedy = false;
    p.temperature = settings_.value(kTemperature, d.temperature).toFloat();
    p.top_k = settings_.value(kTopK, d.top_k).toInt();
    p.top_p = settings_.value(kTopP, d.top_p).toFloat();
    p.repetition_penalty = settings_.value(kRepetition, d.repetition_penalty).toFloat();
    bool ok = false;
    const qulonglong seed = settings_.value(kSeed).toULongLong(&ok);
    if (ok) {
        p.seed = seed;
    } else if (!settings_.contains(kSeed)) {
        // Settings from before the choice of a random seed: a seed other than 0 was chosen.
        const qulonglong old = settings_.value(kOldSeed, 0).toULongLong(&ok);
        if (ok && old != 0) p.seed = old;
    }
    return p;
}
void Settings::setCustomSampling(const SamplingParams& p) {
    set(kTemperature, p.temperature);
    set(kTopK, p.top_k);
    set(kTopP, p.top_p);
    set(kRepetition, p.repetition_penalty);
    // An empty value, not a missing key: a random seed chosen on purpose.
    set(kSeed, p.seed ? QVariant::fromValue<qulonglong>(*p.seed) : QVariant(QString()));
}

int Settings::maxNewTokens() const {
    return settings_.value(kMaxTokens, 1024).toInt();
}
void Settings::setMaxNewTokens(int n) {
    set(kMaxTokens, n);
}

Glossary Settings::glossary() const {
    // Reading an array moves QSettings' group cursor, hence non-const; it is back at the end.
    auto& s = const_cast<QSettings&>(settings_);
    Glossary g;
    const int n = s.beginReadArray(kGlossary);
    for (int i = 0; i < n; ++i) {
        s.setArrayIndex(i);
        GlossaryTerm t{s.value(QStringLiteral("sourceLanguage")).toString().toStdString(),
                       s.value(QStringLiteral("targetLanguage")).toString().toStdString(),
                       s.value(QStringLiteral("source")).toString().toStdString(),
                       s.value(QStringLiteral("target")).toString().toStdString()};
        if (!t.source.empty() && !t.target.empty()) g.terms.push_back(std::move(t));
    }
    s.endArray();
    return g;
}
void Settings::setGlossary(const Glossary& glossary) {
    if (glossary == this->glossary()) return;
    settings_.remove(kGlossary);  // no stale entries past the new size
    settings_.beginWriteArray(kGlossary, static_cast<int>(glossary.terms.size()));
    for (int i = 0; i < static_cast<int>(glossary.terms.size()); ++i) {
        const GlossaryTerm& t = glossary.terms[static_cast<std::size_t>(i)];
        settings_.setArrayIndex(i);
        settings_.setValue(QStringLiteral("sourceLanguage"), QString::fromStdString(t.source_lang));
        settings_.setValue(QStringLiteral("targetLanguage"), QString::fromStdString(t.target_lang));
        settings_.setValue(QStringLiteral("source"), QString::fromStdString(t.source));
        settings_.setValue(QStringLiteral("target"), QString::fromStdString(t.target));
    }
    settings_.endArray();
    emit changed();
}

bool Settings::casingGuard() const {
    return settings_.value(kCasingGuard, true).toBool();
}
void Settings::setCasingGuard(bool on) {
    set(kCasingGuard, on);
}

TranslationOptions Settings::translationOptions() const {
    TranslationOptions o;
    o.mode = samplingMode();
    o.sampling = customSampling();
    o.max_new_tokens = maxNewTokens();
    o.casing_guard = casingGuard();
    Glossary g = glossary();
    if (!g.empty()) o.glossary = std::make_shared<const Glossary>(std::move(g));
    return o;
}

QString Settings::device() const {
    // $MTDESK_DEVICE sets the default (the test suite pins the CPU this way).
    const QString env = qEnvironmentVariable("MTDESK_DEVICE");
    return settings_.value(kDevice, env.isEmpty() ? QStringLiteral("auto") : env).toString();
}
void Settings::setDevice(const QString& device) {
    set(kDevice, device);
}

QString Settings::tier() const {
    return settings_.value(kTier, QStringLiteral("bf16")).toString();
}
void Settings::setTier(const QString& tier) {
    set(kTier, tier);
}
QString Settings::cpuTier() const {
    return settings_.value(kCpuTier, QStringLiteral("auto")).toString();
}
void Settings::setCpuTier(const QString& tier) {
    set(kCpuTier, tier);
}
int Settings::contextTokens() const {
    return settings_.value(kContext, 8192).toInt();
}
void Settings::setContextTokens(int tokens) {
    set(kContext, tokens);
}
int Settings::maxBatch() const {
    return settings_.value(kBatch, 16).toInt();
}
void Settings::setMaxBatch(int batch) {
    set(kBatch, batch);
}
bool Settings::int8KvCache() const {
    return settings_.value(kInt8Kv, false).toBool();
}
void Settings::setInt8KvCache(bool on) {
    set(kInt8Kv, on);
}

Settings::EngineMode Settings::engineMode() const {
    return settings_.value(kEngineMode).toString() == QLatin1String("servers") ? EngineMode::Servers
                                                                               : EngineMode::Local;
}
void Settings::setEngineMode(EngineMode mode) {
    set(kEngineMode,
        mode == EngineMode::Servers ? QStringLiteral("servers") : QStringLiteral("local"));
}
QStringList Settings::serverUrls() const {
    return settings_.value(kServers).toStringList();
}
void Settings::setServerUrls(const QStringList& urls) {
    set(kServers, urls);
}
QString Settings::remoteModel() const {
    return settings_.value(kRemoteModel).toString();
}
void Settings::setRemoteModel(const QString& model) {
    set(kRemoteModel, model);
}
QString Settings::apiKey() const {
    return settings_.value(kApiKey).toString();
}
void Settings::setApiKey(const QString& key) {
    set(kApiKey, key);
}
int Settings::remoteConcurrency() const {
    return settings_.value(kConcurrency, 4).toInt();
}
void Settings::setRemoteConcurrency(int n) {
    set(kConcurrency, n);
}
RemoteChoice Settings::remoteChoice() const {
    return {serverUrls(), remoteModel(), apiKey(), remoteConcurrency()};
}

QString Settings::uiLanguage() const {
    return settings_.value(kUiLanguage).toString();
}
void Settings::setUiLanguage(const QString& language) {
    set(kUiLanguage, language);
}
int Settings::fontPointSize() const {
    return settings_.value(kFontSize, 0).toInt();
}
void Settings::setFontPointSize(int points) {
    set(kFontSize, points);
}

QString Settings::sourceLanguage() const {
    return settings_.value(kSource).toString();
}
void Settings::setSourceLanguage(const QString& code) {
    set(kSource, code);
}
QString Settings::targetLanguage() const {
    // First run: into Chinese, or into English for a Chinese UI.
    const QString fallback =
        QLocale().language() == QLocale::Chinese ? QStringLiteral("en") : QStringLiteral("zh");
    return settings_.value(kTarget, fallback).toString();
}
void Settings::setTargetLanguage(const QString& code) {
    set(kTarget, code);
}
bool Settings::livePanelVisible() const {
    return settings_.value(kLivePanel, true).toBool();
}
void Settings::setLivePanelVisible(bool visible) {
    set(kLivePanel, visible);
}
QByteArray Settings::windowGeometry() const {
    return settings_.value(kGeometry).toByteArray();
}
void Settings::setWindowGeometry(const QByteArray& geometry) {
    set(kGeometry, geometry);
}
QByteArray Settings::windowState() const {
    return settings_.value(kState).toByteArray();
}
void Settings::setWindowState(const QByteArray& state) {
    set(kState, state);
}

}  // namespace mtdesk::ui
