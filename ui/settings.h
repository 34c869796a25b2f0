#pragma once
// Every persistent choice of the application, one class over QSettings (organisation and
// application name from QCoreApplication). Getters fall back to defaults; setters write through.

#include <QByteArray>
#include <QObject>
#include <QSettings>
#include <QString>

#include "translation_controller.h"

namespace mtdesk::ui {

class Settings : public QObject {
    Q_OBJECT

  public:
    explicit Settings(QObject* parent = nullptr);

    /// The model directory chosen by the user ("" = none chosen).
    QString modelDirectory() const;
    void setModelDirectory(const QString& dir);
    /// The chosen directory if it exists, otherwise the bundled demo model if installed or in
    /// the source tree, otherwise "".
    QString effectiveModelDirectory() const;
    /// The bundled demo model (resources/models/mtdesk-demo), looked up next to the
    /// executable's installed data directory and in the source tree; "" when absent.
    static QString demoModelDirectory();

    SamplingMode samplingMode() const;
    void setSamplingMode(SamplingMode mode);
    /// The parameters used with SamplingMode::Custom.
    SamplingParams customSampling() const;
    void setCustomSampling(const SamplingParams& params);
    int maxNewTokens() const;
    void setMaxNewTokens(int n);
    /// The glossary (terminology), stored as a list of entries under "glossary/terms".
    Glossary glossary() const;
    void setGlossary(const Glossary& glossary);
    /// The proper-noun casing guard (default on).
    bool casingGuard() const;
    void setCasingGuard(bool on);
    /// Everything the controller needs, from the above.
    TranslationOptions translationOptions() const;

    /// Where the model runs: "auto" (the first GPU when there is one, else the CPU), "cpu",
    /// or "cuda:N".
    QString device() const;
    void setDevice(const QString& device);
    /// Precision tier name for the GPU engine ("bf16", "fp16", "int8", "int4").
    QString tier() const;
    void setTier(const QString& tier);
    /// Precision tier for the CPU engine: "auto" (fp32 when it fits in the memory available,
    /// else int8, else int4), "fp32", "int8" or "int4".
    QString cpuTier() const;
    void setCpuTier(const QString& tier);
    int contextTokens() const;  ///< KV cache budget, tokens
    void setContextTokens(int tokens);
    int maxBatch() const;
    void setMaxBatch(int batch);
    /// The GPU KV cache holds int8 (half the memory per position) instead of 16-bit values.
    bool int8KvCache() const;
    void setInt8KvCache(bool on);

    /// Where translations are made: on this computer (the model directory, device and tier
    /// above) or by remote servers (the remote* settings).
    enum class EngineMode { Local, Servers };
    EngineMode engineMode() const;
    void setEngineMode(EngineMode mode);
    /// The servers' base URLs, in order.
    QStringList serverUrls() const;
    void setServerUrls(const QStringList& urls);
    /// The served model's name ("" = the first model the servers list).
    QString remoteModel() const;
    void setRemoteModel(const QString& model);
    /// The servers' API key ("" = none). Stored like the other settings, in the user's
    /// configuration file.
    QString apiKey() const;
    void setApiKey(const QString& key);
    /// Requests in flight per server (default 4).
    int remoteConcurrency() const;
    void setRemoteConcurrency(int n);
    /// The servers, their model, key and concurrency, for the controller.
    RemoteChoice remoteChoice() const;

    /// UI language: "" follows the system locale, otherwise "en" or "zh_CN".
    QString uiLanguage() const;
    void setUiLanguage(const QString& language);
    /// Point size of the text panes; 0 follows the system font.
    int fontPointSize() const;
    void setFontPointSize(int points);

    QString sourceLanguage() const;  ///< "" = detect
    void setSourceLanguage(const QString& code);
    QString targetLanguage() const;  ///< default: "zh", or "en" when the UI is Chinese
    void setTargetLanguage(const QString& code);
    bool livePanelVisible() const;
    void setLivePanelVisible(bool visible);
    QByteArray windowGeometry() const;
    void setWindowGeometry(const QByteArray& geometry);
    QByteArray windowState() const;
    void setWindowState(const QByteArray& state);

    void sync() { settings_.sync(); }

  signals:
    void changed();

  private:
    void set(const QString& key, const QVariant& value);
    QSettings settings_;
};

}  // namespace mtdesk::ui
