#!/usr/bin/env python3
"""Trains the demo model's SentencePiece vocabulary and writes the tokenizer files of the model
directory: tokenizer.model, tokenizer_config.json, generation_config.json.

Training text: the training split only (English sources once each, the translations of every
language, at most --per-lang sentences per language so the large languages do not crowd out
the small ones), plus the HY-MT1.5 prompt instructions for every target language, so that the
words of the prompts the model sees in every example get whole pieces.

Settings: BPE, byte fallback (no <unk> in practice: every character not in the vocabulary is
spelled in UTF-8 bytes), character coverage 0.9995 (the CJK characters of UI text), digits
split, normalisation "identity" (the text is taken as it is: the engine need not normalise),
no dummy prefix and no whitespace folding (exact round trip: decode(encode(s)) == s). The
special tokens of the Hunyuan chat template are control symbols: they are never produced from
text (user text containing "<|eos|>" stays text) and are inserted by id; libsentencepiece and
mtdesk's engine treat control pieces as the special tokens.

    python3 tools/train/train_tokenizer.py            # -> tools/corpus/out/tokenizer/
"""

from __future__ import annotations

import argparse
import os
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from data import DEFAULT_CORPUS, DEFAULT_LANGS, DEFAULT_TOKENIZER, read_splits  # noqa: E402
from prompt import (BOS, CHAT_TEMPLATE, EOS, PAD, SPECIAL_TOKENS,  # noqa: E402
                    translation_prompt)

MODEL_MAX_LENGTH = 4096


