"""One vocabulary for the ledger's lines: the plain name and the one-sentence tooltip every view shows.

Rule 1: the JSON keys stay the ledger's field names (`LEDGER_LINES`); people read LINE_NAMES:
        the chart legend, the plan and impossible reports, the compare table and the tooltips
        all take a line's words from here, so one line has one name everywhere.
Rule 2: a tooltip says in one sentence what the line is and why it scales as it does.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.plan.ledger import LEDGER_LINES


@dataclass(frozen=True)
class LineWords:
    name: str
    tooltip: str


LINE_NAMES: dict[str, LineWords] = {
    "base": LineWords("Process overhead", "The runtime's own memory (process, allocator, tokenizer, threads): a fixed "
                      "24 MiB, whatever the model or context."),
    "scratch": LineWords("Scratch buffers", "Working vectors for one token passing one layer: they grow with the "
                         "model's width, not with context."),
    "logits": LineWords("Logits", "One score per vocabulary entry for the next token: it grows with the vocabulary."),
    "attn": LineWords("Attention scores", "One step's attention scores, one per head and context token: they grow "
                      "with context."),
    "resid": LineWords("Residual stream", "The hidden state of every context token, kept through prefill: it grows "
                       "with context × model width."),
    "out_norm": LineWords("Output norm", "The final normalisation weights (and GPT-2-style position embeddings): "
                          "small and fixed for a model."),
    "embeddings": LineWords("Embedding rows", "The token-embedding rows the context reads (none when a resident head "
                            "shares the table): they grow with context up to the whole table."),
    "lm_head": LineWords("Output head", "The projection from hidden state to vocabulary scores: the whole table when "
                         "resident, one layer-sized window when streamed."),
    "kv": LineWords("KV cache", "Keys and values of every context token in every attention layer: they grow with "
                    "context and with the cache type's width."),
    "ring": LineWords("Streaming ring", "Buffers that read unpinned layers from disk, one layer each: they grow with "
                      "the ring depth and vanish when every layer is pinned."),
    "pinned": LineWords("Pinned layers", "Layers kept in RAM so they are not read from disk for every token: they "
                        "grow one layer at a time with the budget."),
}
MEASURED_PARTS: tuple[tuple[str, str], ...] = (
    # JSON key,  the segment's name in the chart
    ("weights", "Measured: weights"),
    ("repack", "Measured: repacked weights"),
    ("kv", "Measured: KV cache"),
    ("compute", "Measured: compute buffers"),
    ("output", "Measured: output buffer"),
    ("process", "Measured: rest of peak RSS"),
)
MEASURED_LINES: tuple[str, ...] = tuple(name for _, name in MEASURED_PARTS)
"""The Measured column's segments (`evidence_view` Rule 1), named here so the chart can lay out its lines without
importing the evidence views."""

TOTAL_NAME = "Total"

if tuple(LINE_NAMES) != LEDGER_LINES:  # a new ledger line needs its words here
    raise ImportError(f"LINE_NAMES must name every ledger line in order: {LEDGER_LINES}")


def line_name(line: str) -> str:
    """Rule 1: the plain name of a ledger line (the field name for anything else)."""
    words = LINE_NAMES.get(line)
    return words.name if words else line


def line_tooltip(line: str) -> str:
    """Rule 2."""
    words = LINE_NAMES.get(line)
    return words.tooltip if words else ""
