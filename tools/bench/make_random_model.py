#!/usr/bin/env python3
"""Writes a Hunyuan-MT-7B-shaped (or HY-MT1.5-1.8B-shaped) model with random weights (bf16 safetensors, transformers'
HunYuanDenseV1ForCausalLM) for benchmarks: hidden 4096, 32 layers, 32 query / 8 KV heads of 128,
SwiGLU 14336, vocabulary 128256, NTK-alpha RoPE, QK-norm, untied output layer. The tokenizer
files come from the bundled demo model (its 16,000 ids fit the larger vocabulary), so mtdesk
builds the same prompts. Needs a GPU with ~16 GB free (the weights are made there).

    python3 tools/bench/make_random_model.py /tmp/hy7b-random [--shape hy-mt1.5-1.8b]
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "resources" / "models" / "mtdesk-demo"


# The published checkpoints' dimensions (as `mtdesk bench --synthetic` uses them); the rest of
# the config (RoPE, norms, QK-norm) is the demo model's, the same architecture.
SHAPES = {
    "hy-mt-7b": {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                 "num_key_value_heads": 8, "head_dim": 128, "attention_head_dim": 128,
                 "intermediate_size": 14336, "vocab_size": 128256},
    "hy-mt1.5-1.8b": {"hidden_size": 2048, "num_hidden_layers": 32, "num_attention_heads": 16,
                      "num_key_value_heads": 4, "head_dim": 128, "attention_head_dim": 128,
                      "intermediate_size": 6144, "vocab_size": 120818},
}


def synthetic_config(shape: str) -> dict:
    import json

    cfg = json.loads((DEMO / "config.json").read_text())
    cfg.update(SHAPES[shape])
    cfg.update({"max_position_embeddings": 32768, "tie_word_embeddings": False})
    return cfg


def main() -> int:
    import json

    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    out = Path(sys.argv[1])
    t0 = time.time()
    shape = sys.argv[sys.argv.index("--shape") + 1] if "--shape" in sys.argv else "hy-mt-7b"
    cfg = synthetic_config(shape)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(cfg, indent=1))
    config = AutoConfig.from_pretrained(out)
    torch.manual_seed(0)
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model.save_pretrained(out, max_shard_size="4GB")
    for name in ("tokenizer.model", "tokenizer_config.json", "generation_config.json"):
        shutil.copy(DEMO / name, out / name)
    n = sum(p.numel() for p in model.parameters())
    print(f"{out}: {n / 1e9:.2f} B parameters, written in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
