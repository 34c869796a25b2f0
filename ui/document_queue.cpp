#include "document_queue.h"

#include <QApplication>
#include <QContextMenuEvent>
#include <QDesktopServices>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QShortcut>
#include <QStyle>
#include <QStyledItemDelegate>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <array>

#include "documents/document.h"
#include "i18n.h"
#include "language_picker.h"
#include "trained_pairs.h"

namespace mtdesk::ui {

using app::DocumentJob;
using app::JobQueue;
using app::JobState;

namespace {

constexpr int kTickMs = 1000;
constexpr int kButtonSize = 24;
constexpr int kButtonGap = 4;

// The per-row buttons, left to right; Cancel and Retry share the first place.
constexpr std::array<DocumentQueueView::Action, 3> kButtonSlots = {
    DocumentQueueView::Action::Cancel, DocumentQueueView::Action::OpenFolder,
    DocumentQueueView::Action::Remove};

int slot_of(DocumentQueueView::Action a) {
    return a == DocumentQueueView::Action::Retry
               ? 0
               : static_cast<int>(std::find(kButtonSlots.begin(), kButtonSlots.end(), a) -
                                  kButtonSlots.begin());
}

QRect button_rect(const QRect& cell, int slot) {
    const int x = cell.left() + kButtonGap + slot * (kButtonSize + kButtonGap);
    const int y = cell.top() + (cell.height() - kButtonSize) / 2;
    return {x, y, kButtonSize, kButtonSize};
}

QIcon action_icon(DocumentQueueView::Action a, const QStyle* style) {
    switch (a) {
        case DocumentQueueView::Action::Cancel:
            return style->standardIcon(QStyle::SP_BrowserStop);
        case DocumentQueueView::Action::Retry:
            return style->standardIcon(QStyle::SP_BrowserReload);
        case DocumentQueueView::Action::OpenFolder:
            return style->standardIcon(QStyle::SP_DirOpenIcon);
        case DocumentQueueView::Action::Remove:
            return style->standardIcon(QStyle::SP_TrashIcon);
    }
    return {};
}

QString action_tip(DocumentQueueView::Action a) {
    switch (a) {
        case DocumentQueueView::Action::Cancel:
            return DocumentQueueView::tr("Cancel");
        case DocumentQueueView::Action::Retry:
            return DocumentQueueView::tr("Retry");
        case DocumentQueueView::Action::OpenFolder:
            return DocumentQueueView::tr("Open folder");
        case DocumentQueueView::Action::Remove:
            return DocumentQueueView::tr("Remove from the queue");
    }
    return {};
}

// The actions a row shows, in their places.
QList<DocumentQueueView::Action> row_actions(const DocumentJob& job) {
    QList<DocumentQueueView::Action> out;
    for (auto a : {DocumentQueueView::Action::Cancel, DocumentQueueView::Action::Retry,
                   DocumentQueueView::Action::OpenFolder, DocumentQueueView::Action::Remove})
        if (DocumentQueueView::actionAvailable(job, a)) out.append(a);
    return out;
}

// A progress bar of segments done / total.
class ProgressDelegate : public QStyledItemDelegate {
  public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override {
        QStyleOptionViewItem item = option;
        initStyleOption(&item, index);
        const QWidget* widget = option.widget;
        QStyle* style = widget ? widget->style() : QApplication::style();
        style->drawPrimitive(QStyle::PE_PanelItemViewItem, &item, painter, widget);
        const auto state = static_cast<JobState>(index.data(DocumentQueueModel::StateRole).toInt());
        const int total = index.data(DocumentQueueModel::TotalRole).toInt();
        const int done = index.data(DocumentQueueModel::DoneRole).toInt();
        if (total <= 0 && state != JobState::Done) return;  // not read yet
        QStyleOptionProgressBar bar;
        bar.initFrom(widget);
        bar.rect = option.rect.adjusted(4, 4, -4, -4);
        bar.minimum = 0;
        bar.maximum = std::max(total, 1);
        bar.progress = state == JobState::Done ? bar.maximum : done;
        bar.text = index.data(Qt::DisplayRole).toString();
        bar.textVisible = true;
        bar.textAlignment = Qt::AlignCenter;
        bar.state = QStyle::State_Horizontal;
        // A stopped row's bar is greyed.
        if (state != JobState::Failed && state != JobState::Cancelled)
            bar.state |= QStyle::State_Enabled;
        style->drawControl(QStyle::CE_ProgressBar, &bar, painter, widget);
    }
};

// Cut at the end: a message reads from its start (the whole of it is the tooltip), where the
// table cuts names in the middle to keep their extension.
class ElideRightDelegate : public QStyledItemDelegate {
  public:
    using QStyledItemDelegate::QStyledItemDelegate;

  protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override {
        QStyledItemDelegate::initStyleOption(option, index);
        option->textElideMode = Qt::ElideRight;
    }
};

// The row's buttons, drawn in the cell; a click triggers the action.
class ActionsDelegate : public QStyledItemDelegate {
  public:
    ActionsDelegate(DocumentQueueView* view, DocumentQueueModel* model)
        : QStyledItemDelegate(view), view_(view), model_(model) {}

    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override {
        QStyleOptionViewItem item = option;
        initStyleOption(&item, index);
        const QWidget* widget = option.widget;
        QStyle* style = widget ? widget->style() : QApplication::style();
        style->drawPrimitive(QStyle::PE_PanelItemViewItem, &item, painter, widget);
        const std::optional<DocumentJob> job = model_->job(index.row());
        if (!job) return;
        for (const DocumentQueueView::Action a : row_actions(*job)) {
            QStyleOptionButton button;
            button.initFrom(widget);
            button.rect = button_rect(option.rect, slot_of(a));
            button.icon = action_icon(a, style);
            button.iconSize = QSize(16, 16);
            button.state = QStyle::State_Enabled | QStyle::State_Raised;
            if (pressed_ == std::make_pair(index.row(), a)) button.state |= QStyle::State_Sunken;
            style->drawControl(QStyle::CE_PushButton, &button, painter, widget);
        }
    }

    QSize sizeHint(const QStyleOptionViewItem&, const QModelIndex&) const override {
        return {kButtonGap + 3 * (kButtonSize + kButtonGap), kButtonSize + 8};
    }

    bool editorEvent(QEvent* event, QAbstractItemModel*, const QStyleOptionViewItem& option,
                     const QModelIndex& index) override {
        if (event->type() != QEvent::MouseButtonPress &&
            event->type() != QEvent::MouseButtonRelease)
            return false;
        const auto* mouse = static_cast<QMouseEvent*>(event);
        if (mouse->button() != Qt::LeftButton) return false;
        const std::optional<DocumentJob> job = model_->job(index.row());
        if (!job) return false;
        for (const DocumentQueueView::Action a : row_actions(*job)) {
            if (!button_rect(option.rect, slot_of(a)).contains(mouse->position().toPoint()))
                continue;
            if (event->type() == QEvent::MouseButtonPress) {
                pressed_ = {index.row(), a};
            } else if (pressed_ == std::make_pair(index.row(), a)) {
                pressed_ = {-1, a};
                view_->trigger(job->id, a);
            }
            return true;
        }
        pressed_.first = -1;
        return false;
    }

    bool helpEvent(QHelpEvent* event, QAbstractItemView* view, const QStyleOptionViewItem& option,
                   const QModelIndex& index) override {
        if (const std::optional<DocumentJob> job = model_->job(index.row()))
            for (const DocumentQueueView::Action a : row_actions(*job))
                if (button_rect(option.rect, slot_of(a)).contains(event->pos())) {
                    QToolTip::showText(event->globalPos(), action_tip(a), view);
                    return true;
                }
        return QStyledItemDelegate::helpEvent(event, view, option, index);
    }

  private:
    DocumentQueueView* view_;
    DocumentQueueModel* model_;
    std::pair<int, DocumentQueueView::Action> pressed_{-1, DocumentQueueView::Action::Cancel};
};

// The table, with a hint where the rows would be while there are none.
class QueueTable : public QTableView {
  public:
    using QTableView::QTableView;

