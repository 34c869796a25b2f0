#!/usr/bin/env python3
"""Training-step throughput of the demo model on synthetic batches (no corpus needed): eager
and torch.compile'd, so the time budget of a real run can be planned.

    python3 tools/train/bench_step.py --device cuda --seconds 30
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np  # noqa: E402

from model_config import PRESETS, hunyuan_config, load_hf_config  # noqa: E402


def synthetic_batches(batch_tokens: int, vocab: int, n: int, rng: np.random.Generator):
    """Batches shaped like the corpus's: sequence lengths ~ 34 +- 15 tokens, prompt ~ 60 %."""
    out = []
    for _ in range(n):
        L = int(rng.choice([24, 32, 40, 48, 64, 96, 128], p=[.2, .25, .2, .15, .1, .07, .03]))
        B = batch_tokens // L
        ids = rng.integers(6, vocab, size=(B, L), dtype=np.int64)
        tgt = np.full((B, L), -100, dtype=np.int64)
        p = int(L * 0.6)
        tgt[:, p - 1:L - 1] = ids[:, p:L]
        out.append((ids, tgt))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--preset", default="demo")
    ap.add_argument("--batch-tokens", type=int, default=65536)
    ap.add_argument("--seconds", type=float, default=30.0, help="per mode, after warm-up")
    ap.add_argument("--modes", default="eager,compile")
    args = ap.parse_args()

    import torch
    from transformers import HunYuanDenseV1ForCausalLM

    from train import loss_on_answers

    torch.backends.cuda.matmul.allow_tf32 = True
    cfg = hunyuan_config(**PRESETS[args.preset], bos_token_id=1, eos_token_id=4, pad_token_id=5)
    rng = np.random.default_rng(0)
    batches = synthetic_batches(args.batch_tokens, cfg["vocab_size"], 64, rng)
    results = {}
    cuda = args.device == "cuda"

    def sync():
        if cuda:
            torch.cuda.synchronize()

    for mode in args.modes.split(","):
        torch.manual_seed(0)
        hf = load_hf_config(cfg)
        hf._attn_implementation = "sdpa"
        model = HunYuanDenseV1ForCausalLM(hf).to(args.device)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=args.device == "cuda")
        fwd = torch.compile(model.model, dynamic=True) if mode == "compile" else model.model

        def step(ids, tgt, model=model, fwd=fwd, opt=opt):
            ids = torch.from_numpy(ids).to(args.device, non_blocking=True)
            tgt = torch.from_numpy(tgt).to(args.device, non_blocking=True)
            with torch.autocast(device_type=args.device, dtype=torch.bfloat16):
                loss, n, _ = loss_on_answers(model, ids, tgt, fwd)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            return n

        t0 = time.time()
        for b in batches[:8]:                  # warm-up (and compilation)
            step(*b)
        sync()
        warm = time.time() - t0
        t0, toks, steps = time.time(), 0, 0
        while time.time() - t0 < args.seconds:
            ids, tgt = batches[steps % len(batches)]
            step(ids, tgt)
            toks += ids.size
            steps += 1
        sync()
        dt = time.time() - t0
        results[mode] = {"warmup_s": round(warm, 1), "steps": steps,
                         "step_ms": round(1000 * dt / steps, 1),
                         "tokens_per_s": round(toks / dt),
                         "peak_gib": (round(torch.cuda.max_memory_allocated() / 2**30, 1)
                                      if cuda else None)}
        print(mode, json.dumps(results[mode]), flush=True)
        del model, opt, fwd
        if cuda:
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
    return 0


if __name__ == "__main__":
    sys.exit(main())
