#pragma once
// The settings dialog: settings_dialog.ui and this thin class. Model directory (validated on
// selection, the problem shown inline), the precision tiers with the memory each needs for the
// chosen model, sampling, UI language; on a second page the glossary (a table with import and
// export as TSV / CSV) and the casing guard. Instead of this computer, remote servers may
// translate: their URLs, model name, API key and requests in flight, with a "Test connection"
// that shows each server's models and round-trip time. Writes to Settings when accepted.

#include <QDialog>

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "mtdesk/cuda/cuda_engine.h"
#include "mtdesk/model/config.h"
#include "mtdesk/runtime/sampling.h"
#include "mtdesk/translate/glossary.h"

namespace Ui {
class SettingsDialog;
}

namespace mtdesk::ui {

class Settings;
class GlossaryModel;

/// What validating a model directory found: the config when it is usable, else the message.
struct ModelCheck {
    std::optional<ModelConfig> config;
    QString summary;  ///< "HunYuanDenseV1ForCausalLM, 0.5 M parameters, tiktoken tokenizer"
    QString error;    ///< the engine's FileError text
    /// What the model's generation_config.json recommends (recommended_sampling()).
    std::optional<SamplingParams> recommended;
};

/// Opens `dir` with ModelDir::open and load_tokenizer (nothing is loaded beyond the mappings).
ModelCheck check_model_directory(const QString& dir);

class SettingsDialog : public QDialog {
    Q_OBJECT

  public:
    explicit SettingsDialog(Settings& settings, QWidget* parent = nullptr);
    ~SettingsDialog() override;

    /// Sets the model directory field and validates it, as choosing it with Browse… does.
    void setModelDirectory(const QString& dir);
    QString modelDirectory() const;
    /// Shows `dir`, the model given for this session only (`gui --model`), as the model
    /// directory; accepting it unchanged leaves the saved setting as it was.
    void setSessionModelDirectory(const QString& dir);
    /// Brings the servers' fields into view and focus (the window's "Server settings…").
    void showServerSettings();
    /// The inline message under the model directory ("" when none).
    QString modelMessage() const;
    bool modelValid() const { return valid_; }
    /// The note under the GPU KV budget when it exceeds the model's positions ("" when none).
    QString contextWarning() const;

    /// Adds the terms of a glossary file (TSV / CSV, see glossary.h; languages left empty
    /// mean any language) that the table does not have yet. Returns false, with the problem
    /// (file and line) in glossaryMessage(), when the file cannot be read or is malformed.
    bool importGlossary(const QString& path);
    /// Writes the table to `path` (.csv: CSV, otherwise TSV) atomically with a header row.
    /// Returns false, with the problem in glossaryMessage(), when a row lacks a term or the
    /// file cannot be written.
    bool exportGlossary(const QString& path);
    GlossaryModel* glossaryModel() const { return glossaryModel_; }
    /// The inline message under the glossary table ("" when none).
    QString glossaryMessage() const;

    /// Chooses "This computer" or "Servers", as clicking the radio button does.
    void setEngineMode(bool servers);
    bool serversChosen() const;
    /// The server URLs of the text box, one per non-blank line, trimmed.
    QStringList serverUrls() const;
    /// Asks every listed server for its model list (GET /v1/models) off the UI thread and shows,
    /// for each, its models and the round-trip time or what went wrong; connectionTested() when
    /// all have answered. A test started while one runs replaces it.
    void testConnection();
    /// The connection test's result as shown, as plain text, a line per server ("" before
    /// any).
    QString connectionReport() const;
    bool testingConnection() const { return testing_ > 0; }

    /// Refuses (showing the glossary page and the problem) while a glossary row has only
    /// one of its two terms; rows with neither are dropped. With "Servers", refuses (saying
    /// which) while no URL is given or one is malformed.
    void accept() override;

  signals:
    void connectionTested();

  protected:
    void showEvent(QShowEvent* event) override;

  private:
    void fitTable();
    void browse();
    void validate();
    /// Whether the model directory box holds the session's model (setSessionModelDirectory).
    bool showsSessionModel() const;
    void updateEstimates();
    /// Enables the GPU-only fields (KV budget, batch, INT8 KV) when the engine is a GPU's,
    /// and warns when the budget exceeds what a batch of the model's positions can use.
    void updateGpuFields();
    /// The GPU the device box names ("Automatic": the first), or null for the CPU / no GPU.
    const cuda::DeviceInfo* chosenGpu() const;
    void updateSamplingEnabled();
    void updateEngineMode();
    void showConnectionMessage(const QString& text, bool error);
    /// Lines of (text, failed): the failed ones in red.
    void showConnectionLines(const QList<QPair<QString, bool>>& lines);
    /// Whether every URL parses as a server address; shows the first problem when one does not.
    bool checkServerUrls(const QStringList& urls);
    /// Writes the model's recommended values (nullopt: unknown) into the "recommended" choice.
    void showRecommendedSampling(const std::optional<SamplingParams>& p);
    void addTerm();
    void removeTerms();
    void chooseGlossaryToImport();
    void chooseGlossaryExport();
    void showGlossaryMessage(const QString& text, bool error);
    /// The table's complete rows; nullopt, with the problem shown, when a row lacks a term.
    std::optional<Glossary> tableGlossary();

    std::unique_ptr<::Ui::SettingsDialog> ui_;
    std::vector<cuda::DeviceInfo> gpus_;
    Settings& settings_;
    std::optional<ModelConfig> config_;
    std::optional<std::size_t> available_memory_;  // host memory available when opened
    bool valid_ = false;
    QString sessionModel_;      // setSessionModelDirectory(), cleaned; "" = none
    QString connectionReport_;  // the connection label's text, plain
    GlossaryModel* glossaryModel_ = nullptr;
    int testing_ = 0;         // connection tests running
    quint64 testNumber_ = 0;  // the latest test: older answers are dropped
};

}  // namespace mtdesk::ui