  protected:
    void paintEvent(QPaintEvent* event) override {
        QTableView::paintEvent(event);
        if (model() && model()->rowCount() > 0) return;
        QPainter painter(viewport());
        painter.setPen(palette().color(QPalette::PlaceholderText));
        painter.drawText(viewport()->rect().adjusted(12, 12, -12, -12),
                         Qt::AlignCenter | Qt::TextWordWrap,
                         DocumentQueueView::tr("Drop documents or folders on the window, or "
                                               "use “Add files…”. Each is translated into a new "
                                               "file next to it."));
    }
};

QString file_name(const QString& path) {
    return QFileInfo(path).fileName();
}

}  // namespace

QString format_duration(qint64 ms) {
    const qint64 s = std::max<qint64>(0, (ms + 500) / 1000);
    const qint64 h = s / 3600, m = (s / 60) % 60, sec = s % 60;
    if (h > 0)
        return QStringLiteral("%1:%2:%3")
            .arg(h)
            .arg(m, 2, 10, QLatin1Char('0'))
            .arg(sec, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1:%2").arg(m).arg(sec, 2, 10, QLatin1Char('0'));
}

// ---- model ----

DocumentQueueModel::DocumentQueueModel(JobQueue* queue, QObject* parent)
    : QAbstractTableModel(parent), queue_(queue), tick_(new QTimer(this)) {
    for (const DocumentJob& job : queue_->jobs()) {
        ids_.append(job.id);
        countName(job.id, +1);
    }
    connect(queue_, &JobQueue::jobAdded, this, [this](quint64 id) {
        beginInsertRows({}, static_cast<int>(ids_.size()), static_cast<int>(ids_.size()));
        ids_.append(id);
        endInsertRows();
        countName(id, +1);
    });
    connect(queue_, &JobQueue::jobRemoved, this, [this](quint64 id) {
        const int row = rowOf(id);
        if (row < 0) return;
        countName(id, -1);
        beginRemoveRows({}, row, row);
        ids_.removeAt(row);
        endRemoveRows();
    });
    connect(queue_, &JobQueue::jobChanged, this, &DocumentQueueModel::onChanged);
    tick_->setInterval(kTickMs);
    connect(tick_, &QTimer::timeout, this, &DocumentQueueModel::tick);
    tick_->start();
}

void DocumentQueueModel::countName(quint64 id, int delta) {
    // Kept by id: a removed row is gone from the queue when it says so.
    if (delta > 0) {
        const std::optional<DocumentJob> j = queue_->job(id);
        if (!j) return;
        nameOf_.insert(id, file_name(j->source_path));
    }
    const auto it = nameOf_.constFind(id);
    if (it == nameOf_.constEnd()) return;
    int& n = names_[*it];
    n += delta;
    if (delta < 0) nameOf_.remove(id);
    // A name that becomes shared, or unique again, changes how the rows with it are shown.
    if ((n == 2 && delta > 0) || (n == 1 && delta < 0))
        if (!ids_.isEmpty())
            emit dataChanged(index(0, FileColumn), index(rowCount() - 1, FileColumn));
}

QString DocumentQueueModel::fileText(const DocumentJob& job) const {
    const QString name = file_name(job.source_path);
    // Rows of one name from different folders: the folder tells them apart.
    if (names_.value(name) > 1)
        return tr("%1 (in %2)").arg(name, QFileInfo(job.source_path).dir().dirName());
    return name;
}

int DocumentQueueModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(ids_.size());
}

int DocumentQueueModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

quint64 DocumentQueueModel::jobId(int row) const {
    return row >= 0 && row < ids_.size() ? ids_[row] : 0;
}

int DocumentQueueModel::rowOf(quint64 id) const {
    return static_cast<int>(ids_.indexOf(id));
}

std::optional<DocumentJob> DocumentQueueModel::job(int row) const {
    const quint64 id = jobId(row);
    return id ? queue_->job(id) : std::nullopt;
}

void DocumentQueueModel::onChanged(quint64 id) {
    const int row = rowOf(id);
    if (row >= 0) emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

void DocumentQueueModel::tick() {
    for (int row = 0; row < ids_.size(); ++row) {
        const std::optional<DocumentJob> j = job(row);
        if (j && j->state == JobState::Running)
            emit dataChanged(index(row, ElapsedColumn), index(row, RemainingColumn));
    }
}

QString DocumentQueueModel::languagesText(const DocumentJob& job) {
    const QString to = language_display_name(job.target_language);
    if (!job.source_language.isEmpty())
        return tr("%1 → %2").arg(language_display_name(job.source_language), to);
    if (!job.detected_language.isEmpty())
        return tr("%1 (detected) → %2").arg(language_display_name(job.detected_language), to);
    return tr("Detect → %1").arg(to);
}

QString DocumentQueueModel::stateText(const DocumentJob& job) {
    switch (job.state) {
        case JobState::Queued:
            return tr("Queued");
        case JobState::Running:
            if (job.segments_total == 0) return tr("Reading…");
            if (job.segments_done == job.segments_total) return tr("Writing…");
            return tr("Translating");
        case JobState::Done: {
            QString text = tr("Done → %1").arg(file_name(job.output_path));
            // The checks the command line reports: a written file is not necessarily a clean one.
            if (job.placeholder_issues > 0)
                text += tr(", %n segments may have lost placeholders or markup", nullptr,
                           job.placeholder_issues);
            if (job.marked_for_review > 0)
                text += tr(", %n entries marked fuzzy for review", nullptr, job.marked_for_review);
            return text;
        }
        case JobState::Failed: {
            // The file column names the file: the message starts with its name, not its path.
            QString message = job.error;
            const QString prefix = job.source_path + QStringLiteral(": ");
            if (message.startsWith(prefix))
                message =
                    file_name(job.source_path) + QStringLiteral(": ") + message.mid(prefix.size());
            return tr("Failed: %1").arg(message);
        }
        case JobState::Cancelled:
            return tr("Cancelled");
    }
    return {};
}

bool DocumentQueueModel::needsReview(const DocumentJob& job) {
    return job.state == JobState::Done && (job.placeholder_issues > 0 || job.marked_for_review > 0);
}

QString DocumentQueueModel::checksText(const DocumentJob& job) {
    QStringList lines = {stateText(job)};
    if (job.placeholder_issues > 0) {
        lines << tr(
            "These segments' placeholders or markup differ from the source; check them "
            "in the translation:");
        for (const app::PlaceholderNote& note : job.placeholder_notes) {
            QStringList what;
            if (!note.missing.isEmpty())
                what << tr("lost %1").arg(note.missing.join(QStringLiteral(" ")));
            if (!note.added.isEmpty())
                what << tr("added %1").arg(note.added.join(QStringLiteral(" ")));
            lines << tr("segment %1: %2").arg(note.segment).arg(what.join(tr(", ")));
        }
        if (job.placeholder_issues > job.placeholder_notes.size())
            lines << tr("and %n more", nullptr,
                        job.placeholder_issues - static_cast<int>(job.placeholder_notes.size()));
    }
    if (job.marked_for_review > 0)
        lines << tr(
            "%n entries are marked fuzzy with the source text kept: the translation was "
            "empty, or changed placeholders or line breaks.",
            nullptr, job.marked_for_review);
    return lines.join(QLatin1Char('\n'));
}

void DocumentQueueModel::setTrainedLanguages(std::vector<std::string> languages) {
    trained_ = std::move(languages);
    if (!ids_.isEmpty())
        emit dataChanged(index(0, LanguagesColumn), index(rowCount() - 1, LanguagesColumn));
}

bool DocumentQueueModel::untrainedPair(const DocumentJob& job) const {
    const Language* to = find_language(job.target_language.toStdString());
    const QString from =
        job.source_language.isEmpty() ? job.detected_language : job.source_language;
    return to && app::untrained_pair(
                     trained_, from.isEmpty() ? nullptr : find_language(from.toStdString()), *to);
}

QVariant DocumentQueueModel::data(const QModelIndex& index, int role) const {
    const std::optional<DocumentJob> j = job(index.row());
    if (!j || !index.isValid()) return {};
    switch (role) {
        case JobIdRole:
            return QVariant::fromValue(j->id);
        case StateRole:
            return static_cast<int>(j->state);
        case DoneRole:
            return j->segments_done;
        case TotalRole:
            return j->segments_total;
        default:
            break;
    }
    const int column = index.column();
    if (role == Qt::DisplayRole) {
        switch (column) {
            case FileColumn:
                return fileText(*j);
            case LanguagesColumn:
                return languagesText(*j);
            case ProgressColumn:
                if (j->segments_total == 0) return QString();
                return tr("%1 / %2").arg(j->segments_done).arg(j->segments_total);
            case ElapsedColumn:
                return j->elapsed_ms > 0 || j->state == JobState::Running
                           ? format_duration(j->elapsed_ms)
                           : QString();
            case RemainingColumn:
                if (j->state != JobState::Running) return QString();
                return j->remaining_ms ? format_duration(*j->remaining_ms) : QStringLiteral("–");
            case StateColumn:
                if (j->state == JobState::Queued && !queue_->engine())
                    return tr("Queued (waiting for the model)");
                return stateText(*j);
            default:
                return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (column) {
            case FileColumn:
                return j->output_path.isEmpty()
                           ? j->source_path
                           : tr("%1\n→ %2").arg(j->source_path, j->output_path);
            case LanguagesColumn: {
                QString tip = languagesText(*j) + QLatin1Char('\n') +
                              tr("%1 → %2").arg(j->source_language.isEmpty() ? j->detected_language
                                                                             : j->source_language,
                                                j->target_language);
                if (untrainedPair(*j)) {
                    tip += QLatin1Char('\n') +
                           tr("This model was trained to translate between English and %1 only: "
                              "expect a poor translation.")
                               .arg(QString::fromStdString(app::language_list(trained_)));
                }
                return tip;
            }
            case StateColumn:
                if (j->state == JobState::Failed) return j->error;
                if (j->state == JobState::Done) return checksText(*j);
                return stateText(*j);
            case RemainingColumn:
                return tr("Estimated from the rate so far");
            default:
                return {};
        }
    }
    if (role == Qt::DecorationRole && column == LanguagesColumn && untrainedPair(*j))
        return QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning);
    if (role == Qt::DecorationRole && column == StateColumn && needsReview(*j))
        return QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning);
    if (role == Qt::ForegroundRole && column == StateColumn && j->state == JobState::Failed)
        return QColor(0xc0, 0x1c, 0x28);
    if (role == Qt::TextAlignmentRole && (column == ElapsedColumn || column == RemainingColumn))
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant DocumentQueueModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case FileColumn:
            return tr("File");
        case LanguagesColumn:
            return tr("Languages");
        case ProgressColumn:
            return tr("Segments");
        case ElapsedColumn:
            return tr("Elapsed");
        case RemainingColumn:
            return tr("Remaining");
        case StateColumn:
            return tr("State");
        default:
            return QString();
    }
}

