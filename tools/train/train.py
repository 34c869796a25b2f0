#!/usr/bin/env python3
"""Trains mtdesk's demo translation model: a small HunYuanDenseV1ForCausalLM (the architecture
and file format of HY-MT1.5) on the gettext corpus of tools/corpus.

Every example is built as mtdesk's engine builds a request: the HY-MT1.5 translation prompt
(prompt.translation_prompt) in the Hunyuan chat template,
    [<|startoftext|>] + encode(user message) + [<|extra_0|>] + encode(translation) + [<|eos|>]
with the user message and the answer encoded separately as ordinary text; the loss is on the
translation tokens and <|eos|> only. Examples are bucketed by length (each batch padded on
the right to its longest example, no attention mask needed: padding comes after every real
token of a causal model), bf16 autocast, AdamW, linear warm-up then cosine decay; on CUDA the
decoder is torch.compile'd (--no-compile to run eagerly: half the throughput, no compilation
time). With --time-budget-min the schedule runs on the clock: the cosine reaches its end when
the budget (counted from the start of the script, data preparation and compilation included)
is spent, then the model is saved. Runs offline, from files in the repository tree only;
the same seed gives the same data order and initialisation (the number of steps depends on
the machine's speed).

    python3 tools/train/train.py --device cuda                       # the real run, ~8 min
    python3 tools/train/train.py --device cpu --preset tiny --max-rows 3000 --max-steps 200

Output directory (default tools/corpus/out/model): config.json (published HY-MT1.5 layout),
generation_config.json, model-0000x-of-0000y.safetensors (bf16, shards <= 16 MB),
model.safetensors.index.json, tokenizer.model, tokenizer_config.json, training_summary.json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import queue
import random
import shutil
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

T_START = time.time()
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from data import (DEFAULT_CORPUS, DEFAULT_LANGS, DEFAULT_TOKENIZER, REPO,  # noqa: E402
                  directions, read_splits)
from encoding import Encoded, encode_examples  # noqa: E402
from model_config import PRESETS, hunyuan_config, load_hf_config, param_count, write_config  # noqa: E402
from prompt import PromptEncoder, translation_prompt  # noqa: E402
from scrub_paths import portable  # noqa: E402

DEFAULT_OUT = REPO / "tools" / "corpus" / "out" / "model"


def log(msg: str = "", **fields) -> None:
    """One line on stdout: a message, or a JSON record when fields are given."""
    if fields:
        fields = {"t": round(time.time() - T_START, 1), **fields}
        print(json.dumps(fields, ensure_ascii=False), flush=True)
    else:
        print(f"[{time.time() - T_START:7.1f}s] {msg}", flush=True)


# ---------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------

def upsampled(rows, langs: list[str], alpha: float, max_factor: float, rng: random.Random):
    """Rows with the languages that have few rows repeated: a language of n rows gets
    (n_max / n) ** (1 - alpha) copies (at most max_factor), the fraction as a random subset."""
    by_lang = defaultdict(list)
    for r in rows:
        by_lang[r.lang].append(r)
    n_max = max(len(v) for v in by_lang.values())
    out, factors = [], {}
    for lang in langs:
        rs = by_lang.get(lang, [])
        if not rs:
            continue
        f = min(max_factor, (n_max / len(rs)) ** (1.0 - alpha))
        factors[lang] = round(f, 2)
        whole, frac = int(f), f - int(f)
        out += rs * whole + rng.sample(rs, int(round(frac * len(rs))))
    return out, factors


def make_batches(lengths: np.ndarray, batch_tokens: int, rng: np.random.Generator,
                 pad_to: int = 8, chunk: int = 100_000) -> list[np.ndarray]:
    """One epoch of batches: shuffle, sort chunks by length, cut into batches of at most
    batch_tokens padded tokens, shuffle the batches."""
    perm = rng.permutation(len(lengths))
    batches = []
    for s in range(0, len(perm), chunk):
        idx = perm[s:s + chunk]
        idx = idx[np.argsort(lengths[idx], kind="stable")]
        start = 0
        while start < len(idx):
            # grow the batch while (count x padded longest) fits the budget
            end = start + 1
            longest = lengths[idx[start]]
            while end < len(idx):
                longest_next = max(longest, lengths[idx[end]])
                padded = -(-int(longest_next) // pad_to) * pad_to
                if (end + 1 - start) * padded > batch_tokens:
                    break
                longest = longest_next
                end += 1
            batches.append(idx[start:end])
            start = end
    order = rng.permutation(len(batches))
    return [batches[i] for i in order]


def collate(data: Encoded, idx: np.ndarray, pad_id: int, pad_to: int = 8, min_tokens: int = 0):
    """(input_ids, targets) with right padding; targets[t] = input_ids[t + 1] on the answer
    (its tokens and <|eos|>), -100 elsewhere. A batch of fewer than min_tokens padded tokens
    gets rows of padding (no loss) added: a compiled model specialises on large batches and
    would compile again for a small one (an end-of-chunk batch)."""
    starts = data.offsets[idx]
    lens = data.offsets[idx + 1] - starts
    plen = data.prompt_len[idx].astype(np.int64)
    B, L = len(idx), -(-int(lens.max()) // pad_to) * pad_to
    rows_total = max(B, -(-min_tokens // L))
    ids = np.full((rows_total, L), pad_id, dtype=np.int64)
    tgt = np.full((rows_total, L), -100, dtype=np.int64)
    rows = np.repeat(np.arange(B), lens)
    excl = np.concatenate([[0], np.cumsum(lens)[:-1]])
    within = np.arange(int(lens.sum())) - np.repeat(excl, lens)
    ids[rows, within] = data.tokens[np.repeat(starts, lens) + within]
    alen = lens - plen
    arows = np.repeat(np.arange(B), alen)
    aexcl = np.concatenate([[0], np.cumsum(alen)[:-1]])
    awithin = np.arange(int(alen.sum())) - np.repeat(aexcl, alen)
    acol = np.repeat(plen, alen) + awithin
    tgt[arows, acol - 1] = data.tokens[np.repeat(starts, alen) + acol]
    return ids, tgt


class Prefetcher:
    """Collates batches on a background thread."""

    def __init__(self, make_epoch, data: Encoded, pad_id: int, depth: int = 8, min_tokens: int = 0):
        self.q: queue.Queue = queue.Queue(maxsize=depth)
        self.stop = False
        self.make_epoch, self.data, self.pad_id = make_epoch, data, pad_id
        self.min_tokens = min_tokens
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        epoch = 0
        while not self.stop:
            for b in self.make_epoch(epoch):
                if self.stop:
                    return
                self.q.put((epoch, collate(self.data, b, self.pad_id,
                                           min_tokens=self.min_tokens)))
            epoch += 1

    def next(self):
        return self.q.get()

    def close(self):
        self.stop = True
        try:
            while True:
                self.q.get_nowait()
        except queue.Empty:
            pass


# ---------------------------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------------------------

def loss_on_answers(model, ids, tgt, backbone=None):
    """Cross-entropy on the answer positions only; the output projection runs on those
    positions alone (the prompts are about half of every sequence). `backbone` is
    model.model or a compiled version of it."""
    import torch
    import torch.nn.functional as F

    backbone = backbone if backbone is not None else model.model
    hidden = backbone(input_ids=ids, use_cache=False).last_hidden_state
    mask = tgt != -100
    h = hidden[mask]
    logits = model.lm_head(h)
    loss = F.cross_entropy(logits.float(), tgt[mask])
    return loss, int(mask.sum()), torch.argmax(logits, -1).eq(tgt[mask]).float().mean()


def evaluate_loss(model, batches, device, amp):
    import torch

    model.eval()
    tot, n, acc = 0.0, 0, 0.0
    with torch.no_grad():
        for ids, tgt in batches:
            ids = torch.from_numpy(ids).to(device)
            tgt = torch.from_numpy(tgt).to(device)
            with amp():
                loss, k, a = loss_on_answers(model, ids, tgt)
            tot += float(loss) * k
            acc += float(a) * k
            n += k
    model.train()
    return tot / max(1, n), acc / max(1, n)


def greedy_samples(model, enc: PromptEncoder, examples, device, max_new_tokens=48):
    """Greedy translations of a few examples with transformers' generate (sanity check)."""
    import torch

    model.eval()
    out = []
    with torch.no_grad():
        for e in examples:
            p = enc.prompt_ids([translation_prompt(e.src_lang, e.tgt_lang, e.src)])[0]
            ids = torch.tensor([p], device=device)
            g = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                               max_new_tokens=max_new_tokens, do_sample=False,
                               eos_token_id=enc.eos, pad_token_id=enc.pad)
            out.append({"dir": e.direction, "src": e.src, "ref": e.tgt,
                        "hyp": enc.decode(g[0, len(p):].tolist())})
    model.train()
    return out


