#!/usr/bin/env python3
"""Evaluation floors for the demo model, on the same held-out test sentences evaluate.py scores.

Two floors, chrF and BLEU (sacrebleu, scored by evaluate.py's own score function: chrF2,
BLEU tokenised "zh" for Chinese targets, "char" for Japanese and Korean, "13a" otherwise):

- copy the source: the hypothesis is the source text unchanged, in every direction of the
  model (en -> xx and xx -> en for each language);
- Apertium for English -> Spanish: Debian's rule-based system (packages apertium and
  apertium-eng-spa), `apertium -u eng-spa` (-u: unknown words without the '*' mark).

The test sentences are sampled exactly as evaluate.py samples them (same corpus, languages,
sentences per direction and seed: random.Random(seed), one rng.sample per language in language
order), so the floors stand next to the model's scores. Several sample sizes can be scored in
one run (--per-direction 300,500, the default; 0 = the whole test split, 5,782 sentences
for en-es: about 10 minutes of apertium on two cores); tools/train/gpu_run.sh evaluates with
300, evaluate.py's default is 500.

Apertium treats a newline as a blank, not as a sentence boundary, and its part-of-speech
tagger carries its state from one paragraph to the next, so that the words of one line change
the translation of the next (with the test sentences sent as one text separated by blank
lines, 11 of 300 came out differently): each test sentence is translated by an apertium call
of its own (--jobs of them at a time), as a user would translate it. Apertium escapes its
special characters (^ $ / < > @ * [ ] { } \\) itself in its "txt" format; they come back
unchanged.

Writes tools/corpus/out/floors.json and the Apertium outputs in
tools/corpus/out/floors_apertium_en-es.tsv (sample, source, reference, apertium; backslash
escapes as in the corpus).

    apt-get install -y apertium apertium-eng-spa      # Debian 12
    python3 tools/train/floors.py
    python3 tools/train/floors.py --per-direction 300 --no-apertium
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from data import DEFAULT_CORPUS, DEFAULT_LANGS, MAIN_LANGS, REPO, read_splits, sample_examples  # noqa: E402
from evaluate import bleu_tokenize, escape, score  # noqa: E402

DEFAULT_OUT = REPO / "tools" / "corpus" / "out" / "floors.json"
APERTIUM_CMD = ["apertium", "-u", "eng-spa"]


def ordered(dirs) -> list[str]:
    """evaluate.py's order: en -> xx first, then xx -> en, each alphabetical."""
    return sorted(dirs, key=lambda d: (d.split("-")[0] != "en", d))


def _run_apertium(text: str) -> str:
    p = subprocess.run(APERTIUM_CMD, input=text, capture_output=True, text=True, encoding="utf-8")
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(APERTIUM_CMD)} failed ({p.returncode}): {p.stderr.strip()}")
    return p.stdout


_cache: dict[str, str] = {}


def apertium_translate(sources: list[str], jobs: int) -> list[str]:
    """Apertium's translation of each source, each sentence in an apertium call of its own."""
    todo = sorted({s for s in sources if s not in _cache})
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for s, t in zip(todo, pool.map(lambda s: _run_apertium(s + "\n"), todo)):
            _cache[s] = t.strip()
    return [_cache[s] for s in sources]


def package_versions(names: list[str]) -> dict:
    if not shutil.which("dpkg-query"):
        return {}
    p = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\n", *names],
                       capture_output=True, text=True)
    return dict(line.split(" ", 1) for line in p.stdout.splitlines() if " " in line)


