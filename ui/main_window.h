#pragma once
// The main window: source and target panes, searchable language pickers with Detect and swap,
// translate-as-you-type (debounced; a newer edit supersedes the running request), streaming
// output, copy, adjustable text size, the live panel in a dock, the document queue in a dock
// (files and folders dropped anywhere on the window are queued), and the model's state in the
// status bar. Everything engine-side goes through TranslationController, whose engine the
// document queue shares.

#include <QMainWindow>
#include <string>
#include <vector>

#include "translation_controller.h"

class QAction;
class QDockWidget;
class QFrame;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTimer;
class QToolButton;

namespace mtdesk::app {
class JobQueue;
}

namespace mtdesk::ui {

class DocumentQueueView;
class LanguagePicker;
class LivePanel;
class Settings;

class MainWindow : public QMainWindow {
    Q_OBJECT

  public:
    static constexpr int kDebounceMs = 400;

    MainWindow(Settings& settings, TranslationController& controller, QWidget* parent = nullptr);
    ~MainWindow() override;

    /// Loads the configured model (the setting, else the bundled demo model); without one,
    /// shows the bar that asks for a model directory.
    void loadConfiguredModel();
    /// Loads `dir` for this session without changing the setting (what `gui --model` does):
    /// the settings dialog shows it, and it stays in use until another model is chosen.
    void loadModel(const QString& dir);
    /// The model directory in use on this computer: the one given for this session, else the
    /// configured one (the setting, else the bundled demo model); "" when there is none.
    QString modelDirectoryInUse() const;
    /// Checks `dir` as the settings dialog does; a usable model becomes the setting (and this
    /// computer the engine) and is loaded, otherwise a message box says why not. Returns
    /// whether it was usable.
    bool useModelDirectory(const QString& dir);
    /// Asks for a folder and uses it as the model directory (File → Model directory…).
    void chooseModelDirectory();

    /// Sends the source text now (what the debounce timer and Ctrl+Enter do).
    void translateNow();
    void swapLanguages();
    void copyTranslation();
    /// Opens the settings dialog; applies what was accepted.
    void showSettings();
    /// Opens the settings dialog at the servers' fields (the servers banner's button).
    void showServerSettings();

    QPlainTextEdit* sourceEdit() const { return source_; }
    QPlainTextEdit* targetEdit() const { return target_; }
    LanguagePicker* sourcePicker() const { return sourcePicker_; }
    LanguagePicker* targetPicker() const { return targetPicker_; }
    LivePanel* livePanel() const { return livePanel_; }
    QTimer* debounceTimer() const { return debounce_; }
    app::JobQueue* jobQueue() const { return jobQueue_; }
    DocumentQueueView* documentQueue() const { return documents_; }
    QDockWidget* documentsDock() const { return documentsDock_; }
    /// Queues documents (files, folders) with the current languages and shows the queue; what
    /// a drop on the window does. Returns the number of rows added.
    int addDocuments(const QStringList& paths);
    QString statusText() const;
    /// The banner that source and target are the same language, or that the chosen pair lies
    /// outside what the model was trained on (a model that says so, as the bundled demo model
    /// does); hidden when the pair is fine.
    QLabel* pairWarning() const { return pairWarning_; }
    /// The last finished translation exactly as the engine gave it (what Copy copies; the pane
    /// shows it with line ends normalised).
    QString translation() const { return translation_; }
    int textPointSize() const;  ///< the panes' current font size
    /// The line under the result: the last translation's figures, or its error.
    QLabel* resultInfo() const { return targetInfo_; }
    /// The bar above the panes shown while there is no usable model or the servers fail, and
    /// its button (choose a model directory, or the server settings).
    QFrame* modelBar() const { return modelBar_; }
    QPushButton* modelBarButton() const { return modelBarButton_; }

  public slots:
    void zoomIn();
    void zoomOut();
    void zoomReset();

  protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dragMoveEvent(QDragMoveEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    /// Drops of files on child widgets that take text drops (the panes, the pickers) queue the
    /// files as documents too.
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void buildMenus();
    void onSourceChanged();
    void onPartial(quint64 id, const QString& text);
    void onFinished(quint64 id, const QString& text, const mtdesk::ui::RequestStats& stats);
    void onError(const QString& message);
    void onStateChanged();
    void updateDetected();
    /// Saves the pickers' languages and makes them the pair of new documents.
    void useChosenLanguages();
    /// Whether the source (picked, or else detected) is the target language.
    enum class SameLanguage { No, Picked, Detected };
    SameLanguage sameLanguage() const;
    /// The banner above the panes: source and target are the same language, or the pair lies
    /// outside what the model was trained on; hidden otherwise.
    void updatePairWarning();
    /// What the model in use says it was trained on (app::trained_languages(); empty: nothing):
    /// kept by the document queue's model, which marks its rows; the warning follows.
    void useTrainedLanguages(std::vector<std::string> languages);
    void applyFontSize(int points);
    void applySettings();
    /// Opens the settings dialog (at the servers' fields with `servers`); applies what was
    /// accepted.
    void runSettings(bool servers);
    /// Starts loading `dir` on this computer (setting nothing).
    void startLoading(const QString& dir);
    /// The bar with `text`; its button opens the server settings (`servers`) or asks for a
    /// model directory.
    void showModelBar(const QString& text, bool servers = false);
    bool handleDrag(QEvent* event);  // true when the event carried local files and was taken

    Settings& settings_;
    TranslationController& controller_;
    quint64 requestId_ = 0;
    QString translation_;

    LanguagePicker* sourcePicker_;
    LanguagePicker* targetPicker_;
    QToolButton* swapButton_;
    QPlainTextEdit* source_;
    QPlainTextEdit* target_;
    QPushButton* translateButton_;
    QPushButton* copyButton_;
    QLabel* sourceInfo_;
    QLabel* targetInfo_;
    QLabel* pairWarning_;
    QFrame* modelBar_;
    QLabel* modelBarText_;
    QPushButton* modelBarButton_;
    bool modelBarServers_ = false;  // the bar's button opens the server settings
    QString sessionModel_;          // loadModel(): in use instead of the setting, until changed
    bool announceLoad_ = false;     // say in the status bar when the model has loaded
    bool retryOnLoad_ = false;      // the last request ended in an error: retried on a load
    QDockWidget* dock_;
    LivePanel* livePanel_;
    QLabel* modelLabel_;
    QLabel* stateLabel_;
    QProgressBar* progress_;
    QTimer* debounce_;
    QAction* livePanelAction_ = nullptr;
    app::JobQueue* jobQueue_;
    DocumentQueueView* documents_;
    QDockWidget* documentsDock_;
};

}  // namespace mtdesk::ui
