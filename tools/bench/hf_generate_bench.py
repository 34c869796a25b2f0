#!/usr/bin/env python3
"""transformers' generate on the same model and requests as `mtdesk bench`, for the comparison
in docs/benchmarks.md: bf16, greedy, sdpa attention, the same English sentence in the same
HY-MT1.5 prompt, 128 new tokens (min_new_tokens = max_new_tokens, so no early stop), batch
sizes 1, 8, 64; decode tokens/s = generated tokens / wall time of the generate call; TTFT =
wall time of a 1-token generate; prefill tokens/s of a ~2,000-token prompt.

    python3 tools/bench/hf_generate_bench.py /tmp/hy7b-random [--json out.json]
    python3 tools/bench/hf_generate_bench.py --synthetic hy-mt-7b [--json out.json]
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "train"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from prompt import PromptEncoder, translation_prompt  # noqa: E402

# app/cli_bench.cpp's text: 64 prompt tokens with the bundled tokenizer.
SENTENCE = ("Save the document before closing the window, otherwise the changes you made since "
            "the last time you saved it will be lost and cannot be restored from the backup "
            "folder. Ask your administrator if you are not sure where the backup folder is.")


def main() -> int:
    import sentencepiece as spm
    import torch
    from transformers import AutoModelForCausalLM

    out_json = Path(sys.argv[sys.argv.index("--json") + 1]) if "--json" in sys.argv else None
    t0 = time.time()
    if sys.argv[1] == "--synthetic":
        # Random weights of a published model's shapes, made on the GPU (as `mtdesk bench
        # --synthetic` does); the demo model's tokenizer builds the prompts.
        from transformers import AutoConfig
        from make_random_model import DEMO, synthetic_config

        cfg = synthetic_config(sys.argv[2])
        cfg.pop("architectures", None)
        config = AutoConfig.for_model(cfg.pop("model_type"), **cfg)
        torch.manual_seed(0)
        with torch.device("cuda"):
            model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16,
                                                     attn_implementation="sdpa").eval()
        model_dir = DEMO
    else:
        model_dir = Path(sys.argv[1])
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16,
                                                     attn_implementation="sdpa").cuda().eval()
    load_s = time.time() - t0
    enc = PromptEncoder(spm.SentencePieceProcessor(model_file=str(model_dir / "tokenizer.model")))
    ids = enc.prompt_ids([translation_prompt("en", "de", SENTENCE)])[0]
    report = {"load_s": load_s, "prompt_tokens": len(ids), "decode": []}

    def gen(batch: int, new: int, prompt=ids) -> float:
        x = torch.tensor([prompt] * batch, device="cuda")
        torch.cuda.synchronize()
        t = time.time()
        with torch.no_grad():
            model.generate(input_ids=x, attention_mask=torch.ones_like(x), max_new_tokens=new,
                           min_new_tokens=new, do_sample=False, pad_token_id=enc.pad)
        torch.cuda.synchronize()
        return time.time() - t

    gen(1, 8)  # warm-up
    for b in (1, 8, 64):
        wall = gen(b, 128)
        ttft = gen(b, 1)
        report["decode"].append({"batch": b, "tokens_per_s": b * 128 / wall, "wall_s": wall,
                                 "ttft_ms": ttft * 1000})
        print(f"batch {b:3d}: {b * 128 / wall:7.0f} generated tokens/s ({wall:.2f} s), "
              f"TTFT {ttft * 1000:.1f} ms", flush=True)
    # As `mtdesk bench` builds its prefill segment: the text repeated until ~2,048 tokens.
    sentence_tokens = len(enc.sp.encode(SENTENCE))
    long_text, t = "", 0
    while t < 2048:
        long_text += SENTENCE + " "
        t += sentence_tokens + 1
    long_ids = enc.prompt_ids([translation_prompt("en", "de", long_text)])[0]
    t = gen(1, 1, long_ids)
    report["prefill"] = {"prompt_tokens": len(long_ids), "ttft_ms": t * 1000,
                         "tokens_per_s": len(long_ids) / t}
    print(f"prefill: {len(long_ids)} tokens in {t * 1000:.1f} ms ({len(long_ids) / t:.0f} tokens/s)"
          f"; peak memory {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB; load {load_s:.0f} s")
    report["peak_gib"] = torch.cuda.max_memory_allocated() / 2**30
    if out_json:
        out_json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
