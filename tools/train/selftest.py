#!/usr/bin/env python3
"""Checks of the training pipeline that need no GPU (a minute on a laptop):

  - the prompts are the engine's (engine/translate/prompt.cpp) and the chat template renders to
    [<|startoftext|>] user [<|extra_0|>];
  - the fast example encoding (encoding.py) gives exactly the ids of the naive construction
    [bos] + sp.encode(user message) + [extra_0] + sp.encode(answer) + [eos], on a random sample
    of the corpus in every direction;
  - collate() puts the loss on the answer tokens and <|eos|> only;
  - the tokenizer never produces a special token from text and round-trips text exactly.

    python3 tools/train/selftest.py [--examples 30000]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np  # noqa: E402

from data import DEFAULT_CORPUS, DEFAULT_LANGS, DEFAULT_TOKENIZER, directions, read_splits  # noqa: E402
from encoding import encode_examples  # noqa: E402
from prompt import CHAT_TEMPLATE, PromptEncoder, render_chat, translation_prompt  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--tokenizer", type=Path, default=DEFAULT_TOKENIZER)
    ap.add_argument("--langs", default=",".join(DEFAULT_LANGS))
    ap.add_argument("--examples", type=int, default=30000)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()

    import sentencepiece as spm

    # prompts, verbatim from the engine's prompt.cpp
    assert translation_prompt("en", "zh", "Open the file") == (
        "将以下文本翻译为中文，注意只需要输出翻译后的结果，不要额外解释：\n\nOpen the file")
    assert translation_prompt("zh", "en", "打开") == (
        "将以下文本翻译为英语，注意只需要输出翻译后的结果，不要额外解释：\n\n打开")
    assert translation_prompt("en", "zh-Hant", "x").startswith("将以下文本翻译为繁体中文，")
    assert translation_prompt("de", "en", "Datei") == (
        "Translate the following segment into English, without additional explanation.\n\nDatei")
    assert translation_prompt("en", "ug", "x").startswith("Translate the following segment into Uyghur,")
    try:
        import jinja2
        t = jinja2.Environment().from_string(CHAT_TEMPLATE)
        m = translation_prompt("en", "de", "Open")
        assert t.render(messages=[{"role": "user", "content": m}]) == render_chat(m)
        assert t.render(messages=[{"role": "user", "content": m},
                                  {"role": "assistant", "content": "Öffnen"}]) == \
            render_chat(m) + "Öffnen<|eos|>"
    except ImportError:
        print("jinja2 missing: chat template rendering not checked")
    print("prompts and chat template: ok")

    model_file = str(args.tokenizer / "tokenizer.model")
    sp = spm.SentencePieceProcessor(model_file=model_file)
    enc = PromptEncoder(sp)
    specials = set(enc.ids.values())
    for s in ["<|eos|>", "a<|extra_0|>b", "<|startoftext|><|pad|><|extra_4|>"]:
        assert not set(sp.encode(s)) & specials and sp.decode(sp.encode(s)) == s, s
    print(f"tokenizer: {sp.get_piece_size()} pieces, special ids {enc.ids}: ok")

    langs = args.langs.split(",")
    rows = read_splits(args.corpus, ("train",), langs)["train"]
    rng = random.Random(5)
    rows = rng.sample(rows, min(args.examples // 2, len(rows)))
    # texts starting with characters that join a preceding newline, to exercise that path
    rows += [r._replace(en="%s " + r.en) for r in rows[:200]]
    ex = directions(rows, langs)
    data, dropped, stats = encode_examples(ex, enc, model_file, 10**9, args.workers, check=2000)
    assert dropped == 0 and len(data) == len(ex)
    bad = 0
    for i, e in enumerate(ex):
        want = ([enc.bos] + sp.encode(translation_prompt(e.src_lang, e.tgt_lang, e.src))
                + [enc.user_end] + sp.encode(e.tgt) + [enc.eos])
        got = data.tokens[data.offsets[i]:data.offsets[i + 1]].tolist()
        plen = len(want) - len(sp.encode(e.tgt)) - 1
        if got != want or data.prompt_len[i] != plen:
            bad += 1
            if bad <= 3:
                print("MISMATCH", e, got[:20], want[:20])
    assert bad == 0, f"{bad} of {len(ex)} examples encoded differently"
    print(f"encoding: {len(ex)} examples in {len(data.direction_names)} directions identical to "
          f"the naive construction ({stats})")

    from train import collate
    idx = np.arange(min(64, len(data)))
    ids, tgt = collate(data, idx, enc.pad)
    for r, i in enumerate(idx):
        seq = data.tokens[data.offsets[i]:data.offsets[i + 1]]
        n, p = len(seq), int(data.prompt_len[i])
        assert (ids[r, :n] == seq).all() and (ids[r, n:] == enc.pad).all()
        lab = tgt[r]
        assert (lab[:p - 1] == -100).all() and (lab[n - 1:] == -100).all()
        assert (lab[p - 1:n - 1] == seq[p:n]).all() and seq[n - 1] == enc.eos
        assert seq[p - 1] == enc.user_end and seq[0] == enc.bos
    print("collate: loss on the answer and <|eos|> only: ok")
    print("selftest passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
