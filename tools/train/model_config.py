"""The demo model's architecture, written as the published HY-MT1.5 config.json is.

The config keeps the keys and layout of tencent/HY-MT1.5-1.8B's config.json (legacy
"rope_scaling" with Hunyuan's dynamic NTK "alpha", "attention_head_dim", "use_qk_norm",
tied embeddings, grouped-query attention), scaled down. transformers reads it into
HunYuanDenseV1Config (rope_scaling -> rope_parameters); mtdesk's engine reads the same file.
"""

from __future__ import annotations

import json
from pathlib import Path

PRESETS = {
    # ~29 M parameters: bf16 checkpoint ~56 MiB; the tied embedding (16000 x 512 x 2 bytes)
    # is the largest tensor, 15.6 MiB, so every safetensors shard stays under 16 MiB.
    "demo": dict(vocab_size=16000, hidden_size=512, intermediate_size=1280, num_hidden_layers=8,
                 num_attention_heads=8, num_key_value_heads=2, head_dim=64),
    # for CPU smoke tests
    "tiny": dict(vocab_size=4000, hidden_size=128, intermediate_size=320, num_hidden_layers=2,
                 num_attention_heads=4, num_key_value_heads=2, head_dim=32),
}


def hunyuan_config(*, vocab_size: int, hidden_size: int, intermediate_size: int,
                   num_hidden_layers: int, num_attention_heads: int, num_key_value_heads: int,
                   head_dim: int, bos_token_id: int, eos_token_id: int, pad_token_id: int,
                   max_position_embeddings: int = 4096, rope_alpha: float = 1000.0) -> dict:
    return {
        "architectures": ["HunYuanDenseV1ForCausalLM"],
        "model_type": "hunyuan_v1_dense",
        "add_classification_head": False,
        "attention_bias": False,
        "attention_dropout": 0.0,
        "attention_head_dim": head_dim,
        "head_dim": head_dim,
        "bos_token_id": bos_token_id,
        "eos_token_id": eos_token_id,
        "eod_token_id": eos_token_id,
        "pad_token_id": pad_token_id,
        "hidden_act": "silu",
        "hidden_size": hidden_size,
        "initializer_range": 0.02,
        "intermediate_size": intermediate_size,
        "max_position_embeddings": max_position_embeddings,
        "mlp_bias": False,
        "norm_type": "rms",
        "num_attention_heads": num_attention_heads,
        "num_hidden_layers": num_hidden_layers,
        "num_key_value_heads": num_key_value_heads,
        "pretraining_tp": 1,
        "rms_norm_eps": 1e-05,
        "rope_scaling": {
            "alpha": rope_alpha,
            "beta_fast": 32,
            "beta_slow": 1,
            "factor": 1.0,
            "mscale": 1.0,
            "mscale_all_dim": 1.0,
            "type": "dynamic",
        },
        "rope_theta": 10000.0,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
        "use_cache": True,
        "use_cla": False,
        "use_qk_norm": True,
        "use_rotary_pos_emb": True,
        "vocab_size": vocab_size,
    }


def write_config(model_dir: Path, config: dict, transformers_version: str) -> None:
    cfg = dict(config, transformers_version=transformers_version)
    (Path(model_dir) / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")


def load_hf_config(config: dict):
    """HunYuanDenseV1Config from the published-style dict, through transformers' own loading
    path (the legacy rope_scaling is converted exactly as for a downloaded checkpoint)."""
    import tempfile

    from transformers import AutoConfig

    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "config.json").write_text(json.dumps(config))
        return AutoConfig.from_pretrained(d)


def param_count(config: dict) -> int:
    d, f, L = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    h, kv, hd = (config["num_attention_heads"], config["num_key_value_heads"],
                 config["head_dim"])
    attn = d * h * hd + 2 * d * kv * hd + h * hd * d + 2 * hd      # q, k, v, o, qk-norm
    mlp = 3 * d * f
    return config["vocab_size"] * d + L * (attn + mlp + 2 * d) + d