def write_tokenizer_config(tokenizer_dir: Path, out: Path, max_len: int) -> None:
    """The tokenizer's tokenizer_config.json with model_max_length = the longest training
    example (prompt and answer, in tokens): mtdesk cuts longer input into pieces that fit."""
    config = json.loads((tokenizer_dir / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["model_max_length"] = max_len
    (out / "tokenizer_config.json").write_text(
        json.dumps(config, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def save_model(model, config: dict, out: Path, tokenizer_dir: Path, max_len: int) -> dict:
    import torch
    import transformers

    out.mkdir(parents=True, exist_ok=True)
    for old in list(out.glob("model*.safetensors")) + list(out.glob("model.safetensors.index.json")):
        old.unlink()
    model_bf16 = model.to(torch.bfloat16)
    model_bf16.save_pretrained(out, max_shard_size="16MB", safe_serialization=True)
    # config.json in the published HY-MT1.5 layout (save_pretrained writes transformers' own)
    write_config(out, config, transformers.__version__)
    for name in ("tokenizer.model", "generation_config.json"):
        shutil.copy2(tokenizer_dir / name, out / name)
    write_tokenizer_config(tokenizer_dir, out, max_len)
    shards = {p.name: p.stat().st_size for p in sorted(out.glob("model*.safetensors"))}
    return shards


# ---------------------------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--tokenizer", type=Path, default=DEFAULT_TOKENIZER,
                    help="folder with tokenizer.model, tokenizer_config.json, generation_config.json")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--langs", default=",".join(DEFAULT_LANGS))
    ap.add_argument("--preset", default="demo", choices=sorted(PRESETS))
    ap.add_argument("--layers", type=int, help="override the preset's num_hidden_layers")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--dtype", default=None, choices=["bf16", "fp32"],
                    help="autocast dtype (default: bf16 on cuda, fp32 on cpu)")
    ap.add_argument("--time-budget-min", type=float, default=8.0,
                    help="wall-clock budget from the start of the script; 0 = none")
    ap.add_argument("--max-steps", type=int, default=0, help="stop after N steps (0 = budget only)")
    ap.add_argument("--batch-tokens", type=int, default=65536, help="padded tokens per batch")
    ap.add_argument("--lr", type=float, default=1.5e-3)
    ap.add_argument("--min-lr-ratio", type=float, default=0.05)
    ap.add_argument("--warmup-steps", type=int, default=400)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--max-len", type=int, default=256, help="longest example in tokens")
    ap.add_argument("--upsample-alpha", type=float, default=0.5,
                    help="languages with fewer rows are repeated (n_max/n)^(1-alpha) times")
    ap.add_argument("--max-upsample", type=float, default=4.0)
    ap.add_argument("--max-rows", type=int, default=0, help="smoke tests: use N training rows")
    ap.add_argument("--dev-examples", type=int, default=4000)
    ap.add_argument("--eval-every-s", type=float, default=60.0)
    ap.add_argument("--log-every", type=int, default=50)
    ap.add_argument("--save-reserve-s", type=float, default=20.0,
                    help="seconds of the budget kept for the final evaluation and save")
    ap.add_argument("--threads", type=int, default=min(16, os.cpu_count() or 1))
    ap.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None,
                    help="torch.compile the decoder (default: on with cuda; ~2x the throughput "
                         "after about 90 s of compilation)")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--summary", type=Path, help="default: <out>/training_summary.json")
    args = ap.parse_args()

    import sentencepiece as spm
    import torch
    import transformers
    from transformers import HunYuanDenseV1ForCausalLM

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    device = torch.device(args.device)
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda: no CUDA device visible")
    torch.set_num_threads(max(1, args.threads))
    if args.device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    dtype = args.dtype or ("bf16" if args.device == "cuda" else "fp32")
    budget_s = args.time_budget_min * 60.0 if args.time_budget_min > 0 else math.inf
    deadline = T_START + budget_s - args.save_reserve_s

    # ---- data
    langs = [l for l in args.langs.split(",") if l]
    splits = read_splits(args.corpus, ("train", "dev"), langs)
    train_rows = splits["train"]
    if args.max_rows and len(train_rows) > args.max_rows:
        train_rows = rng.sample(train_rows, args.max_rows)
    rows_per_lang = Counter(r.lang for r in train_rows)
    log(f"corpus {args.corpus.name}: {len(train_rows)} training rows, "
        f"{len(splits['dev'])} dev rows; per language {dict(rows_per_lang)}")
    train_rows, factors = upsampled(train_rows, langs, args.upsample_alpha, args.max_upsample, rng)
    log(f"upsampling factors {factors}; {len(train_rows)} rows after upsampling")

    model_file = str(args.tokenizer / "tokenizer.model")
    sp = spm.SentencePieceProcessor(model_file=model_file)
    enc = PromptEncoder(sp)
    train_ex = directions(train_rows, langs)
    data, dropped, enc_stats = encode_examples(train_ex, enc, model_file, args.max_len,
                                               args.threads, seed=args.seed, log=log)
    del train_ex, train_rows
    dev_all = directions(splits["dev"], langs)
    dev_ex = rng.sample(dev_all, min(args.dev_examples, len(dev_all)))
    dev_data, _, _ = encode_examples(dev_ex, enc, model_file, args.max_len, 1, log=log)
    tokens_total = int(data.lengths.sum())
    answer_total = int((data.lengths - data.prompt_len).sum())
    log(f"encoded {len(data)} training examples ({dropped} longer than {args.max_len} dropped), "
        f"{tokens_total} tokens, {answer_total} answer tokens; mean length "
        f"{tokens_total / max(1, len(data)):.1f}; {len(data.direction_names)} directions; "
        f"{enc_stats}")

    # ---- model
    preset = dict(PRESETS[args.preset])
    if args.layers:
        preset["num_hidden_layers"] = args.layers
    if sp.get_piece_size() != preset["vocab_size"]:
        log(f"note: the tokenizer has {sp.get_piece_size()} pieces, the preset expects "
            f"{preset['vocab_size']}: the embedding follows the tokenizer")
    preset["vocab_size"] = sp.get_piece_size()
    emb_mib = preset["vocab_size"] * preset["hidden_size"] * 2 / 2**20
    if emb_mib > 16:
        log(f"WARNING: the bf16 embedding is {emb_mib:.1f} MiB, more than one 16 MiB shard")
    config = hunyuan_config(**preset, bos_token_id=enc.bos, eos_token_id=enc.eos,
                            pad_token_id=enc.pad)
    hf_config = load_hf_config(config)
    hf_config._attn_implementation = "sdpa"
    model = HunYuanDenseV1ForCausalLM(hf_config).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    assert n_params == param_count(config), (n_params, param_count(config))
    log(f"model: {json.dumps(preset)}; {n_params / 1e6:.2f} M parameters "
        f"(bf16 {n_params * 2 / 2**20:.1f} MiB); transformers {transformers.__version__}, "
        f"torch {torch.__version__}, device {device}, autocast {dtype}")

    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "embed" not in n]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2 or "embed" in n]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": args.weight_decay},
         {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr, betas=(0.9, 0.98), eps=1e-8,
        **({"fused": True} if args.device == "cuda" else {}))
    backbone = model.model
    if args.compile is None:
        args.compile = args.device == "cuda"
    if args.compile:
        backbone = torch.compile(model.model, dynamic=True)

    def amp():
        if dtype == "bf16":
            return torch.autocast(device_type=args.device, dtype=torch.bfloat16)
        return torch.autocast(device_type=args.device, enabled=False)

    np_rng = np.random.default_rng(args.seed)
    lengths = data.lengths

    def make_epoch(epoch):
        return make_batches(lengths, args.batch_tokens, np_rng)

    dev_batches = [collate(dev_data, b, enc.pad)
                   for b in make_batches(dev_data.lengths, args.batch_tokens,
                                         np.random.default_rng(0))]
    prefetch = Prefetcher(make_epoch, data, enc.pad,
                          min_tokens=int(0.8 * args.batch_tokens) if args.compile else 0)

    # ---- train
    history = []
    step, seen_tokens, seen_answer, seen_examples = 0, 0, 0, 0
    t_train0 = time.time()
    t_sched0 = None
    t_last_eval = t_train0
    t_log, tok_log = time.time(), 0
    loss_ema = None
    epoch = 0
    stop_reason = "max_steps"
    model.train()
    while True:
        now = time.time()
        if args.max_steps and step >= args.max_steps:
            stop_reason = "max_steps"
            break
        if now >= deadline:
            stop_reason = "time_budget"
            break
        # schedule: progress on the clock (time budget) or on steps, whichever is further
        # the clock of the schedule starts once the first steps (and compilations) are done
        progress = 0.0
        if budget_s < math.inf and t_sched0 is not None:
            progress = (now - t_sched0) / max(1e-6, deadline - t_sched0)
        if args.max_steps:
            progress = max(progress, step / args.max_steps)
        if step < args.warmup_steps:
            lr = args.lr * (step + 1) / args.warmup_steps
        else:
            cos = 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))
            lr = args.lr * (args.min_lr_ratio + (1 - args.min_lr_ratio) * cos)
        for g in opt.param_groups:
            g["lr"] = lr

        epoch, (ids_np, tgt_np) = prefetch.next()
        ids = torch.from_numpy(ids_np).to(device, non_blocking=True)
        tgt = torch.from_numpy(tgt_np).to(device, non_blocking=True)
        try:
            with amp():
                loss, n_ans, acc = loss_on_answers(model, ids, tgt, backbone)
        except Exception as e:                  # a torch.compile failure: carry on eagerly
            if backbone is model.model:
                raise
            log(f"WARNING: the compiled model failed ({type(e).__name__}: {e}); running eagerly")
            backbone = model.model
            with amp():
                loss, n_ans, acc = loss_on_answers(model, ids, tgt, backbone)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        if step == 20:
            t_sched0 = time.time()
        n_real = int((ids_np != enc.pad).sum())
        seen_tokens += n_real
        seen_answer += n_ans
        seen_examples += int((ids_np[:, 0] != enc.pad).sum())     # not the padding rows
        tok_log += n_real

        if step % args.log_every == 0 or step == 1:
            lv = float(loss.detach())
            loss_ema = lv if loss_ema is None else 0.9 * loss_ema + 0.1 * lv
            dt = time.time() - t_log
            rec = dict(step=step, epoch=epoch, loss=round(lv, 4), loss_ema=round(loss_ema, 4),
                       acc=round(float(acc), 4), lr=round(lr, 6), gnorm=round(float(gnorm), 3),
                       batch=int(ids_np.shape[0]), seq=int(ids_np.shape[1]),
                       tok_s=round(tok_log / max(dt, 1e-6)), tokens=seen_tokens)
            log(**rec)
            history.append(rec)
            t_log, tok_log = time.time(), 0
        if time.time() - t_last_eval >= args.eval_every_s:
            dl, da = evaluate_loss(model, dev_batches, device, amp)
            log(step=step, dev_loss=round(dl, 4), dev_acc=round(da, 4))
            history.append(dict(step=step, t=round(time.time() - T_START, 1),
                                dev_loss=round(dl, 4), dev_acc=round(da, 4)))
            t_last_eval = time.time()
    prefetch.close()
    train_s = time.time() - t_train0

    dev_loss, dev_acc = evaluate_loss(model, dev_batches, device, amp)
    log(step=step, dev_loss=round(dev_loss, 4), dev_acc=round(dev_acc, 4), final=True)
    samples_src = [e for e in dev_ex if len(e.src) < 60]
    samples = greedy_samples(model, enc, samples_src[:8], device)
    for s in samples:
        log(f"{s['dir']}: {s['src']!r} -> {s['hyp']!r} (ref {s['ref']!r})")

    shards = save_model(model, config, args.out, args.tokenizer, args.max_len)
    summary = {
        "stop_reason": stop_reason,
        "steps": step,
        "epochs_started": epoch + 1,
        "train_seconds": round(train_s, 1),
        "total_seconds": round(time.time() - T_START, 1),
        "tokens_seen": seen_tokens,
        "answer_tokens_seen": seen_answer,
        "examples_seen": seen_examples,
        "tokens_per_second": round(seen_tokens / max(train_s, 1e-6)),
        "final_dev_loss": round(dev_loss, 4),
        "final_dev_acc": round(dev_acc, 4),
        "parameters": n_params,
        "config": config,
        "langs": langs,
        "train_rows_per_lang": dict(rows_per_lang),
        "upsampling": factors,
        "train_examples": len(data),
        "encoding": enc_stats,
        "train_tokens": tokens_total,
        "shards": shards,
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "sentencepiece": spm.__version__, "python": sys.version.split()[0]},
        "device": torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu",
        "compiled": backbone is not model.model,
        "peak_gpu_memory_gib": (round(torch.cuda.max_memory_allocated() / 2**30, 2)
                                if args.device == "cuda" else None),
        "samples": samples,
        "history": history,
    }
    if args.summary is None:
        args.summary = args.out / "training_summary.json"
    args.summary.parent.mkdir(parents=True, exist_ok=True)
    # Paths relative to the repository: the summary ships with the model.
    args.summary.write_text(json.dumps(portable(summary, (str(REPO),)), ensure_ascii=False,
                                       indent=1))
    log(f"saved {args.out} ({sum(shards.values()) / 2**20:.1f} MiB in {len(shards)} shards); "
        f"{step} steps, {seen_tokens / max(train_s, 1e-6):,.0f} tokens/s; summary {args.summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