// ---- view ----

DocumentQueueView::DocumentQueueView(JobQueue* queue, QWidget* parent)
    : QWidget(parent),
      queue_(queue),
      model_(new DocumentQueueModel(queue, this)),
      table_(new QueueTable(this)),
      opener_([](const QUrl& url) { return QDesktopServices::openUrl(url); }) {
    addFiles_ = new QPushButton(tr("Add files…"), this);
    addFiles_->setToolTip(tr("Choose documents to translate into the target language"));
    addFolder_ = new QPushButton(tr("Add folder…"), this);
    addFolder_->setToolTip(
        tr("Translate every supported document in a folder and its "
           "subfolders"));
    clearFinished_ = new QPushButton(tr("Clear finished"), this);
    clearFinished_->setToolTip(tr("Remove the done, failed and cancelled rows (not their files)"));
    languages_ = new QLabel(this);
    languages_->setForegroundRole(QPalette::PlaceholderText);
    connect(addFiles_, &QPushButton::clicked, this, &DocumentQueueView::addFiles);
    connect(addFolder_, &QPushButton::clicked, this, &DocumentQueueView::addFolder);
    connect(clearFinished_, &QPushButton::clicked, queue_, &JobQueue::removeFinished);

    table_->setModel(model_);
    table_->setItemDelegateForColumn(DocumentQueueModel::ProgressColumn,
                                     new ProgressDelegate(table_));
    table_->setItemDelegateForColumn(DocumentQueueModel::ActionsColumn,
                                     new ActionsDelegate(this, model_));
    table_->setItemDelegateForColumn(DocumentQueueModel::StateColumn,
                                     new ElideRightDelegate(table_));
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    // Tab leaves the table (arrows move within it), so a long queue is no trap for the keyboard.
    table_->setTabKeyNavigation(false);
    table_->setShowGrid(false);
    table_->setAlternatingRowColors(true);
    table_->setWordWrap(false);
    table_->setTextElideMode(Qt::ElideMiddle);
    table_->setMouseTracking(true);
    table_->verticalHeader()->hide();
    table_->verticalHeader()->setDefaultSectionSize(kButtonSize + 8);
    QHeaderView* header = table_->horizontalHeader();
    header->setHighlightSections(false);
    header->setSectionResizeMode(QHeaderView::Interactive);
    header->setSectionResizeMode(DocumentQueueModel::StateColumn, QHeaderView::Stretch);
    header->setSectionResizeMode(DocumentQueueModel::ActionsColumn, QHeaderView::Fixed);
    const QFontMetrics fm = table_->fontMetrics();
    table_->setColumnWidth(DocumentQueueModel::FileColumn,
                           fm.horizontalAdvance(QLatin1Char('x')) * 28);
    table_->setColumnWidth(DocumentQueueModel::ProgressColumn, 150);
    table_->setColumnWidth(DocumentQueueModel::ElapsedColumn,
                           std::max(fm.horizontalAdvance(tr("Elapsed")),
                                    fm.horizontalAdvance(QStringLiteral("00:00:00"))) +
                               20);
    table_->setColumnWidth(DocumentQueueModel::RemainingColumn,
                           std::max(fm.horizontalAdvance(tr("Remaining")),
                                    fm.horizontalAdvance(QStringLiteral("00:00:00"))) +
                               20);
    table_->setColumnWidth(DocumentQueueModel::ActionsColumn,
                           kButtonGap + 3 * (kButtonSize + kButtonGap));
    table_->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(table_, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        if (QMenu* menu = contextMenuForSelection())
            menu->popup(table_->viewport()->mapToGlobal(pos));
    });
    connect(table_, &QAbstractItemView::doubleClicked, this, [this](const QModelIndex& index) {
        const std::optional<DocumentJob> j = model_->job(index.row());
        if (j && j->state == JobState::Done) opener_(QUrl::fromLocalFile(j->output_path));
    });
    auto* remove =
        new QShortcut(QKeySequence::Delete, table_, nullptr, nullptr, Qt::WidgetShortcut);
    connect(remove, &QShortcut::activated, this, [this] {
        for (quint64 id : selectedIds())
            trigger(id, Action::Remove);
    });

    auto* bar = new QHBoxLayout;
    bar->addWidget(addFiles_);
    bar->addWidget(addFolder_);
    bar->addSpacing(12);
    bar->addWidget(languages_, 1);
    bar->addWidget(clearFinished_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(table_, 1);

    // The languages are short and shown whole ("French (detected) → German", with the warning
    // icon): the column grows to them as rows come and languages are detected.
    fitLanguagesColumn();
    connect(queue_, &JobQueue::jobAdded, this, &DocumentQueueView::fitLanguagesColumn);
    connect(queue_, &JobQueue::jobChanged, this, &DocumentQueueView::fitLanguagesColumn);
    connect(model_, &QAbstractItemModel::dataChanged, this,
            [this](const QModelIndex& from, const QModelIndex& to) {
                if (from.column() <= DocumentQueueModel::LanguagesColumn &&
                    to.column() >= DocumentQueueModel::LanguagesColumn)
                    fitLanguagesColumn();
            });
    connect(queue_, &JobQueue::jobAdded, this, &DocumentQueueView::updateButtons);
    connect(queue_, &JobQueue::jobRemoved, this, &DocumentQueueView::updateButtons);
    connect(queue_, &JobQueue::jobChanged, this, &DocumentQueueView::updateButtons);
    updateButtons();
    updateLanguagesLabel();
}

