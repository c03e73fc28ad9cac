"""A tiny GGUF that llama.cpp can really load and run: a 2-layer llama with a 260-token SentencePiece vocabulary.

Weights are zeros (every logit ties, so any token is a valid answer); what matters is that
llama.cpp accepts the file, allocates its buffers and decodes a few tokens, quickly.

Rule 1: the vocabulary is what llama.cpp's SPM loader needs: <unk>, <s>, </s>, the 256 byte
        tokens `<0x00>`…`<0xFF>` (byte fallback, and the line feed it looks up) and `▁`.
Rule 2: heads of 32 dimensions, so a q8_0 or q4_0 KV cache (blocks of 32) is allowed.
Rule 3: everything else comes from `gguf_factory.ArchDesc`, so the planner sees the same shape.
"""

from __future__ import annotations

from pathlib import Path

from gguf_factory import ArchDesc, write_gguf

NORMAL, UNKNOWN, CONTROL, BYTE = 1, 2, 3, 6
_SPECIALS = (("<unk>", UNKNOWN), ("<s>", CONTROL), ("</s>", CONTROL))
_PIECES = (("▁", NORMAL),)


def _vocabulary() -> tuple[list[str], list[int]]:
    entries = [*_SPECIALS, *((f"<0x{b:02X}>", BYTE) for b in range(256)), *_PIECES]
    return [text for text, _ in entries], [kind for _, kind in entries]


def runnable_desc(n_layer: int = 2, context_length: int = 4096) -> ArchDesc:
    tokens, kinds = _vocabulary()
    return ArchDesc(
        name="tiny-runnable-llama", n_layer=n_layer, n_embd=128, n_ff=256, n_head=4, n_head_kv=2,
        n_vocab=len(tokens), context_length=context_length,
        extra_kv={
            "tokenizer.ggml.model": "llama",
            "tokenizer.ggml.tokens": tokens,
            "tokenizer.ggml.scores": [0.0] * len(tokens),
            "tokenizer.ggml.token_type": kinds,
            "tokenizer.ggml.bos_token_id": 1,
            "tokenizer.ggml.eos_token_id": 2,
            "tokenizer.ggml.unknown_token_id": 0,
        },
    )


def write_runnable_model(path: str | Path, n_layer: int = 2) -> Path:
    """Write the model (complete: every weight present) and return its path."""
    return write_gguf(path, runnable_desc(n_layer))[0]
