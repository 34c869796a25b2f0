#pragma once
// A searchable language picker: an editable QComboBox over the 38 languages whose completer
// matches what is typed against the code, the English, the Chinese and the native name
// ("bo", "Tibetan", "藏语", "བོད་ཡིག" all find Tibetan). The source side has "Detect" first.

#include <QComboBox>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>

class QCompleter;

namespace mtdesk::ui {

/// Item roles of the language model.
enum LanguageRole {
    CodeRole = Qt::UserRole + 1,  ///< "bo"; "" for Detect
    EnglishNameRole,
    ChineseNameRole,
    NativeNameRole,
};

/// The languages as items (display text in the UI's language, the four fields as roles),
/// optionally with "Detect" as row 0.
QStandardItemModel* make_language_model(bool with_detect, QObject* parent);

/// Rows matching a query in any of the four fields, best first: an exact code or name (or an
/// alias such as "zh-CN", "fil") before a prefix before a substring; ties keep the table order.
/// An empty query keeps every row in order.
class LanguageFilterModel : public QSortFilterProxyModel {
    Q_OBJECT

  public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    void setQuery(const QString& query);
    QString query() const { return query_; }
    /// 0 exact, 1 prefix, 2 substring, -1 no match.
    int rank(int source_row) const;

  protected:
    bool filterAcceptsRow(int source_row, const QModelIndex& source_parent) const override;
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

  private:
    QString query_;
};

class LanguagePicker : public QComboBox {
    Q_OBJECT

  public:
    explicit LanguagePicker(bool with_detect, QWidget* parent = nullptr);

    /// The chosen language's code; "" for Detect.
    QString currentCode() const;
    /// Selects `code` ("" = Detect on the source side). Returns false when not in the list.
    bool setCurrentCode(const QString& code);
    /// Shows what Detect found ("" = nothing yet) in the Detect entry.
    void setDetected(const QString& code);
    QString detected() const { return detected_; }
    /// Selects the best match for `query`, as pressing Enter after typing it does.
    bool acceptQuery(const QString& query);

    LanguageFilterModel* filterModel() const { return filter_; }

  signals:
    void languageChanged(const QString& code);

  protected:
    /// A click that gives the picker the focus selects its text (on the button's release).
    void focusInEvent(QFocusEvent* event) override;
    void focusOutEvent(QFocusEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void onTextEdited(const QString& text);
    void restoreText();
    QString detectText() const;

    QStandardItemModel* model_;
    LanguageFilterModel* filter_;
    QCompleter* completer_;
    bool with_detect_;
    bool selectOnRelease_ = false;  // the focus came with a mouse press
    QString detected_;
};

/// The language's name in the UI's language ("Tibetan" / "藏语").
QString language_display_name(const QString& code);

}  // namespace mtdesk::ui