void DocumentQueueView::fitLanguagesColumn() {
    // Grows only: a width the user chose that shows more is kept. (The view measures the rows
    // in sight, so this stays cheap for a long queue.)
    const int column = DocumentQueueModel::LanguagesColumn;
    const int needed = static_cast<QAbstractItemView*>(table_)->sizeHintForColumn(column);
    if (table_->columnWidth(column) < needed) table_->setColumnWidth(column, needed);
}

void DocumentQueueView::setLanguages(const QString& from, const QString& to) {
    from_ = from;
    to_ = to;
    updateLanguagesLabel();
}

void DocumentQueueView::updateLanguagesLabel() {
    const QString to = language_display_name(to_);
    const QString pair = from_.isEmpty() ? tr("Detect → %1").arg(to)
                                         : tr("%1 → %2").arg(language_display_name(from_), to);
    languages_->setText(tr("New documents: %1").arg(pair));
}

void DocumentQueueView::updateButtons() {
    clearFinished_->setEnabled(queue_->count() > queue_->pendingCount());
}

QList<quint64> DocumentQueueView::addPaths(const QStringList& paths) {
    const QList<quint64> ids = queue_->addPaths(paths, from_, to_);
    if (!ids.isEmpty()) table_->scrollTo(model_->index(model_->rowOf(ids.back()), 0));
    emit pathsAdded(static_cast<int>(ids.size()));
    return ids;
}

