#!/usr/bin/env python3
"""Scores the demo model on the held-out test split: greedy decoding with transformers'
generate (batched, left padding), chrF and BLEU (sacrebleu) per direction, next to the floor
of copying the source unchanged.

The prompts are built by prompt.py, the same code the training used and the same text
mtdesk's engine builds. BLEU tokenisation: "zh" for Chinese targets, "char" for Japanese and
Korean, "13a" otherwise; chrF is chrF2 (sacrebleu's default).

Writes (default tools/corpus/out/eval/): scores.json, hypotheses.tsv (direction, source,
reference, hypothesis), and with --heldout a small TSV of held-out test lines with the
transformers greedy output, usable as an end-to-end test fixture (columns: src_lang,
tgt_lang, source, reference, hf_greedy; backslash escapes as in the corpus).

    python3 tools/train/evaluate.py --device cuda
    python3 tools/train/evaluate.py --device cpu --per-direction 20 --langs zh,de
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from data import DEFAULT_CORPUS, DEFAULT_LANGS, MAIN_LANGS, REPO, read_splits, sample_examples  # noqa: E402
from prompt import PromptEncoder, translation_prompt  # noqa: E402

DEFAULT_MODEL = REPO / "tools" / "corpus" / "out" / "model"
DEFAULT_OUT = REPO / "tools" / "corpus" / "out" / "eval"


def bleu_tokenize(lang: str) -> str:
    if lang in ("zh", "zh-Hant", "yue"):
        return "zh"
    if lang in ("ja", "ko", "th", "my", "km", "bo"):
        return "char"
    return "13a"


def escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def translate(model, enc: PromptEncoder, examples, device, batch_size: int,
              max_new_tokens: int, log_every: int = 20) -> list[str]:
    """Greedy translations, in the order of `examples`."""
    import torch

    prompts = enc.prompt_ids([translation_prompt(e.src_lang, e.tgt_lang, e.src) for e in examples])
    order = sorted(range(len(examples)), key=lambda i: len(prompts[i]))
    out = [""] * len(examples)
    t0 = time.time()
    for bi, s in enumerate(range(0, len(order), batch_size)):
        idx = order[s:s + batch_size]
        L = max(len(prompts[i]) for i in idx)
        ids = torch.full((len(idx), L), enc.pad, dtype=torch.long)
        mask = torch.zeros((len(idx), L), dtype=torch.long)
        for r, i in enumerate(idx):
            p = prompts[i]
            ids[r, L - len(p):] = torch.tensor(p)
            mask[r, L - len(p):] = 1
        # output bounded by the input, as mtdesk does (answers are about as long as the source,
        # and the prompt is longer than the source): stops runaway repetition early
        limit = min(max_new_tokens, int(1.5 * L) + 16)
        with torch.no_grad():
            g = model.generate(input_ids=ids.to(device), attention_mask=mask.to(device),
                               max_new_tokens=limit, do_sample=False, num_beams=1,
                               eos_token_id=enc.eos, pad_token_id=enc.pad)
        for r, i in enumerate(idx):
            out[i] = enc.decode(g[r, L:].tolist()).strip()
        if log_every and (bi + 1) % log_every == 0:
            print(f"  {s + len(idx)}/{len(order)} translated ({time.time() - t0:.0f} s)", flush=True)
    return out


def score(hyps: list[str], refs: list[str], tgt_lang: str) -> dict:
    import sacrebleu

    chrf = sacrebleu.corpus_chrf(hyps, [refs]).score
    bleu = sacrebleu.corpus_bleu(hyps, [refs], tokenize=bleu_tokenize(tgt_lang)).score
    return {"chrF": round(chrf, 2), "BLEU": round(bleu, 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--split", default="test", choices=["test", "dev"])
    ap.add_argument("--langs", default=None, help="default: the model's training languages")
    ap.add_argument("--per-direction", type=int, default=500,
                    help="test pairs per direction (seeded sample; 0 = all)")
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--max-new-tokens", type=int, default=256)
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--heldout", type=Path, default=None,
                    help="also write a fixture TSV of held-out lines here "
                         "(e.g. tools/corpus/out/heldout.tsv)")
    ap.add_argument("--heldout-per-direction", type=int, default=12)
    ap.add_argument("--heldout-max-chars", type=int, default=80)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    import sentencepiece as spm
    import torch
    from transformers import AutoModelForCausalLM

    t0 = time.time()
    langs = args.langs.split(",") if args.langs else None
    if langs is None:
        summary = args.model / "training_summary.json"
        langs = json.loads(summary.read_text())["langs"] if summary.exists() else DEFAULT_LANGS
    rows = read_splits(args.corpus, (args.split,), langs)[args.split]
    examples = sample_examples(rows, langs, args.per_direction, args.seed)

    sp = spm.SentencePieceProcessor(model_file=str(args.model / "tokenizer.model"))
    enc = PromptEncoder(sp)
    device = torch.device(args.device)
    dtype = torch.bfloat16 if args.device == "cuda" else torch.float32
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=dtype).to(device).eval()
    print(f"{len(examples)} {args.split} examples in {len(langs) * 2} directions; model "
          f"{args.model.name} on {device} ({dtype}); setup {time.time() - t0:.0f} s", flush=True)

    t1 = time.time()
    hyps = translate(model, enc, examples, device, args.batch_size, args.max_new_tokens)
    gen_s = time.time() - t1

    per_dir = defaultdict(list)
    for e, h in zip(examples, hyps):
        per_dir[e.direction].append((e, h))
    results = {}
    for d in sorted(per_dir, key=lambda d: (d.split("-")[0] != "en", d)):
        items = per_dir[d]
        refs = [e.tgt for e, _ in items]
        tgt_lang = items[0][0].tgt_lang
        model_s = score([h for _, h in items], refs, tgt_lang)
        copy_s = score([e.src for e, _ in items], refs, tgt_lang)
        results[d] = {"n": len(items), **model_s, "copy_chrF": copy_s["chrF"],
                      "copy_BLEU": copy_s["BLEU"],
                      "empty": sum(1 for _, h in items if not h)}
        print(f"{d:12s} n={len(items):4d}  chrF {model_s['chrF']:6.2f}  BLEU {model_s['BLEU']:6.2f}"
              f"   copy: chrF {copy_s['chrF']:6.2f}  BLEU {copy_s['BLEU']:6.2f}", flush=True)

    def mean(keys, metric):
        vals = [results[k][metric] for k in keys if k in results]
        return round(sum(vals) / len(vals), 2) if vals else None

    main_dirs = [f"en-{l}" for l in MAIN_LANGS] + [f"{l}-en" for l in MAIN_LANGS]
    out = {
        "model": args.model.name,
        "split": args.split,
        "per_direction": args.per_direction,
        "seed": args.seed,
        "device": args.device,
        "dtype": str(dtype),
        "generation_seconds": round(gen_s, 1),
        "sentences_per_second": round(len(examples) / max(gen_s, 1e-6), 1),
        "mean": {"chrF": mean(results, "chrF"), "BLEU": mean(results, "BLEU"),
                 "copy_chrF": mean(results, "copy_chrF")},
        "mean_main_directions": {"chrF": mean(main_dirs, "chrF"), "BLEU": mean(main_dirs, "BLEU"),
                                 "copy_chrF": mean(main_dirs, "copy_chrF")},
        "directions": results,
        "bleu_tokenize": {d: bleu_tokenize(d.split("-")[1]) for d in results},
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "scores.json").write_text(json.dumps(out, ensure_ascii=False, indent=1))
    with open(args.out / "hypotheses.tsv", "w", encoding="utf-8", newline="\n") as f:
        for e, h in zip(examples, hyps):
            f.write(f"{e.direction}\t{escape(e.src)}\t{escape(e.tgt)}\t{escape(h)}\n")
    print(f"mean chrF {out['mean']['chrF']} (copy {out['mean']['copy_chrF']}), main directions "
          f"{out['mean_main_directions']['chrF']}; {len(examples)} sentences in {gen_s:.0f} s; "
          f"wrote {args.out}/scores.json")

    if args.heldout:
        # short, unseen test lines per direction with the transformers greedy output
        lines = []
        for d in sorted(per_dir, key=lambda d: (d.split("-")[0] != "en", d)):
            items = [(e, h) for e, h in per_dir[d] if len(e.src) <= args.heldout_max_chars]
            items = random.Random(f"{args.seed}:{d}").sample(
                items, min(args.heldout_per_direction, len(items)))
            for e, h in items:
                lines.append(f"{e.src_lang}\t{e.tgt_lang}\t{escape(e.src)}\t{escape(e.tgt)}\t{escape(h)}\n")
        args.heldout.parent.mkdir(parents=True, exist_ok=True)
        with open(args.heldout, "w", encoding="utf-8", newline="\n") as f:
            f.write("# src_lang\ttgt_lang\tsource\treference\thf_greedy\n")
            f.writelines(lines)
        print(f"wrote {args.heldout} ({len(lines)} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
