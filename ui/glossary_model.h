#pragma once
// The glossary table of the settings dialog: a model over GlossaryTerm rows (source language,
// target language, source term, target term) and a delegate that picks languages from the
// models' list.

#include <QAbstractTableModel>
#include <QStyledItemDelegate>

#include "mtdesk/translate/glossary.h"

namespace mtdesk::ui {

/// Editable table of glossary terms. Language cells hold a language code (Qt::EditRole) and
/// show its English name (Qt::DisplayRole), "" = any language; term cells hold the term.
class GlossaryModel : public QAbstractTableModel {
    Q_OBJECT

  public:
    enum Column { SourceLanguage, TargetLanguage, SourceTerm, TargetTerm, ColumnCount };

    explicit GlossaryModel(QObject* parent = nullptr);

    /// Replaces every row.
    void setGlossary(const Glossary& glossary);
    /// Every row as it is, incomplete ones included.
    const std::vector<GlossaryTerm>& terms() const { return terms_; }
    /// Appends the terms that are not in the table yet; returns how many were added.
    int addTerms(const Glossary& glossary);
    /// Appends an empty row; returns its index.
    int appendRow();

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    /// Language cells accept a code or name that find_language() knows, or "" (any); terms
    /// are trimmed, tabs and line breaks become spaces. Returns false for an unknown language.
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    bool removeRows(int row, int count, const QModelIndex& parent = {}) override;

  private:
    std::vector<GlossaryTerm> terms_;
};

/// Edits a language cell with a combo box: "Any language" and the 38 languages.
class LanguageDelegate : public QStyledItemDelegate {
    Q_OBJECT

  public:
    using QStyledItemDelegate::QStyledItemDelegate;
    QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option,
                          const QModelIndex& index) const override;
    void setEditorData(QWidget* editor, const QModelIndex& index) const override;
    void setModelData(QWidget* editor, QAbstractItemModel* model,
                      const QModelIndex& index) const override;
};

}  // namespace mtdesk::ui