QString DocumentQueueView::fileDialogFilter() {
    QStringList patterns;
    for (const std::string& ext : app::documents::supported_extensions())
        patterns.append(QStringLiteral("*.") + QString::fromStdString(ext));
    return file_filter(tr("Documents"), patterns) + QStringLiteral(";;") +
           file_filter(tr("All files"), {QStringLiteral("*")});
}

void DocumentQueueView::addFiles() {
    const QStringList files = QFileDialog::getOpenFileNames(this, tr("Translate documents"),
                                                            QString(), fileDialogFilter());
    if (!files.isEmpty()) addPaths(files);
}

void DocumentQueueView::addFolder() {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Translate a folder"));
    if (!dir.isEmpty()) addPaths({dir});
}

bool DocumentQueueView::actionAvailable(const DocumentJob& job, Action action) {
    switch (action) {
        case Action::Cancel:
            return JobQueue::canCancel(job);
        case Action::Retry:
            return JobQueue::canRetry(job);
        case Action::OpenFolder:
        case Action::Remove:
            return true;
    }
    return false;
}

void DocumentQueueView::trigger(quint64 id, Action action) {
    const std::optional<DocumentJob> job = queue_->job(id);
    if (!job || !actionAvailable(*job, action)) return;
    switch (action) {
        case Action::Cancel:
            queue_->cancel(id);
            break;
        case Action::Retry:
            queue_->retry(id);
            break;
        case Action::OpenFolder: {
            const QString file = job->output_path.isEmpty() ? job->source_path : job->output_path;
            const QString folder = QFileInfo(file).absolutePath();
            if (!opener_(QUrl::fromLocalFile(folder)))
                emit problem(tr("Could not open %1: no file manager answered").arg(folder));
            break;
        }
        case Action::Remove:
            queue_->remove(id);
            break;
    }
}

