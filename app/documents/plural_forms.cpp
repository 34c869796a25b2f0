#include "documents/plural_forms.h"

#include <array>

namespace mtdesk::app::documents {

namespace {

constexpr std::string_view kOne = "0";
constexpr std::string_view kNotOne = "(n != 1)";
constexpr std::string_view kAboveOne = "(n > 1)";
// Russian, Ukrainian: 1, 21, 31 ... / 2-4, 22-24 ... / the rest.
constexpr std::string_view kEastSlavic =
    "(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2)";
constexpr std::string_view kPolish =
    "(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2)";
constexpr std::string_view kCzech = "(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2";
constexpr std::string_view kArabic =
    "(n==0 ? 0 : n==1 ? 1 : n==2 ? 2 : n%100>=3 && n%100<=10 ? 3 : n%100>=11 ? 4 : 5)";

struct Row {
    std::string_view code;
    PluralForms forms;
};

constexpr std::array kTable{
    Row{"zh", {1, kOne}},        Row{"zh-Hant", {1, kOne}},   Row{"yue", {1, kOne}},
    Row{"ja", {1, kOne}},        Row{"ko", {1, kOne}},        Row{"vi", {1, kOne}},
    Row{"th", {1, kOne}},        Row{"ms", {1, kOne}},        Row{"id", {1, kOne}},
    Row{"km", {1, kOne}},        Row{"my", {1, kOne}},        Row{"bo", {1, kOne}},
    Row{"ug", {1, kOne}},        Row{"en", {2, kNotOne}},     Row{"de", {2, kNotOne}},
    Row{"es", {2, kNotOne}},     Row{"it", {2, kNotOne}},     Row{"nl", {2, kNotOne}},
    Row{"pt", {2, kNotOne}},     Row{"tr", {2, kNotOne}},     Row{"hi", {2, kNotOne}},
    Row{"gu", {2, kNotOne}},     Row{"ur", {2, kNotOne}},     Row{"te", {2, kNotOne}},
    Row{"mr", {2, kNotOne}},     Row{"he", {2, kNotOne}},     Row{"bn", {2, kNotOne}},
    Row{"ta", {2, kNotOne}},     Row{"kk", {2, kNotOne}},     Row{"mn", {2, kNotOne}},
    Row{"fr", {2, kAboveOne}},   Row{"tl", {2, kAboveOne}},   Row{"fa", {2, kAboveOne}},
    Row{"ru", {3, kEastSlavic}}, Row{"uk", {3, kEastSlavic}}, Row{"pl", {3, kPolish}},
    Row{"cs", {3, kCzech}},      Row{"ar", {6, kArabic}},
};

}  // namespace

std::string PluralForms::header_value() const {
    return "nplurals=" + std::to_string(nplurals) + "; plural=" + std::string(plural) + ";";
}

std::optional<PluralForms> gettext_plural_forms(std::string_view language) {
    for (const Row& r : kTable)
        if (r.code == language) return r.forms;
    return std::nullopt;
}

}  // namespace mtdesk::app::documents
