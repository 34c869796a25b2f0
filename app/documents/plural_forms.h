#pragma once
// gettext's Plural-Forms of the target languages, so that a translated .po has as many
// msgstr[N] forms as its language needs (Russian three, Chinese one), its header saying so;
// and the number of plural forms Qt's .ts files have for them.

#include <optional>
#include <string>
#include <string_view>

namespace mtdesk::app::documents {

/// A language's plural forms as a PO header states them.
struct PluralForms {
    int nplurals = 2;
    std::string_view plural;  ///< the C expression: "(n != 1)"
    /// The form used for n == 1 (Arabic: 1, its form 0 is n == 0).
    int one = 0;
    /// Whether that form is used for n == 1 only. Not so in Russian (1, 21, 31, ...), French
    /// (0 and 1) or a language with one form: there the form also stands for other numbers.
    bool one_only = true;

    /// "nplurals=2; plural=(n != 1);"
    std::string header_value() const;
};

/// The plural forms gettext catalogs of `language` use (a code of languages(): "ru",
/// "zh-Hant"); nullopt for a code not in the table. The rules are those of the GNU gettext
/// manual ("Plural forms") and the Unicode CLDR plural rules, in the form Debian's catalogs of
/// these languages carry.
std::optional<PluralForms> gettext_plural_forms(std::string_view language);

/// How many <numerusform>s a Qt Linguist .ts message has in `language` (a code of
/// languages()), as Qt's own table (Linguist, lrelease) has it; nullopt for a code not in the
/// table. Mostly gettext's nplurals; Qt differs for a few languages.
std::optional<int> qt_numerus_forms(std::string_view language);

}  // namespace mtdesk::app::documents
