#pragma once
// The settings dialog: settings_dialog.ui and this thin class. Model directory (validated on
// selection, the problem shown inline), the precision tiers with the memory each needs for the
// chosen model, sampling, UI language. Writes to Settings when accepted.

#include <QDialog>

#include <memory>
#include <optional>

#include "mtdesk/model/config.h"

namespace Ui {
class SettingsDialog;
}

namespace mtdesk::ui {

class Settings;

/// What validating a model directory found: the config when it is usable, else the message.
struct ModelCheck {
    std::optional<ModelConfig> config;
    QString summary;  ///< "HunYuanDenseV1ForCausalLM, 0.5 M parameters, tiktoken tokenizer"
    QString error;    ///< the engine's FileError text
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
    /// The inline message under the model directory ("" when none).
    QString modelMessage() const;
    bool modelValid() const { return valid_; }

    void accept() override;

  protected:
    void showEvent(QShowEvent* event) override;

  private:
    void fitTable();
    void browse();
    void validate();
    void updateEstimates();
    void updateSamplingEnabled();

    std::unique_ptr<::Ui::SettingsDialog> ui_;
    Settings& settings_;
    std::optional<ModelConfig> config_;
    bool valid_ = false;
};

}  // namespace mtdesk::ui
