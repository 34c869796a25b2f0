#pragma once
// The document queue in the window: a table with one row per document (file, languages, a
// progress bar of segments done / total, elapsed and remaining time, state or error message,
// and Cancel / Retry / Open folder / Remove buttons per row), "Add files…" and "Add folder…"
// buttons, and a context menu. New rows take the window's current languages (setLanguages).
// Everything runs in app::JobQueue; this is only its view.

#include <QAbstractTableModel>
#include <QHash>
#include <QList>
#include <QTableView>
#include <QUrl>
#include <QWidget>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "job_queue.h"

class QLabel;
class QMenu;
class QPushButton;
class QTimer;

namespace mtdesk::ui {

/// "0:07", "12:34", "1:02:03" (hours only when there are some).
QString format_duration(qint64 ms);

/// The queue's rows as a table; follows the queue's signals and refreshes the running rows'
/// times once a second.
class DocumentQueueModel : public QAbstractTableModel {
    Q_OBJECT

  public:
    enum Column {
        FileColumn,
        LanguagesColumn,
        ProgressColumn,
        ElapsedColumn,
        RemainingColumn,
        StateColumn,
        ActionsColumn,
        ColumnCount
    };
    enum Role {
        JobIdRole = Qt::UserRole + 1,  ///< quint64
        StateRole,                     ///< int(app::JobState)
        DoneRole,                      ///< segments done
        TotalRole,                     ///< segments in the document (0 = not read yet)
    };

    /// Shows `queue`'s rows (which must outlive the model).
    explicit DocumentQueueModel(app::JobQueue* queue, QObject* parent = nullptr);

    /// The model's standard interface over the rows and columns above.
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    quint64 jobId(int row) const;                        ///< 0 for a row out of range
    int rowOf(quint64 id) const;                         ///< -1 when absent
    std::optional<app::DocumentJob> job(int row) const;  ///< the row's snapshot

    /// The state as shown: "Queued", "Translating", "Done → name", "Failed: message", ...
    static QString stateText(const app::DocumentJob& job);
    /// A Done row whose checks found something: segments that may have lost placeholders or
    /// markup, entries marked fuzzy.
    static bool needsReview(const app::DocumentJob& job);
    /// The state text followed by what the checks found, segment by segment (the tooltip).
    static QString checksText(const app::DocumentJob& job);
    /// "English → Chinese", "English (detected) → Chinese", "Detect → Chinese".
    static QString languagesText(const app::DocumentJob& job);

    /// What the model says it was trained on (app::trained_languages(); empty = it says
    /// nothing). Rows whose pair lies outside get a warning icon and a tooltip that says so.
    void setTrainedLanguages(std::vector<std::string> languages);
    const std::vector<std::string>& trainedLanguages() const { return trained_; }
    /// Whether `job`'s pair (its given or detected source) lies outside those languages.
    bool untrainedPair(const app::DocumentJob& job) const;

  private:
    void onChanged(quint64 id);
    void tick();
    void countName(quint64 id, int delta);                // names_ as the row comes or goes
    QString fileText(const app::DocumentJob& job) const;  // "a.txt", or "a.txt (in docs)"

    app::JobQueue* queue_;
    QList<quint64> ids_;              // rows, in the queue's order
    QHash<QString, int> names_;       // rows per file name
    QHash<quint64, QString> nameOf_;  // each row's file name
    std::vector<std::string> trained_;
    QTimer* tick_;
};

/// The queue's widget: buttons, the languages new rows get, the table with its delegates.
class DocumentQueueView : public QWidget {
    Q_OBJECT

  public:
    enum class Action { Cancel, Retry, OpenFolder, Remove };
    Q_ENUM(Action)

    /// The view of `queue` (which must outlive it).
    explicit DocumentQueueView(app::JobQueue* queue, QWidget* parent = nullptr);

    /// Languages for rows added from now on (codes; from "" = detect).
    void setLanguages(const QString& from, const QString& to);
    QString sourceLanguage() const { return from_; }
    QString targetLanguage() const { return to_; }

    /// Adds files and folders with the current languages; returns the ids of the rows added.
    QList<quint64> addPaths(const QStringList& paths);
    /// File and folder pickers (modal); add what is chosen.
    void addFiles();
    void addFolder();

    /// Whether `action` applies to the row now (the buttons shown).
    static bool actionAvailable(const app::DocumentJob& job, Action action);
    /// Does `action` for a row: cancel, retry, open its folder (the output's when written,
    /// otherwise the source's) or remove it from the queue.
    void trigger(quint64 id, Action action);
    /// Where the row's button for `action` is, in the table's viewport coordinates; empty when
    /// the row shows no such button.
    QRect actionRect(int row, Action action) const;

    /// What opens folders (default: QDesktopServices::openUrl; false = it could not, and
    /// problem() says so); tests replace it.
    void setUrlOpener(std::function<bool(const QUrl&)> opener);

    /// The file dialog's name filter: every supported document type.
    static QString fileDialogFilter();

    /// The parts, for the window and for tests.
    QTableView* table() const { return table_; }
    DocumentQueueModel* model() const { return model_; }
    app::JobQueue* queue() const { return queue_; }
    QPushButton* addFilesButton() const { return addFiles_; }
    QPushButton* addFolderButton() const { return addFolder_; }
    /// The context menu's actions for the selected rows, built as the menu is (for tests).
    QMenu* contextMenuForSelection();

  signals:
    /// Rows were added from paths (count may be 0: nothing supported was found).
    void pathsAdded(int count);
    /// Something the user asked for did not happen (a folder no file manager opened): a
    /// message for the status bar.
    void problem(const QString& message);

  private:
    QList<quint64> selectedIds() const;
    void updateButtons();
    void updateLanguagesLabel();
    void fitLanguagesColumn();  // wide enough for the languages of the rows in sight

    app::JobQueue* queue_;
    DocumentQueueModel* model_;
    QTableView* table_;
    QPushButton* addFiles_;
    QPushButton* addFolder_;
    QPushButton* clearFinished_;
    QLabel* languages_;
    QMenu* menu_ = nullptr;
    QString from_;
    QString to_ = QStringLiteral("zh");
    std::function<bool(const QUrl&)> opener_;
};

}  // namespace mtdesk::ui