QRect DocumentQueueView::actionRect(int row, Action action) const {
    const std::optional<DocumentJob> job = model_->job(row);
    if (!job || !actionAvailable(*job, action)) return {};
    const QRect cell = table_->visualRect(model_->index(row, DocumentQueueModel::ActionsColumn));
    return cell.isEmpty() ? QRect() : button_rect(cell, slot_of(action));
}

void DocumentQueueView::setUrlOpener(std::function<bool(const QUrl&)> opener) {
    opener_ = std::move(opener);
}

QList<quint64> DocumentQueueView::selectedIds() const {
    QList<quint64> ids;
    for (const QModelIndex& index : table_->selectionModel()->selectedRows())
        ids.append(model_->jobId(index.row()));
    return ids;
}

QMenu* DocumentQueueView::contextMenuForSelection() {
    const QList<quint64> ids = selectedIds();
    if (ids.isEmpty()) return nullptr;
    delete menu_;
    menu_ = new QMenu(this);
    auto add = [&](const QString& text, Action action) {
        QAction* a = menu_->addAction(text, this, [this, ids, action] {
            // One file manager window, not one per row.
            for (quint64 id : action == Action::OpenFolder ? ids.mid(0, 1) : ids)
                trigger(id, action);
        });
        a->setIcon(action_icon(action, style()));
        a->setData(QVariant::fromValue(action));
        a->setEnabled(std::any_of(ids.begin(), ids.end(), [&](quint64 id) {
            const std::optional<DocumentJob> j = queue_->job(id);
            return j && actionAvailable(*j, action);
        }));
    };
    add(tr("Cancel"), Action::Cancel);
    add(tr("Retry"), Action::Retry);
    add(tr("Open folder"), Action::OpenFolder);
    menu_->addSeparator();
    add(tr("Remove from the queue"), Action::Remove);
    return menu_;
}

}  // namespace mtdesk::ui