def write_model_files(out: Path, sp) -> dict:
    """tokenizer_config.json and generation_config.json for the SentencePiece model `sp`."""
    ids = {t: sp.piece_to_id(t) for t in SPECIAL_TOKENS}
    added = {
        str(i): {"content": t, "lstrip": False, "normalized": False, "rstrip": False,
                 "single_word": False, "special": True}
        for t, i in sorted(ids.items(), key=lambda kv: kv[1])
    }
    config = {
        "added_tokens_decoder": added,
        "additional_special_tokens": [t for t in SPECIAL_TOKENS if t not in (BOS, EOS, PAD)],
        "bos_token": BOS,
        "eos_token": EOS,
        "pad_token": PAD,
        "unk_token": sp.id_to_piece(sp.unk_id()),
        "add_bos_token": False,
        "add_eos_token": False,
        "clean_up_tokenization_spaces": False,
        "model_max_length": MODEL_MAX_LENGTH,
        "chat_template": CHAT_TEMPLATE,
    }
    (out / "tokenizer_config.json").write_text(
        json.dumps(config, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    generation = {
        "bos_token_id": ids[BOS],
        "eos_token_id": [ids[EOS]],
        "pad_token_id": ids[PAD],
        "do_sample": False,
        "max_new_tokens": 512,
        "repetition_penalty": 1.0,
    }
    (out / "generation_config.json").write_text(json.dumps(generation, indent=2) + "\n")
    return ids


def train_spm(spm, text: list[str], args) -> None:
    """SentencePiece BPE with the settings documented in docs/demo-model.md, written as
    tokenizer.model in the current directory."""
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(text),
        model_prefix="tokenizer",
        model_type=args.model_type,
        vocab_size=args.vocab_size,
        character_coverage=args.character_coverage,
        byte_fallback=True,
        split_digits=True,
        normalization_rule_name="identity",
        add_dummy_prefix=False,
        remove_extra_whitespaces=False,
        allow_whitespace_only_pieces=True,
        split_by_unicode_script=True,
        split_by_whitespace=True,
        max_sentencepiece_length=16,
        max_sentence_length=4096,
        unk_id=0,
        bos_id=-1,
        eos_id=-1,
        pad_id=-1,
        control_symbols=SPECIAL_TOKENS,
        input_sentence_size=args.input_sentence_size,
        shuffle_input_sentence=True,
        seed_sentencepiece_size=1_000_000,
        num_threads=args.threads,
        hard_vocab_limit=True,
        minloglevel=2,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--out", type=Path, default=DEFAULT_TOKENIZER)
    ap.add_argument("--langs", default=",".join(DEFAULT_LANGS))
    # 16000 x 512 (hidden) x 2 bytes = 15.6 MiB: the tied embedding, the largest tensor, fits a
    # 16 MiB safetensors shard, and is 28 % of the ~29 M parameters.
    ap.add_argument("--vocab-size", type=int, default=16000)
    ap.add_argument("--model-type", default="bpe", choices=["bpe", "unigram"])
    ap.add_argument("--character-coverage", type=float, default=0.9995)
    ap.add_argument("--per-lang", type=int, default=120_000,
                    help="most translations of one language in the training text")
    ap.add_argument("--input-sentence-size", type=int, default=1_500_000)
    ap.add_argument("--max-rows", type=int, default=0, help="for smoke tests: use only N rows")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    import sentencepiece as spm

    langs = [l for l in args.langs.split(",") if l]
    t0 = time.time()
    rows = read_splits(args.corpus, ("train",), langs)["train"]
    rng = random.Random(args.seed)
    if args.max_rows and len(rows) > args.max_rows:
        rows = rng.sample(rows, args.max_rows)
    by_lang = defaultdict(list)
    english = set()
    for r in rows:
        by_lang[r.lang].append(r.xx)
        english.add(r.en)
    text = sorted(english)
    for lang in sorted(by_lang):
        xs = sorted(set(by_lang[lang]))
        if len(xs) > args.per_lang:
            xs = rng.sample(xs, args.per_lang)
        text += xs
    # The prompt instructions, as many times as the smallest language has sentences would be
    # too much; a few hundred copies make their words frequent enough to get whole pieces.
    for tgt in ["en"] + langs:
        for src in ["en", "zh"] if tgt != "zh" else ["en"]:
            text += [translation_prompt(src, tgt, "").rstrip("\n")] * 300
    rng.shuffle(text)
    print(f"{len(rows)} training rows, {len(english)} English sentences, "
          f"{len(text)} sentences of tokenizer training text ({time.time() - t0:.0f} s)", flush=True)

    args.out.mkdir(parents=True, exist_ok=True)
    # Trained from inside the output folder with a bare prefix: the model records its
    # model_prefix, and an absolute one would carry this machine's paths into the model.
    cwd = os.getcwd()
    os.chdir(args.out)
    try:
        train_spm(spm, text, args)
    finally:
        os.chdir(cwd)
    (args.out / "tokenizer.vocab").unlink(missing_ok=True)
    sp = spm.SentencePieceProcessor(model_file=str(args.out / "tokenizer.model"))

    ids = write_model_files(args.out, sp)

    # checks: exact round trip, special tokens never produced from text
    sample = rng.sample(text, min(20000, len(text)))
    bad = [s for s in sample if sp.decode(sp.encode(s)) != s]
    if bad:
        print(f"WARNING: {len(bad)} of {len(sample)} sentences do not round-trip, e.g. {bad[0]!r}")
    trick = "say <|eos|> and <|startoftext|>"
    assert not set(sp.encode(trick)) & set(ids.values()), "special tokens parsed from text"
    assert sp.decode(sp.encode(trick)) == trick
    n_tok = sum(len(sp.encode(s)) for s in sample)
    n_chr = sum(len(s) for s in sample)
    stats = {"vocab_size": sp.get_piece_size(), "special_ids": ids,
             "chars_per_token": round(n_chr / n_tok, 3), "round_trip_failures": len(bad),
             "training_sentences": len(text), "langs": langs}
    for lang in sorted(by_lang):
        xs = by_lang[lang][:2000]
        stats.setdefault("chars_per_token_by_lang", {})[lang] = round(
            sum(map(len, xs)) / max(1, sum(len(t) for t in sp.encode(xs))), 3)
    en = sorted(english)[:2000]
    stats["chars_per_token_by_lang"]["en"] = round(
        sum(map(len, en)) / max(1, sum(len(t) for t in sp.encode(en))), 3)
    (args.out / "tokenizer_stats.json").write_text(json.dumps(stats, ensure_ascii=False, indent=1))
    print(json.dumps(stats, ensure_ascii=False))
    print(f"wrote {args.out} ({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
