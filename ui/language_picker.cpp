#include "language_picker.h"

#include <QAbstractItemView>
#include <QAbstractProxyModel>
#include <QCompleter>
#include <QFocusEvent>
#include <QLineEdit>
#include <QLocale>
#include <QSignalBlocker>

#include "mtdesk/translate/languages.h"

namespace mtdesk::ui {
namespace {

QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

bool chinese_ui() {
    return QLocale().language() == QLocale::Chinese;
}

QString display_text(const Language& l) {
    const QString name = chinese_ui() ? qs(l.chinese_name) : qs(l.english_name);
    const QString native = qs(l.native_name);
    return native == name ? name : name + QStringLiteral(" · ") + native;
}

// Keeps the popup's current row on the filter's best match (its row 0). The stock completer
// moves it to the first row whose text starts with what was typed, after every key, so "de" +
// Enter took "Detect…" instead of German, whose code "de" matches exactly.
class BestMatchCompleter : public QCompleter {
  public:
    using QCompleter::QCompleter;
    QStringList splitPath(const QString&) const override { return {QString()}; }
};

}  // namespace

QString language_display_name(const QString& code) {
    const Language* l = find_language(code.toStdString());
    if (!l) return code;
    return chinese_ui() ? qs(l->chinese_name) : qs(l->english_name);
}

QStandardItemModel* make_language_model(bool with_detect, QObject* parent) {
    auto* model = new QStandardItemModel(parent);
    if (with_detect) {
        auto* item = new QStandardItem(LanguagePicker::tr("Detect language"));
        item->setData(QString(), CodeRole);
        item->setData(QStringLiteral("auto detect"), EnglishNameRole);
        item->setData(QStringLiteral("自动检测"), ChineseNameRole);
        item->setData(LanguagePicker::tr("Detect language"), NativeNameRole);
        model->appendRow(item);
    }
    for (const Language& l : languages()) {
        auto* item = new QStandardItem(display_text(l));
        item->setData(qs(l.code), CodeRole);
        item->setData(qs(l.english_name), EnglishNameRole);
        item->setData(qs(l.chinese_name), ChineseNameRole);
        item->setData(qs(l.native_name), NativeNameRole);
        item->setToolTip(
            QStringLiteral("%1 — %2 — %3 — %4")
                .arg(qs(l.code), qs(l.english_name), qs(l.chinese_name), qs(l.native_name)));
        model->appendRow(item);
    }
    return model;
}

void LanguageFilterModel::setQuery(const QString& query) {
    const QString q = query.trimmed();
    if (q == query_) return;
    query_ = q;
    invalidate();
    sort(0);
}

int LanguageFilterModel::rank(int source_row) const {
    if (query_.isEmpty()) return 0;
    const QModelIndex i = sourceModel()->index(source_row, 0);
    const QString code = i.data(CodeRole).toString();
    // find_language knows the aliases people type ("zh-CN", "fil", "pt-BR").
    if (!code.isEmpty()) {
        if (const Language* l = find_language(query_.toStdString()); l && qs(l->code) == code)
            return 0;
    }
    int best = -1;
    for (int role : {int(CodeRole), int(EnglishNameRole), int(ChineseNameRole), int(NativeNameRole),
                     int(Qt::DisplayRole)}) {
        const QString field = i.data(role).toString();
        if (field.isEmpty()) continue;
        int r = -1;
        if (field.compare(query_, Qt::CaseInsensitive) == 0)
            r = 0;
        else if (field.startsWith(query_, Qt::CaseInsensitive))
            r = 1;
        else if (field.contains(query_, Qt::CaseInsensitive))
            r = 2;
        if (r >= 0 && (best < 0 || r < best)) best = r;
    }
    return best;
}

bool LanguageFilterModel::filterAcceptsRow(int source_row, const QModelIndex&) const {
    return rank(source_row) >= 0;
}

bool LanguageFilterModel::lessThan(const QModelIndex& left, const QModelIndex& right) const {
    const int a = rank(left.row()), b = rank(right.row());
    if (a != b) return a < b;
    return left.row() < right.row();
}

LanguagePicker::LanguagePicker(bool with_detect, QWidget* parent)
    : QComboBox(parent), with_detect_(with_detect) {
    model_ = make_language_model(with_detect, this);
    setModel(model_);
    setEditable(true);
    setInsertPolicy(QComboBox::NoInsert);
    setMaxVisibleItems(16);
    setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    setMinimumContentsLength(16);

    filter_ = new LanguageFilterModel(this);
    filter_->setSourceModel(model_);
    filter_->sort(0);
    completer_ = new BestMatchCompleter(filter_, this);
    completer_->setCompletionMode(QCompleter::UnfilteredPopupCompletion);
    completer_->setCaseSensitivity(Qt::CaseInsensitive);
    completer_->setMaxVisibleItems(12);
    setCompleter(completer_);
    lineEdit()->setPlaceholderText(tr("Type a code or a name"));
    lineEdit()->setClearButtonEnabled(false);

    lineEdit()->installEventFilter(this);
    connect(lineEdit(), &QLineEdit::textEdited, this, &LanguagePicker::onTextEdited);
    connect(completer_, qOverload<const QModelIndex&>(&QCompleter::activated), this,
            [this](const QModelIndex& index) {
                // index is in the completer's completion model, over filter_ over model_.
                auto* completion =
                    qobject_cast<QAbstractProxyModel*>(completer_->completionModel());
                QModelIndex i = completion ? completion->mapToSource(index) : index;
                if (i.model() == filter_) i = filter_->mapToSource(i);
                if (i.isValid() && i.model() == model_) setCurrentIndex(i.row());
                restoreText();
            });
    connect(lineEdit(), &QLineEdit::returnPressed, this, [this] {
        const QString text = lineEdit()->text();
        if (text != itemText(currentIndex())) acceptQuery(text);
        restoreText();
    });
    connect(lineEdit(), &QLineEdit::editingFinished, this, &LanguagePicker::restoreText);
    connect(this, &QComboBox::currentIndexChanged, this,
            [this](int) { emit languageChanged(currentCode()); });
}

// A click into the picker selects its text, so that typing replaces the language shown rather
// than appending to it ("Chinese · 中文Tibetan" matches nothing). Done on the release: the press
// that gave the focus also places the cursor. (The combo box has the focus for its line edit.)
void LanguagePicker::focusInEvent(QFocusEvent* event) {
    selectOnRelease_ = event->reason() == Qt::MouseFocusReason;
    QComboBox::focusInEvent(event);
}

void LanguagePicker::focusOutEvent(QFocusEvent* event) {
    selectOnRelease_ = false;
    QComboBox::focusOutEvent(event);
}

bool LanguagePicker::eventFilter(QObject* watched, QEvent* event) {
    if (watched == lineEdit() && event->type() == QEvent::MouseButtonRelease && selectOnRelease_) {
        selectOnRelease_ = false;
        if (!lineEdit()->hasSelectedText()) lineEdit()->selectAll();  // unless dragged
    }
    return QComboBox::eventFilter(watched, event);
}

void LanguagePicker::onTextEdited(const QString& text) {
    filter_->setQuery(text);
    if (text.trimmed().isEmpty()) return;
    completer_->setCompletionPrefix(QString());
    completer_->complete();
    // Highlight the best match so Enter takes it, without the completer writing it into the
    // line edit (which it does on every highlight change).
    if (QAbstractItemView* popup = completer_->popup()) {
        const QSignalBlocker block(popup->selectionModel());
        popup->setCurrentIndex(completer_->completionModel()->index(0, 0));
    }
}

bool LanguagePicker::acceptQuery(const QString& query) {
    filter_->setQuery(query);
    bool found = false;
    if (filter_->rowCount() > 0) {
        setCurrentIndex(filter_->mapToSource(filter_->index(0, 0)).row());
        found = true;
    }
    restoreText();
    return found;
}

void LanguagePicker::restoreText() {
    if (lineEdit() && lineEdit()->text() != itemText(currentIndex()))
        lineEdit()->setText(itemText(currentIndex()));
}

QString LanguagePicker::currentCode() const {
    return currentIndex() < 0 ? QString() : itemData(currentIndex(), CodeRole).toString();
}

bool LanguagePicker::setCurrentCode(const QString& code) {
    QString wanted = code;
    if (!code.isEmpty()) {
        const Language* l = find_language(code.toStdString());
        if (!l) return false;
        wanted = qs(l->code);
    } else if (!with_detect_) {
        return false;
    }
    for (int row = 0; row < model_->rowCount(); ++row) {
        if (model_->item(row)->data(CodeRole).toString() == wanted) {
            setCurrentIndex(row);
            restoreText();
            return true;
        }
    }
    return false;
}

QString LanguagePicker::detectText() const {
    if (detected_.isEmpty()) return tr("Detect language");
    return tr("Detect: %1").arg(language_display_name(detected_));
}

void LanguagePicker::setDetected(const QString& code) {
    if (!with_detect_ || code == detected_) return;
    detected_ = code;
    model_->item(0)->setText(detectText());
    if (!lineEdit()->hasFocus()) restoreText();
}

}  // namespace mtdesk::ui