def mean(results: dict, keys, metric: str):
    vals = [results[k][metric] for k in keys if k in results]
    return round(sum(vals) / len(vals), 2) if vals else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                    help="corpus.tar.xz or a folder with test.tsv (as evaluate.py)")
    ap.add_argument("--split", default="test", choices=["test", "dev"])
    ap.add_argument("--langs", default=",".join(DEFAULT_LANGS),
                    help="the model's languages, in training order (as evaluate.py)")
    ap.add_argument("--per-direction", default="300,500",
                    help="comma-separated sample sizes per direction (0 = the whole split)")
    ap.add_argument("--seed", type=int, default=7, help="evaluate.py's sampling seed")
    ap.add_argument("--no-apertium", action="store_true")
    ap.add_argument("--jobs", type=int, default=2, help="apertium calls at a time")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args()

    import sacrebleu
    from sacrebleu.metrics import BLEU, CHRF

    langs = [l for l in args.langs.split(",") if l]
    sizes = [int(x) for x in args.per_direction.split(",") if x.strip()]
    t0 = time.time()
    rows = read_splits(args.corpus, (args.split,), langs)[args.split]
    print(f"{len(rows)} {args.split} rows in {len(langs)} languages ({time.time() - t0:.0f} s)",
          flush=True)

    use_apertium = not args.no_apertium and "es" in langs
    if use_apertium and not shutil.which("apertium"):
        print("apertium not installed (apt-get install -y apertium apertium-eng-spa); "
              "skipping the Apertium floor", file=sys.stderr)
        use_apertium = False

    def rel(p: Path) -> str:
        p = p.resolve()
        return str(p.relative_to(REPO)) if p.is_relative_to(REPO) else p.name

    out = {
        "split": args.split,
        "corpus": rel(args.corpus),
        "langs": langs,
        "seed": args.seed,
        "sacrebleu": sacrebleu.__version__,
        "bleu_tokenize": {},
        "samples": {},
    }
    if use_apertium:
        out["apertium"] = {"command": " ".join(APERTIUM_CMD),
                           "packages": package_versions(["apertium", "apertium-eng-spa"])}
    hyp_lines = []
    for size in sizes:
        key = str(size) if size else "all"
        examples = sample_examples(rows, langs, size, args.seed)
        per_dir = defaultdict(list)
        for e in examples:
            per_dir[e.direction].append(e)
        results = {}
        for d in ordered(per_dir):
            items = per_dir[d]
            tgt_lang = items[0].tgt_lang
            s = score([e.src for e in items], [e.tgt for e in items], tgt_lang)
            results[d] = {"n": len(items), "copy_chrF": s["chrF"], "copy_BLEU": s["BLEU"]}
            out["bleu_tokenize"][d] = bleu_tokenize(tgt_lang)
        main_dirs = [f"en-{l}" for l in MAIN_LANGS] + [f"{l}-en" for l in MAIN_LANGS]
        entry = {
            "per_direction": size,
            "sentences": len(examples),
            "mean": {"copy_chrF": mean(results, results, "copy_chrF"),
                     "copy_BLEU": mean(results, results, "copy_BLEU")},
            "mean_main_directions": {"copy_chrF": mean(results, main_dirs, "copy_chrF"),
                                     "copy_BLEU": mean(results, main_dirs, "copy_BLEU")},
            "directions": results,
        }
        print(f"per direction {key}: {len(examples)} sentences, mean copy chrF "
              f"{entry['mean']['copy_chrF']}, BLEU {entry['mean']['copy_BLEU']}", flush=True)
        if use_apertium and "en-es" in per_dir:
            items = per_dir["en-es"]
            t1 = time.time()
            hyps = apertium_translate([e.src for e in items], args.jobs)
            secs = time.time() - t1
            s = score(hyps, [e.tgt for e in items], "es")
            entry["apertium_en-es"] = {
                "n": len(items), **s, "seconds": round(secs, 1),
                "empty": sum(1 for h in hyps if not h),
                # '#' marks a word apertium could not generate, '@' one the bilingual
                # dictionary lacks (-u removes only the '*' of unknown words)
                "marked_#@": sum(1 for e, h in zip(items, hyps)
                                 if ("#" in h and "#" not in e.src) or ("@" in h and "@" not in e.src)),
            }
            c = results["en-es"]
            print(f"  en-es n={len(items)}  apertium chrF {s['chrF']:6.2f}  BLEU {s['BLEU']:6.2f}"
                  f"   copy: chrF {c['copy_chrF']:6.2f}  BLEU {c['copy_BLEU']:6.2f}"
                  f"   ({secs:.0f} s)", flush=True)
            hyp_lines += [f"{key}\t{escape(e.src)}\t{escape(e.tgt)}\t{escape(h)}\n"
                          for e, h in zip(items, hyps)]
        for d in ordered(results):
            r = results[d]
            print(f"  {d:12s} n={r['n']:5d}  copy chrF {r['copy_chrF']:6.2f}  BLEU {r['copy_BLEU']:6.2f}")
        out["samples"][key] = entry

    def signature(metric) -> str:
        metric.corpus_score(["x"], [["x"]])  # a signature needs one evaluation (1 reference)
        return str(metric.get_signature())

    out["chrF_signature"] = signature(CHRF())
    out["bleu_signatures"] = {tok: signature(BLEU(tokenize=tok))
                              for tok in sorted(set(out["bleu_tokenize"].values()))}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    if hyp_lines:
        hp = args.out.with_name("floors_apertium_en-es.tsv")
        with open(hp, "w", encoding="utf-8", newline="\n") as f:
            f.write("# sample\tsource\treference\tapertium\n")
            f.writelines(hyp_lines)
        print(f"wrote {hp}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
