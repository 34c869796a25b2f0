"""Fast, exact tokenisation of many training examples.

An example is
    [<|startoftext|>] + encode(prompt(src_lang, tgt_lang, source)) + [<|extra_0|>]
    + encode(target) + [<|eos|>]
and prompt() is an instruction that ends in "\\n\\n" followed by the source text. Encoding
millions of full prompts one by one costs minutes, so the instruction of each direction is
encoded once and each distinct text once (every text is the source of one direction and the
answer of the other), in parallel processes, and the pieces are joined.

Why joining is exact: SentencePiece BPE builds a word by merging adjacent symbols into the
vocabulary's pieces; the instruction and the text can only interact through a piece that spans
their boundary, i.e. a piece containing "\\n" followed by the text's first character. Texts
whose first character can follow "\\n" inside some piece are encoded as full prompts instead.
A random sample of examples is also checked against full encoding, and any difference makes
the whole corpus fall back to encoding full prompts.
"""

from __future__ import annotations

import multiprocessing as mp
import random
import time
from dataclasses import dataclass

import numpy as np

from prompt import PromptEncoder, translation_prompt

_SP = None


def _init_worker(model_file: str) -> None:
    global _SP
    import sentencepiece as spm
    _SP = spm.SentencePieceProcessor(model_file=model_file)


def _encode_chunk(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    enc = _SP.encode(texts)
    lens = np.fromiter(map(len, enc), dtype=np.int64, count=len(enc))
    flat = np.fromiter((t for e in enc for t in e), dtype=np.int32, count=int(lens.sum()))
    return flat, lens


def encode_texts(texts: list[str], model_file: str, workers: int,
                 chunk: int = 20_000) -> tuple[np.ndarray, np.ndarray]:
    """(flat int32 tokens, int64 offsets of len(texts)+1) of every text."""
    chunks = [texts[i:i + chunk] for i in range(0, len(texts), chunk)]
    if workers > 1 and len(chunks) > 1:
        ctx = mp.get_context("fork")
        with ctx.Pool(workers, initializer=_init_worker, initargs=(model_file,)) as pool:
            parts = pool.map(_encode_chunk, chunks)
    else:
        _init_worker(model_file)
        parts = [_encode_chunk(c) for c in chunks]
    flat = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int32)
    lens = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
    offsets = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    return flat, offsets


@dataclass
class Encoded:
    """Token sequences of examples in one flat int32 array."""
    tokens: np.ndarray        # all sequences, back to back
    offsets: np.ndarray       # int64, len n + 1
    prompt_len: np.ndarray    # int32: <|startoftext|> + prompt + <|extra_0|>
    direction: np.ndarray     # int16 index into direction_names
    direction_names: list

    def __len__(self) -> int:
        return len(self.prompt_len)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets).astype(np.int32)


def _gather(pool: np.ndarray, seg_start: np.ndarray, seg_len: np.ndarray) -> np.ndarray:
    """Concatenation, row by row, of pool[seg_start[i, j] : + seg_len[i, j]]."""
    starts = seg_start.reshape(-1)
    lens = seg_len.reshape(-1)
    total = int(lens.sum())
    excl = np.zeros(len(lens), dtype=np.int64)
    np.cumsum(lens[:-1], out=excl[1:])
    idx = np.repeat(starts - excl, lens) + np.arange(total, dtype=np.int64)
    return pool[idx]


