#!/usr/bin/env python3
"""Prints the per-direction score table of docs/demo-model.md (markdown) from the JSON files
the evaluation wrote: floors.py's floors.json (copy and Apertium), evaluate.py's scores.json
(transformers greedy on the GPU, bf16) and compare_engines.py's --json output (mtdesk's CPU
engine and transformers fp32 on the same sentences).

    python3 tools/train/scores_table.py --floors tools/corpus/out/floors.json \\
        --apertium tools/corpus/out/floors_apertium_en-es.tsv \\
        --gpu resources/models/mtdesk-demo/scores.json --mtdesk tools/corpus/out/eval/compare_300.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--floors", type=Path, required=True)
    ap.add_argument("--gpu", type=Path, required=True)
    ap.add_argument("--mtdesk", type=Path, required=True)
    ap.add_argument("--apertium", type=Path,
                    help="floors.py's Apertium outputs (floors_apertium_en-es.tsv), scored here")
    ap.add_argument("--tier", action="append", default=[], metavar="NAME=JSON",
                    help="compare_engines.py --json of mtdesk's GPU engine in a tier "
                         "(e.g. int4=compare_gpu_int4.json): adds its chrF column")
    ap.add_argument("--per-direction", default="300")
    args = ap.parse_args()
    floors = json.loads(args.floors.read_text())["samples"][args.per_direction]["directions"]
    gpu = json.loads(args.gpu.read_text())["directions"]
    mt = json.loads(args.mtdesk.read_text())
    mtd = mt["directions"]
    if args.apertium:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from evaluate import score  # noqa: E402
        from compare_engines import unescape  # noqa: E402

        hyps, refs = [], []
        for line in args.apertium.read_text(encoding="utf-8").splitlines():
            cols = line.split("\t")
            if line.startswith("#") or len(cols) != 4 or cols[0] != args.per_direction:
                continue
            refs.append(unescape(cols[2]))
            hyps.append(unescape(cols[3]))
        ap_scores = score(hyps, refs, "es")
        floors.setdefault("en-es", {})["apertium_chrF"] = ap_scores["chrF"]
        floors["en-es"]["apertium_BLEU"] = ap_scores["BLEU"]

    def arrow(d: str) -> str:
        if d.startswith("zh-Hant-"):
            return "zh-Hant → " + d[len("zh-Hant-"):]
        if d.endswith("-zh-Hant"):
            return d[: -len("-zh-Hant")] + " → zh-Hant"
        a, b = d.split("-", 1)
        return f"{a} → {b}"

    def f(v) -> str:
        return "–" if v is None else f"{v:.2f}"

    tiers = []
    for t in args.tier:
        name, path = t.split("=", 1)
        tiers.append((name, json.loads(Path(path).read_text())["directions"]))
    print("| direction | n | copy chrF | copy BLEU | Apertium chrF | Apertium BLEU "
          "| transformers GPU bf16 chrF | BLEU | mtdesk CPU chrF | BLEU "
          "| mtdesk = transformers fp32 |" + "".join(f" GPU {n} chrF |" for n, _ in tiers))
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + "---:|" * len(tiers))
    sums: dict[str, list[float]] = {}
    for d in gpu:
        fl, g, m = floors.get(d, {}), gpu[d], mtd.get(d)
        row = {
            "copy_chrF": fl.get("copy_chrF"), "copy_BLEU": fl.get("copy_BLEU"),
            "ap_chrF": fl.get("apertium_chrF"), "ap_BLEU": fl.get("apertium_BLEU"),
            "gpu_chrF": g["chrF"], "gpu_BLEU": g["BLEU"],
            "mt_chrF": m["mtdesk"]["chrF"] if m else None,
            "mt_BLEU": m["mtdesk"]["BLEU"] if m else None,
        }
        for k, v in row.items():
            if v is not None:
                sums.setdefault(k, []).append(v)
        agree = f"{m['agree_fp32']}/{m['n']}" if m else "–"
        tier_cells = ""
        for name, dirs in tiers:
            v = dirs[d]["mtdesk"]["chrF"] if d in dirs else None
            if v is not None:
                sums.setdefault("tier_" + name, []).append(v)
            tier_cells += f" {f(v)} |"
        print(f"| {arrow(d)} | {g['n']} | {f(row['copy_chrF'])} | {f(row['copy_BLEU'])} "
              f"| {f(row['ap_chrF'])} | {f(row['ap_BLEU'])} | {f(row['gpu_chrF'])} "
              f"| {f(row['gpu_BLEU'])} | {f(row['mt_chrF'])} | {f(row['mt_BLEU'])} | {agree} |"
              + tier_cells)
    mean = {k: sum(v) / len(v) for k, v in sums.items() if len(v) == len(gpu)}
    print(f"| **mean, {len(gpu)} directions** | {sum(g['n'] for g in gpu.values())} "
          f"| {f(mean.get('copy_chrF'))} | {f(mean.get('copy_BLEU'))} | | "
          f"| {f(mean.get('gpu_chrF'))} | {f(mean.get('gpu_BLEU'))} | {f(mean.get('mt_chrF'))} "
          f"| {f(mean.get('mt_BLEU'))} | {mt['agree_fp32']}/{mt['lines']} |"
          + "".join(f" {f(mean.get('tier_' + n))} |" for n, _ in tiers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
