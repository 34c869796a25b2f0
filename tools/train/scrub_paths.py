#!/usr/bin/env python3
"""Removes the build machine's absolute paths from a model directory's files: the SentencePiece
model's trainer_spec.model_prefix / input (metadata only: tokenisation does not change) and
paths inside training_summary.json (made relative to the repository). train.py and
train_tokenizer.py write portable files themselves; this fixes files made before they did.

    python3 -m pip install protobuf        # sentencepiece's model proto needs it
    python3 tools/train/scrub_paths.py resources/models/mtdesk-demo
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from data import REPO  # noqa: E402


def portable(value, roots: tuple[str, ...]):
    """`value` with every string under one of `roots` made relative to it."""
    if isinstance(value, str):
        for root in roots:
            if value == root:
                return "."
            if value.startswith(root + "/"):
                return value[len(root) + 1:]
        return value
    if isinstance(value, list):
        return [portable(v, roots) for v in value]
    if isinstance(value, dict):
        return {k: portable(v, roots) for k, v in value.items()}
    return value


def scrub_tokenizer(path: Path) -> None:
    from sentencepiece import sentencepiece_model_pb2 as pb

    m = pb.ModelProto()
    m.ParseFromString(path.read_bytes())
    m.trainer_spec.model_prefix = Path(m.trainer_spec.model_prefix).name
    inputs = [Path(i).name for i in m.trainer_spec.input]
    del m.trainer_spec.input[:]
    m.trainer_spec.input.extend(inputs)
    path.write_bytes(m.SerializeToString())


def main() -> int:
    model = Path(sys.argv[1])
    roots = (str(REPO),) + tuple(sys.argv[2:])
    if (model / "tokenizer.model").exists():
        scrub_tokenizer(model / "tokenizer.model")
    summary = model / "training_summary.json"
    if summary.exists():
        data = json.loads(summary.read_text(encoding="utf-8"))
        summary.write_text(json.dumps(portable(data, roots), ensure_ascii=False, indent=1),
                           encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