def encode_examples(examples, enc: PromptEncoder, model_file: str, max_len: int,
                    workers: int, check: int = 20_000, seed: int = 0, log=print):
    """Encoded sequences of `examples` (objects with src_lang, tgt_lang, src, tgt), dropping
    those longer than max_len tokens. Returns (Encoded, number dropped, stats)."""
    t0 = time.time()
    n = len(examples)
    pairs = sorted({(e.src_lang, e.tgt_lang) for e in examples})
    dindex = {d: i for i, d in enumerate(pairs)}
    names = [f"{s}-{t}" for s, t in pairs]
    text_id: dict[str, int] = {}
    src_ids = np.empty(n, np.int64)
    tgt_ids = np.empty(n, np.int64)
    dirs = np.empty(n, np.int16)
    for i, e in enumerate(examples):
        src_ids[i] = text_id.setdefault(e.src, len(text_id))
        tgt_ids[i] = text_id.setdefault(e.tgt, len(text_id))
        dirs[i] = dindex[(e.src_lang, e.tgt_lang)]
    texts = list(text_id)
    flat, offs = encode_texts(texts, model_file, workers)
    t_texts = time.time() - t0

    sp = enc.sp
    prefixes = []
    for s, t in pairs:
        p = translation_prompt(s, t, "")
        assert p.endswith("\n\n")
        prefixes.append(sp.encode(p))

    # first characters that a vocabulary piece can join to a preceding "\n"
    after_newline = set()
    for i in range(sp.get_piece_size()):
        piece = sp.id_to_piece(i)
        for k in range(len(piece) - 1):
            if piece[k] == "\n":
                after_newline.add(piece[k + 1])
    unsafe_text = np.fromiter(((t[:1] in after_newline) or not t for t in texts), dtype=bool,
                              count=len(texts))
    unsafe = unsafe_text[src_ids]

    # exactness check on a sample (and on all unsafe ones, which get full encodings anyway)
    rng = random.Random(seed)
    sample = rng.sample(range(n), min(check, n))
    mismatches = 0
    for i in sample:
        if unsafe[i]:
            continue
        e = examples[i]
        full = sp.encode(translation_prompt(e.src_lang, e.tgt_lang, e.src))
        a, b = offs[src_ids[i]], offs[src_ids[i] + 1]
        joined = prefixes[dirs[i]] + flat[a:b].tolist()
        if full != joined:
            mismatches += 1
    if mismatches:
        log(f"WARNING: {mismatches} of {len(sample)} joined prompts differ from full encoding: "
            f"encoding every prompt in full")
        unsafe[:] = True

    full_idx = np.nonzero(unsafe)[0]
    full_texts = [translation_prompt(examples[i].src_lang, examples[i].tgt_lang, examples[i].src)
                  for i in full_idx]
    fflat, foffs = encode_texts(full_texts, model_file, workers)

    # the pool every segment is taken from: texts, prefixes, full prompts, special tokens
    pre_flat = np.asarray([t for p in prefixes for t in p], dtype=np.int32)
    pre_offs = np.zeros(len(prefixes) + 1, np.int64)
    np.cumsum([len(p) for p in prefixes], out=pre_offs[1:])
    specials = np.asarray([enc.bos, enc.user_end, enc.eos], dtype=np.int32)
    base_pre = len(flat)
    base_full = base_pre + len(pre_flat)
    base_sp = base_full + len(fflat)
    pool = np.concatenate([flat, pre_flat, fflat, specials])

    # segments: bos | prefix | source text | user_end | answer text | eos   (6 per example)
    seg_start = np.zeros((n, 6), np.int64)
    seg_len = np.zeros((n, 6), np.int64)
    seg_start[:, 0], seg_len[:, 0] = base_sp + 0, 1
    seg_start[:, 1] = base_pre + pre_offs[dirs]
    seg_len[:, 1] = (pre_offs[1:] - pre_offs[:-1])[dirs]
    seg_start[:, 2] = offs[src_ids]
    seg_len[:, 2] = offs[src_ids + 1] - offs[src_ids]
    if len(full_idx):                       # full prompt in segment 1, nothing in segment 2
        seg_start[full_idx, 1] = base_full + foffs[:-1]
        seg_len[full_idx, 1] = foffs[1:] - foffs[:-1]
        seg_len[full_idx, 2] = 0
    seg_start[:, 3], seg_len[:, 3] = base_sp + 1, 1
    seg_start[:, 4] = offs[tgt_ids]
    seg_len[:, 4] = offs[tgt_ids + 1] - offs[tgt_ids]
    seg_start[:, 5], seg_len[:, 5] = base_sp + 2, 1

    total = seg_len.sum(1)
    keep = total <= max_len
    dropped = int((~keep).sum())
    seg_start, seg_len, total = seg_start[keep], seg_len[keep], total[keep]
    tokens = _gather(pool, seg_start, seg_len)
    offsets = np.zeros(len(total) + 1, np.int64)
    np.cumsum(total, out=offsets[1:])
    prompt_len = (seg_len[:, 0] + seg_len[:, 1] + seg_len[:, 2] + seg_len[:, 3]).astype(np.int32)
    stats = {"examples": n, "distinct_texts": len(texts), "full_prompts": int(len(full_idx)),
             "checked": len(sample), "mismatches": mismatches,
             "text_seconds": round(t_texts, 1), "seconds": round(time.time() - t0, 1)}
    return Encoded(tokens, offsets, prompt_len, dirs[keep], names), dropped, stats
