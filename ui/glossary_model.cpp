#include "glossary_model.h"

#include <QComboBox>

#include <algorithm>

#include "mtdesk/translate/languages.h"

namespace mtdesk::ui {
namespace {

QString qstr(std::string_view s) {
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

QString language_label(const std::string& code) {
    if (code.empty()) return GlossaryModel::tr("Any language");
    const Language* l = find_language(code);
    return l ? QStringLiteral("%1 (%2)").arg(qstr(l->english_name), qstr(l->code)) : qstr(code);
}

}  // namespace

GlossaryModel::GlossaryModel(QObject* parent) : QAbstractTableModel(parent) {}

void GlossaryModel::setGlossary(const Glossary& glossary) {
    beginResetModel();
    terms_ = glossary.terms;
    endResetModel();
}

int GlossaryModel::addTerms(const Glossary& glossary) {
    std::vector<GlossaryTerm> fresh;
    for (const GlossaryTerm& t : glossary.terms)
        if (std::find(terms_.begin(), terms_.end(), t) == terms_.end() &&
            std::find(fresh.begin(), fresh.end(), t) == fresh.end())
            fresh.push_back(t);
    if (fresh.empty()) return 0;
    const int first = rowCount();
    beginInsertRows({}, first, first + static_cast<int>(fresh.size()) - 1);
    terms_.insert(terms_.end(), fresh.begin(), fresh.end());
    endInsertRows();
    return static_cast<int>(fresh.size());
}

int GlossaryModel::appendRow() {
    const int row = rowCount();
    beginInsertRows({}, row, row);
    terms_.emplace_back();
    endInsertRows();
    return row;
}

int GlossaryModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(terms_.size());
}

int GlossaryModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant GlossaryModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const GlossaryTerm& t = terms_[static_cast<std::size_t>(index.row())];
    if (role != Qt::DisplayRole && role != Qt::EditRole && role != Qt::ToolTipRole) return {};
    switch (index.column()) {
        case SourceLanguage:
            return role == Qt::EditRole ? qstr(t.source_lang) : language_label(t.source_lang);
        case TargetLanguage:
            return role == Qt::EditRole ? qstr(t.target_lang) : language_label(t.target_lang);
        case SourceTerm:
            return qstr(t.source);
        case TargetTerm:
            return qstr(t.target);
    }
    return {};
}

bool GlossaryModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!index.isValid() || index.row() >= rowCount() || role != Qt::EditRole) return false;
    GlossaryTerm& t = terms_[static_cast<std::size_t>(index.row())];
    QString text = value.toString();
    switch (index.column()) {
        case SourceLanguage:
        case TargetLanguage: {
            text = text.trimmed();
            std::string code;
            if (!text.isEmpty()) {
                const Language* l = find_language(text.toStdString());
                if (!l) return false;
                code = std::string(l->code);
            }
            (index.column() == SourceLanguage ? t.source_lang : t.target_lang) = code;
            break;
        }
        case SourceTerm:
        case TargetTerm: {
            // The terminology prompt has one term per line.
            for (QChar c : {QChar('\t'), QChar('\n'), QChar('\r')})
                text.replace(c, QChar(' '));
            (index.column() == SourceTerm ? t.source : t.target) = text.trimmed().toStdString();
            break;
        }
        default:
            return false;
    }
    emit dataChanged(index, index, {Qt::DisplayRole, Qt::EditRole, Qt::ToolTipRole});
    return true;
}

Qt::ItemFlags GlossaryModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    return Qt::ItemIsSelectable | Qt::ItemIsEnabled | Qt::ItemIsEditable;
}

QVariant GlossaryModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (role != Qt::DisplayRole) return {};
    if (orientation == Qt::Vertical) return section + 1;
    switch (section) {
        case SourceLanguage:
            return tr("Source language");
        case TargetLanguage:
            return tr("Target language");
        case SourceTerm:
            return tr("Source term");
        case TargetTerm:
            return tr("Target term");
    }
    return {};
}

bool GlossaryModel::removeRows(int row, int count, const QModelIndex& parent) {
    if (parent.isValid() || row < 0 || count < 1 || row + count > rowCount()) return false;
    beginRemoveRows({}, row, row + count - 1);
    terms_.erase(terms_.begin() + row, terms_.begin() + row + count);
    endRemoveRows();
    return true;
}

QWidget* LanguageDelegate::createEditor(QWidget* parent, const QStyleOptionViewItem&,
                                        const QModelIndex&) const {
    auto* combo = new QComboBox(parent);
    combo->addItem(GlossaryModel::tr("Any language"), QString());
    for (const Language& l : languages())
        combo->addItem(QStringLiteral("%1 (%2)").arg(qstr(l.english_name), qstr(l.code)),
                       qstr(l.code));
    return combo;
}

void LanguageDelegate::setEditorData(QWidget* editor, const QModelIndex& index) const {
    auto* combo = static_cast<QComboBox*>(editor);
    combo->setCurrentIndex(std::max(0, combo->findData(index.data(Qt::EditRole).toString())));
}

void LanguageDelegate::setModelData(QWidget* editor, QAbstractItemModel* model,
                                    const QModelIndex& index) const {
    model->setData(index, static_cast<QComboBox*>(editor)->currentData().toString(), Qt::EditRole);
}

}  // namespace mtdesk::ui
