"""Locale directory names of gettext catalogs -> the language codes of Hunyuan-MT / HY-MT1.5.

Only languages the models know are mapped; everything else (en_GB, sr@latin, eo, ...) maps to
None and is skipped. Regional variants fold into their language (de_CH -> de, es_MX -> es),
except Chinese, whose script decides: zh_CN / zh_SG / zh_Hans -> zh, zh_TW / zh_HK / zh_Hant ->
zh-Hant. "@variant" locales (sr@latin, uz@cyrillic, ca@valencia, ...) are skipped: a script
or orthography variant of a language would mix two writing systems under one code.
"""

from __future__ import annotations

# Hunyuan-MT codes of the 38 languages (same table as engine/translate/languages.cpp).
HUNYUAN_CODES = [
    "zh", "en", "fr", "pt", "es", "ja", "tr", "ru", "ar", "ko", "th", "it", "de", "vi", "ms",
    "id", "tl", "hi", "zh-Hant", "pl", "cs", "nl", "km", "my", "fa", "gu", "ur", "te", "mr",
    "he", "bn", "ta", "uk", "bo", "kk", "mn", "ug", "yue",
]

_CHINESE = {
    "zh": "zh", "zh_cn": "zh", "zh_sg": "zh", "zh_hans": "zh", "zh_hans_cn": "zh",
    "zh_tw": "zh-Hant", "zh_hk": "zh-Hant", "zh_mo": "zh-Hant", "zh_hant": "zh-Hant",
    "zh_hant_tw": "zh-Hant", "zh_hant_hk": "zh-Hant",
}
# Gettext/ISO 639 codes that differ from the Hunyuan ones.
_ALIASES = {"fil": "tl", "iw": "he", "in": "id", "nb": None, "yue": "yue"}


def locale_to_code(locale_dir: str) -> str | None:
    """'zh_CN' -> 'zh', 'pt_BR' -> 'pt', 'de' -> 'de', 'sr@latin' -> None, 'en_GB' -> None."""
    name = locale_dir.strip()
    if not name or "@" in name:
        return None
    name = name.split(".")[0]                      # zh_CN.GB2312 -> zh_CN
    key = name.replace("-", "_").lower()           # LibreOffice writes zh-CN, pt-BR
    if key in _CHINESE:
        return _CHINESE[key]
    if key.startswith("zh_"):
        return None
    base = key.split("_")[0]
    if base in _ALIASES:
        return _ALIASES[base]
    if base == "en":
        return None                                # English is the source side
    return base if base in HUNYUAN_CODES else None


if __name__ == "__main__":
    for t in ["zh_CN", "zh_TW", "zh_HK", "zh-CN", "pt_BR", "pt", "de_CH", "sr@latin", "en_GB",
              "ug", "kk", "bo", "mn", "fil", "nb", "eo", "zh_CN.GB2312"]:
        print(t, "->", locale_to_code(t))
