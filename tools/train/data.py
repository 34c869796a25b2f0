"""Reading the demo corpus (tools/corpus/clean.py's output) and turning it into directions.

The corpus is either the packed tools/corpus/out/corpus.tar.xz or a folder with train.tsv,
dev.tsv and test.tsv. Rows: lang, package, source_en, target (backslash escapes for backslash,
tab and newline). Every row gives two translation directions: en -> lang (source_en is the
source) and lang -> en (the translation is the source and the English text the reference).
"""

from __future__ import annotations

import random
import sys
import tarfile
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools" / "corpus"))
from textclean import tsv_unescape as unescape  # noqa: E402  (the corpus writer's escaping)
DEFAULT_CORPUS = REPO / "tools" / "corpus" / "out" / "corpus.tar.xz"
DEFAULT_TOKENIZER = REPO / "tools" / "corpus" / "out" / "tokenizer"

# The demo model's languages: the six main ones in both directions with English, then the
# others the catalogs hold enough of (see docs/demo-model.md for the counts).
MAIN_LANGS = ["zh", "ja", "de", "fr", "es", "ru"]
DEFAULT_LANGS = MAIN_LANGS + ["zh-Hant", "ko", "pt", "it", "ug", "kk", "mn"]


class Row(NamedTuple):
    lang: str
    package: str
    en: str
    xx: str


class Example(NamedTuple):
    src_lang: str
    tgt_lang: str
    src: str
    tgt: str

    @property
    def direction(self) -> str:
        return f"{self.src_lang}-{self.tgt_lang}"


def _parse(text: str, langs: set[str] | None) -> list[Row]:
    rows = []
    for line in text.split("\n"):
        parts = line.split("\t")
        if len(parts) != 4 or (langs is not None and parts[0] not in langs):
            continue
        lang, pkg, en, xx = parts
        if "\\" in en:
            en = unescape(en)
        if "\\" in xx:
            xx = unescape(xx)
        rows.append(Row(lang, pkg, en, xx))
    return rows


def read_splits(corpus: Path, splits=("train", "dev", "test"),
                langs: list[str] | None = None) -> dict[str, list[Row]]:
    """{split: rows} from a corpus.tar.xz or a folder of <split>.tsv files."""
    want = set(langs) if langs else None
    out: dict[str, list[Row]] = {}
    corpus = Path(corpus)
    if corpus.is_dir():
        for sp in splits:
            out[sp] = _parse((corpus / f"{sp}.tsv").read_text(encoding="utf-8"), want)
        return out
    names = {f"{sp}.tsv": sp for sp in splits}
    with tarfile.open(corpus, "r:*") as tar:
        for member in tar:
            sp = names.get(Path(member.name).name)
            if sp is None:
                continue
            data = tar.extractfile(member).read()
            out[sp] = _parse(data.decode("utf-8"), want)
    missing = [sp for sp in splits if sp not in out]
    if missing:
        raise FileNotFoundError(f"{corpus}: no {', '.join(missing)} split")
    return out


def directions(rows: list[Row], langs: list[str]) -> list[Example]:
    """Both directions of every row whose language is in `langs`: en->xx and xx->en."""
    want = set(langs)
    out = []
    for r in rows:
        if r.lang in want:
            out.append(Example("en", r.lang, r.en, r.xx))
            out.append(Example(r.lang, "en", r.xx, r.en))
    return out


def sample_examples(rows, langs: list[str], per_direction: int, seed: int) -> list[Example]:
    """A seeded sample of at most `per_direction` rows per language (0 = all), as examples in
    both directions; evaluate.py and floors.py score the same sentences through it."""
    rng = random.Random(seed)
    by_lang = defaultdict(list)
    for r in rows:
        by_lang[r.lang].append(r)
    picked = []
    for lang in langs:
        rs = by_lang.get(lang, [])
        if per_direction and len(rs) > per_direction:
            rs = rng.sample(rs, per_direction)
        picked += rs
    return directions(picked, langs)
