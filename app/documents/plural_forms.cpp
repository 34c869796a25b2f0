#include "documents/plural_forms.h"

#include <array>

namespace mtdesk::app::documents {

namespace {

// For each kind: nplurals, the expression, the form of n == 1, whether it is for 1 only.
constexpr PluralForms kOne{1, "0", 0, false};
constexpr PluralForms kNotOne{2, "(n != 1)", 0, true};
constexpr PluralForms kAboveOne{2, "(n > 1)", 0, false};  // form 0: 0 and 1
// Russian, Ukrainian: 1, 21, 31 ... / 2-4, 22-24 ... / the rest.
constexpr PluralForms kEastSlavic{
    3, "(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2)", 0,
    false};
constexpr PluralForms kPolish{
    3, "(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2)", 0, true};
constexpr PluralForms kCzech{3, "(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2", 0, true};
// Form 0 is n == 0, form 1 is n == 1.
constexpr PluralForms kArabic{
    6, "(n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : n%100>=3 && n%100<=10 ? 3 : n%100>=11 ? 4 : 5)", 1, true};

struct Row {
    std::string_view code;
    PluralForms forms;
};

constexpr std::array kTable{
    Row{"zh", kOne},      Row{"zh-Hant", kOne},   Row{"yue", kOne},       Row{"ja", kOne},
    Row{"ko", kOne},      Row{"vi", kOne},        Row{"th", kOne},        Row{"ms", kOne},
    Row{"id", kOne},      Row{"km", kOne},        Row{"my", kOne},        Row{"bo", kOne},
    Row{"ug", kOne},      Row{"en", kNotOne},     Row{"de", kNotOne},     Row{"es", kNotOne},
    Row{"it", kNotOne},   Row{"nl", kNotOne},     Row{"pt", kNotOne},     Row{"tr", kNotOne},
    Row{"hi", kNotOne},   Row{"gu", kNotOne},     Row{"ur", kNotOne},     Row{"te", kNotOne},
    Row{"mr", kNotOne},   Row{"he", kNotOne},     Row{"bn", kNotOne},     Row{"ta", kNotOne},
    Row{"kk", kNotOne},   Row{"mn", kNotOne},     Row{"fr", kAboveOne},   Row{"tl", kAboveOne},
    Row{"fa", kAboveOne}, Row{"ru", kEastSlavic}, Row{"uk", kEastSlavic}, Row{"pl", kPolish},
    Row{"cs", kCzech},    Row{"ar", kArabic},
};

// Where Qt's numerus table (qttools, src/linguist/shared/numerus.cpp) differs from gettext's
// rules: Qt gives Turkish and Persian one form, Khmer and Uyghur two. lrelease drops or adds
// forms to match its table, so .ts files follow Qt.
struct QtRow {
    std::string_view code;
    int forms;
};
constexpr std::array kQtDifferences{QtRow{"tr", 1}, QtRow{"fa", 1}, QtRow{"km", 2}, QtRow{"ug", 2}};

}  // namespace

std::string PluralForms::header_value() const {
    return "nplurals=" + std::to_string(nplurals) + "; plural=" + std::string(plural) + ";";
}

std::optional<PluralForms> gettext_plural_forms(std::string_view language) {
    for (const Row& r : kTable)
        if (r.code == language) return r.forms;
    return std::nullopt;
}

std::optional<int> qt_numerus_forms(std::string_view language) {
    for (const QtRow& r : kQtDifferences)
        if (r.code == language) return r.forms;
    if (const std::optional<PluralForms> f = gettext_plural_forms(language)) return f->nplurals;
    return std::nullopt;
}

}  // namespace mtdesk::app::documents
