#!/usr/bin/env python3
"""Decodes the same held-out lines with mtdesk's own engine (the `mtdesk translate` CLI, CPU)
and with transformers' greedy `generate` in fp32 on the CPU, and reports how often the two
agree exactly, next to chrF and BLEU (sacrebleu) per direction for both.

Input is a TSV written by evaluate.py: hypotheses.tsv (direction, source, reference,
hypothesis) or the held-out fixture (src_lang, tgt_lang, source, reference, hf_greedy). The
fourth/fifth column (the GPU bf16 greedy output) is compared too, for information: bf16
activations round differently from mtdesk's fp32 ones, so near-ties may go the other way.

Sources containing a line break or a tab are skipped (the CLI maps input lines 1:1).

    python3 tools/train/compare_engines.py --mtdesk build/app/mtdesk \\
        --model resources/models/mtdesk-demo --tsv tools/corpus/out/eval/heldout.tsv \\
        --fixture tests/data/demo/heldout.tsv      # the end-to-end test's fixture
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluate import score, translate  # noqa: E402
from prompt import PromptEncoder  # noqa: E402


@dataclass
class Line:
    src_lang: str
    tgt_lang: str
    src: str
    tgt: str
    gpu: str

    @property
    def direction(self) -> str:
        return f"{self.src_lang}-{self.tgt_lang}"


def unescape(s: str) -> str:
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            out.append({"n": "\n", "t": "\t", "\\": "\\"}.get(s[i + 1], s[i + 1]))
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def read_tsv(path: Path, per_direction: int) -> tuple[list[Line], int]:
    lines, skipped, count = [], 0, defaultdict(int)
    for raw in path.read_text(encoding="utf-8").splitlines():
        if not raw or raw.startswith("#"):
            continue
        cols = raw.split("\t")
        if len(cols) == 4:  # hypotheses.tsv
            d = cols[0]
            if d.startswith("zh-Hant-"):
                src_lang, tgt_lang = "zh-Hant", d[len("zh-Hant-"):]
            elif d.endswith("-zh-Hant"):
                src_lang, tgt_lang = d[: -len("-zh-Hant")], "zh-Hant"
            else:
                src_lang, tgt_lang = d.split("-", 1)
            src, tgt, gpu = cols[1:]
        elif len(cols) in (5, 6):  # held-out lines from evaluate.py, or the test fixture
            src_lang, tgt_lang, src, tgt, gpu = cols[:5]
        else:
            raise SystemExit(f"{path}: expected 4 or 5 tab-separated columns: {raw[:80]!r}")
        line = Line(src_lang, tgt_lang, unescape(src), unescape(tgt), unescape(gpu))
        if "\n" in line.src or "\t" in line.src:
            skipped += 1
            continue
        if per_direction and count[line.direction] >= per_direction:
            continue
        count[line.direction] += 1
        lines.append(line)
    return lines, skipped


def run_mtdesk(binary: Path, model: Path, items: list[Line],
               extra: list[str] = ()) -> tuple[list[str], float]:
    """One `mtdesk translate` process per direction, the sources on stdin."""
    t0 = time.time()
    src_lang, tgt_lang = items[0].src_lang, items[0].tgt_lang
    proc = subprocess.run(
        [str(binary), "translate", "--model", str(model), "--from", src_lang, "--to", tgt_lang,
         "--temperature", "0", *extra],
        input="".join(l.src + "\n" for l in items), capture_output=True, text=True,
        encoding="utf-8", env={**os.environ, "LC_ALL": "C.UTF-8"})
    if proc.returncode != 0:
        raise SystemExit(f"mtdesk failed ({proc.returncode}) on {src_lang}-{tgt_lang}: "
                         f"{proc.stderr.strip()}")
    out = proc.stdout.split("\n")
    if out and out[-1] == "":
        out.pop()
    if len(out) != len(items):
        raise SystemExit(f"mtdesk returned {len(out)} lines for {len(items)} inputs "
                         f"({src_lang}-{tgt_lang})")
    return out, time.time() - t0


def escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def write_fixture(path: Path, lines: list[Line], hf: list[str], summary: dict) -> None:
    """TSV: src_lang, tgt_lang, source, reference, transformers GPU bf16 greedy, transformers
    CPU fp32 greedy; and a JSON with sacrebleu's corpus chrF (chrF2) of the fp32 column and of
    the reference against itself, so the test can check its own chrF against sacrebleu."""
    import sacrebleu

    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("# src_lang\ttgt_lang\tsource\treference\thf_gpu_bf16\thf_cpu_fp32\n")
        for l, h in zip(lines, hf):
            f.write("\t".join([l.src_lang, l.tgt_lang, escape(l.src), escape(l.tgt), escape(l.gpu),
                               escape(h)]) + "\n")
    refs = [l.tgt for l in lines]
    meta = {
        "lines": len(lines),
        "corpus_chrF_hf_cpu_fp32": sacrebleu.corpus_chrf(hf, [refs]).score,
        "corpus_chrF_hf_gpu_bf16": sacrebleu.corpus_chrf([l.gpu for l in lines], [refs]).score,
        "corpus_chrF_source": sacrebleu.corpus_chrf([l.src for l in lines], [refs]).score,
        "sacrebleu": sacrebleu.__version__,
        "agree_mtdesk_fp32_percent_when_made": summary["agree_fp32_percent"],
    }
    path.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mtdesk", type=Path, required=True, help="the mtdesk binary")
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--tsv", type=Path, required=True)
    ap.add_argument("--mtdesk-args", default="",
                    help='more `mtdesk translate` options, e.g. "--device cuda --tier int4"')
    ap.add_argument("--per-direction", type=int, default=0, help="first N lines per direction")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--no-transformers", action="store_true",
                    help="skip the transformers fp32 run: mtdesk's scores and its agreement with "
                         "the TSV's GPU bf16 column only")
    ap.add_argument("--fixture", type=Path,
                    help="write the lines compared, with the transformers fp32 greedy output, as "
                         "mtdesk's end-to-end test fixture (TSV, plus <name>.json with "
                         "sacrebleu's corpus chrF of that output)")
    args = ap.parse_args()

    if not args.no_transformers:
        import sentencepiece as spm
        import torch
        from transformers import AutoModelForCausalLM

    lines, skipped = read_tsv(args.tsv, args.per_direction)
    by_dir: dict[str, list[Line]] = defaultdict(list)
    for l in lines:
        by_dir[l.direction].append(l)

    mtdesk_out: dict[str, list[str]] = {}
    mtdesk_s = 0.0
    for d, items in by_dir.items():
        mtdesk_out[d], s = run_mtdesk(args.mtdesk, args.model, items, args.mtdesk_args.split())
        mtdesk_s += s

    hf_out: dict[str, list[str]] = defaultdict(list)
    hf_all: list[str] = []
    hf_s = 0.0
    if not args.no_transformers:
        torch.set_num_threads(os.cpu_count() or 1)
        sp = spm.SentencePieceProcessor(model_file=str(args.model / "tokenizer.model"))
        enc = PromptEncoder(sp)
        model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32).eval()

        class Ex:  # the shape evaluate.translate expects
            def __init__(self, l: Line):
                self.src_lang, self.tgt_lang, self.src = l.src_lang, l.tgt_lang, l.src

        t0 = time.time()
        hf_all = translate(model, enc, [Ex(l) for l in lines], torch.device("cpu"),
                           args.batch_size, max_new_tokens=256, log_every=0)
        hf_s = time.time() - t0
        for l, h in zip(lines, hf_all):
            hf_out[l.direction].append(h)
    else:
        for l in lines:  # compare with the GPU column instead
            hf_out[l.direction].append(l.gpu)

    results, agree_all, agree_gpu_all = {}, 0, 0
    for d in sorted(by_dir, key=lambda d: (not d.startswith("en-"), d)):
        items, mt, hf = by_dir[d], mtdesk_out[d], hf_out[d]
        agree = sum(a == b for a, b in zip(mt, hf))
        agree_gpu = sum(a == l.gpu for a, l in zip(mt, items))
        agree_all += agree
        agree_gpu_all += agree_gpu
        refs = [l.tgt for l in items]
        tgt = items[0].tgt_lang
        results[d] = {"n": len(items), "agree_fp32": agree, "agree_gpu_bf16": agree_gpu,
                      "mtdesk": score(mt, refs, tgt), "transformers_fp32": score(hf, refs, tgt),
                      "transformers_gpu_bf16": score([l.gpu for l in items], refs, tgt)}
        r = results[d]
        print(f"{d:12s} n={len(items):4d}  agree {agree:4d} ({100 * agree / len(items):5.1f} %)"
              f"  mtdesk chrF {r['mtdesk']['chrF']:6.2f} BLEU {r['mtdesk']['BLEU']:6.2f}"
              f"  transformers chrF {r['transformers_fp32']['chrF']:6.2f}"
              f" BLEU {r['transformers_fp32']['BLEU']:6.2f}", flush=True)
        for a, b, l in zip(mt, hf, items):
            if a != b:
                print(f"    differs: {l.src!r}\n      mtdesk       {a!r}\n      transformers {b!r}")

    n = len(lines)
    mean = lambda who, m: round(sum(r[who][m] for r in results.values()) / len(results), 2)  # noqa
    summary = {
        "tsv": args.tsv.name, "lines": n, "skipped_multiline": skipped,
        # without the transformers run, the "fp32" figures compare with the GPU bf16 column
        "transformers_fp32_run": not args.no_transformers,
        "agree_fp32": agree_all, "agree_fp32_percent": round(100 * agree_all / n, 2),
        "agree_gpu_bf16": agree_gpu_all,
        "agree_gpu_bf16_percent": round(100 * agree_gpu_all / n, 2),
        "mean_chrF": {"mtdesk": mean("mtdesk", "chrF"),
                      "transformers_fp32": mean("transformers_fp32", "chrF"),
                      "transformers_gpu_bf16": mean("transformers_gpu_bf16", "chrF")},
        "mtdesk_seconds": round(mtdesk_s, 1), "transformers_seconds": round(hf_s, 1),
        "cpu_threads": os.cpu_count(), "mtdesk_args": args.mtdesk_args, "directions": results,
    }
    print(f"{n} lines ({skipped} multi-line skipped): mtdesk = transformers fp32 on {agree_all} "
          f"({summary['agree_fp32_percent']} %), = transformers GPU bf16 on {agree_gpu_all} "
          f"({summary['agree_gpu_bf16_percent']} %); mean chrF mtdesk "
          f"{summary['mean_chrF']['mtdesk']}, transformers {summary['mean_chrF']['transformers_fp32']};"
          f" mtdesk {mtdesk_s:.0f} s (one process per direction, load included), transformers "
          f"{hf_s:.0f} s (batch {args.batch_size})")
    if args.json:
        args.json.write_text(json.dumps(summary, ensure_ascii=False, indent=1) + "\n")
    if args.fixture:
        write_fixture(args.fixture, lines, hf_all, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
