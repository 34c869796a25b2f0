#pragma once
// The proper-noun casing guard: brand names, acronyms and mixed-case words of the source
// (iPhone, GitHub, macOS, NASA, USB) keep their exact casing where they appear in the
// translation. Models often write "Github", "iphone" or "Usb"; the guard puts the source's
// form back and changes nothing else.

#include <string>
#include <string_view>
#include <vector>

namespace mtdesk {

/// The words of `source` whose casing is part of the name: those with an upper-case (or
/// title-case) letter after their first character — mixed case (iPhone, GitHub, macOS,
/// YouTube, McDonald's) and acronyms of two or more capitals (NASA, USB, HTTP, MP3) — but
/// not ordinary capitalised words ("Open", "The"). A word is a run of letters, digits and
/// combining marks; words joined by a single '-', '.' or apostrophe also count as one word
/// (Wi-Fi, ASP.NET) besides their parts. Any script (ICU character properties). A word that
/// the source also writes with other casing ("Apple" and "APPLE") is ambiguous and left out.
/// In order of first appearance, without duplicates.
std::vector<std::string> casing_guarded_words(std::string_view source);

/// `translation` with every occurrence of a word of casing_guarded_words(source) that equals
/// it case-insensitively, stands on word boundaries (see Glossary::matching_entries; no
/// boundaries inside Chinese or Japanese text) and differs in casing replaced by the
/// source's exact form. Everything else stays byte for byte. Note that a short acronym also
/// matches an ordinary word of the same letters ("IT" in the source restores "it" too).
std::string apply_casing_guard(std::string_view source, std::string_view translation);

}  // namespace mtdesk
