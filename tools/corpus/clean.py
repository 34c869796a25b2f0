#!/usr/bin/env python3
"""Cleans the extracted pairs and writes the train / dev / test splits of the demo corpus.

Input: out/raw/<code>.jsonl.gz from extract.py. Per pair (textclean.clean_pair): translator
credits dropped, glib "Qualifier|" prefixes and keyboard mnemonics removed ("_Open", "&File",
"打开(_O)"), printf / Qt / Python placeholders kept as they are and required to match on both
sides, Unicode NFC, source 1-200 characters (translation at most 300), something besides
placeholders and punctuation on both sides, the English side in Latin letters, the
translation in its language's script, a length-ratio window (wider for CJK). Then
deduplication on (language, source, translation), at most --max-targets different
translations kept per English source.

Splits are by package: the packages of TEST_PACKAGES and DEV_PACKAGES never contribute to
training. A pair found in a training package is a training pair, even when a test package has
it too; test and dev pairs whose English source or whose translation also occurs in training
(for that language) are dropped, so every test string is unseen text.

Output (out/corpus/): all_train.tsv, all_dev.tsv, all_test.tsv for every language, with the
columns
    lang  package  source_en  target
(UTF-8, no header; backslash, tab and newline escaped as \\\\, \\t, \\n), counts.json, and the
packed corpus out/corpus.tar.xz: train.tsv, dev.tsv, test.tsv and counts.json for the
languages of --pack-langs, the training split subsampled (seeded) to at most
--max-train-per-lang pairs per language and sorted by English source, so that xz finds the
same English text of several languages next to each other.

    python3 tools/corpus/clean.py
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import random
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from textclean import clean_pair, tsv_escape  # noqa: E402

# Held-out packages: mid-size, well translated, from several desktops and tool families, so that
# each main language gets well over 500 unseen test pairs (and the minority languages some).
TEST_PACKAGES = [
    "gedit-common",          # GNOME text editor
    "gnome-terminal-data",   # GNOME terminal
    "evince-common",         # GNOME document viewer
    "k3b-i18n",              # KDE disc burning
    "filezilla-common",      # FTP client (wxWidgets)
    "gnupg-l10n",            # command-line tool messages
    "shotwell-common",       # photo manager
    "xfce4-settings",        # Xfce settings
]
# Languages of the packed corpus (the demo model's languages, see docs/demo-model.md).
PACK_LANGS = ["zh", "ja", "de", "fr", "es", "ru", "zh-Hant", "ko", "pt", "it", "ug", "kk", "mn"]
DEV_PACKAGES = [
    "gnome-system-monitor",
    "konsole",
    "mousepad",
    "wget",
    "gnome-calculator",
]


def load_raw(path: Path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            yield json.loads(line)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--raw", type=Path, default=HERE / "out" / "raw")
    ap.add_argument("--out", type=Path, default=HERE / "out" / "corpus")
    ap.add_argument("--pack", type=Path, default=HERE / "out" / "corpus.tar.xz")
    ap.add_argument("--max-targets", type=int, default=4,
                    help="most different translations kept per (language, English source)")
    ap.add_argument("--min-train", type=int, default=20000,
                    help="languages with fewer training pairs are marked as too small")
    ap.add_argument("--langs", help="comma-separated codes to process (default: all)")
    ap.add_argument("--pack-langs", default=",".join(PACK_LANGS))
    ap.add_argument("--max-train-per-lang", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-pack", action="store_true")
    args = ap.parse_args()

    files = sorted(args.raw.glob("*.jsonl.gz"))
    if args.langs:
        want = set(args.langs.split(","))
        files = [f for f in files if f.name[: -len(".jsonl.gz")] in want]
    if not files:
        sys.exit(f"no extracted pairs in {args.raw}: run tools/corpus/extract.py first")
    args.out.mkdir(parents=True, exist_ok=True)
    test_pk, dev_pk = set(TEST_PACKAGES), set(DEV_PACKAGES)
    assert not test_pk & dev_pk

    outs = {s: open(args.out / f"all_{s}.tsv", "w", encoding="utf-8", newline="\n")
            for s in ("train", "dev", "test")}
    counts: dict[str, dict] = {}
    t0 = time.time()
    for path in files:
        lang = path.name[: -len(".jsonl.gz")]
        drops = collections.Counter()
        raw = 0
        pkgs: dict[tuple[str, str], set] = {}      # (src, tgt) -> packages
        for pkg, _domain, _locale, _ctx, src, tgt in load_raw(path):
            raw += 1
            pair, why = clean_pair(lang, src, tgt)
            if pair is None:
                drops[why] += 1
                continue
            pkgs.setdefault(pair, set()).add(pkg)
        unique = len(pkgs)

        split_of = {}
        for pair, ps in pkgs.items():
            if ps - test_pk - dev_pk:
                split_of[pair] = "train"
            elif ps & dev_pk:
                split_of[pair] = "dev"
            else:
                split_of[pair] = "test"
        train_src = {s for (s, t), sp in split_of.items() if sp == "train"}
        train_tgt = {t for (s, t), sp in split_of.items() if sp == "train"}
        test_src = {s for (s, t), sp in split_of.items() if sp == "test"}
        test_tgt = {t for (s, t), sp in split_of.items() if sp == "test"}
        rows = {"train": [], "dev": [], "test": []}
        per_src = collections.Counter()
        for (s, t), sp in sorted(split_of.items()):
            if sp != "train" and (s in train_src or t in train_tgt):
                drops["seen_in_train"] += 1
                continue
            if sp == "dev" and (s in test_src or t in test_tgt):
                drops["seen_in_test"] += 1
                continue
            per_src[s] += 1
            if per_src[s] > args.max_targets:
                drops["too_many_targets"] += 1
                continue
            # the package column names one package that has the pair (the first, sorted,
            # among those of its split)
            ps = pkgs[(s, t)]
            if sp == "train":
                ps = ps - test_pk - dev_pk
            elif sp == "dev":
                ps = ps & dev_pk
            rows[sp].append((min(ps), s, t))
        enough = len(rows["train"]) >= args.min_train
        for sp, rs in rows.items():
            for pkg, s, t in rs:
                outs[sp].write(f"{lang}\t{pkg}\t{tsv_escape(s)}\t{tsv_escape(t)}\n")
        counts[lang] = {
            "raw": raw, "clean_unique": unique,
            "train": len(rows["train"]), "dev": len(rows["dev"]), "test": len(rows["test"]),
            "enough": enough, "dropped": dict(drops.most_common()),
        }
        print(f"{lang:8s} raw {raw:8d}  unique {unique:7d}  train {len(rows['train']):7d}  "
              f"dev {len(rows['dev']):6d}  test {len(rows['test']):6d}  "
              f"{'' if enough else '(few) '}{time.time() - t0:.0f} s", flush=True)
    for f in outs.values():
        f.close()

    summary = {
        "test_packages": TEST_PACKAGES, "dev_packages": DEV_PACKAGES,
        "columns": ["lang", "package", "source_en", "target"],
        "escaping": "backslash, tab and newline as \\\\, \\t, \\n",
        "languages": dict(sorted(counts.items(), key=lambda kv: -kv[1]["train"])),
    }
    (args.out / "counts.json").write_text(json.dumps(summary, ensure_ascii=False, indent=1))
    if not args.no_pack:
        pack(args, summary)
    return 0


def pack(args, summary) -> None:
    langs = [l for l in args.pack_langs.split(",") if l]
    packed = {}
    for sp in ("train", "dev", "test"):
        by_lang = collections.defaultdict(list)
        with open(args.out / f"all_{sp}.tsv", encoding="utf-8") as f:
            for line in f:
                lang = line.split("\t", 1)[0]
                if lang in langs:
                    by_lang[lang].append(line)
        rows = []
        for lang in langs:
            rs = by_lang.get(lang, [])
            if sp == "train" and len(rs) > args.max_train_per_lang:
                rs = random.Random(f"{args.seed}:{lang}").sample(rs, args.max_train_per_lang)
            packed.setdefault(lang, {})[sp] = len(rs)
            rows += rs
        # English source first, then language: the same text in several languages sits together
        rows.sort(key=lambda r: (r.split("\t", 3)[2], r))
        with open(args.out / f"{sp}.tsv", "w", encoding="utf-8", newline="\n") as f:
            f.writelines(rows)
    summary = dict(summary, packed=packed, max_train_per_lang=args.max_train_per_lang)
    (args.out / "counts.json").write_text(json.dumps(summary, ensure_ascii=False, indent=1))
    print(f"packing {args.pack} ...", flush=True)
    subprocess.run(["tar", "-C", str(args.out), "-cf", str(args.pack),
                    "--use-compress-program", "xz -9 -T1",
                    "--sort=name", "--owner=0", "--group=0", "--numeric-owner",
                    "--mtime=2025-01-01", "train.tsv", "dev.tsv", "test.tsv", "counts.json"],
                   check=True)
    print(f"{args.pack}: {args.pack.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    sys.exit(main())
