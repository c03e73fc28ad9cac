"""Which layers slide, and over what window: llama.cpp's per-architecture rules as one table.

Read in `core.llama_cpp.LLAMA_CPP_SOURCE`, src/models/*.cpp (`load_arch_hparams`):

Rule 1: an architecture without a row keeps every layer full, whatever `sliding_window` says
        (llama.cpp ignores the key there, e.g. mistral v0.1, phi3).
Rule 2: the window: the file's `{arch}.attention.sliding_window`; without the key the row's
        `default_window` (gemma2 4096, llama4 8192, the 64-layer exaone4 4096), else no sliding;
        a key of 0 turns sliding off; `forced_window` overrides the file (llama4's chunks are 8192,
        smallthinker's window 4096). exaone4 slides only in its 64-layer (32B) model.
Rule 3: which layers (`load_swa_pattern`): a per-layer bool array `sliding_window_pattern` wins
        (tiled over the layers); else that key read as a period N, else the row's period.
        Period N: layer il slides when il % N < N − 1 (N − 1 sliding, then one full); "dense first"
        (cohere2moe, laguna, modern-bert, smallthinker): when il % N != 0 (one full, then N − 1
        sliding); N = 0: every layer slides. A row with period None reads only the array.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping


@dataclass(frozen=True)
class SwaRule:
    """One architecture's sliding-window rule (Rules 2–3)."""

    period: int | None
    dense_first: bool = False
    default_window: int | None = None
    forced_window: int | None = None
    only_n_layer: int | None = None

    def window(self, file_window: int | None, n_layer: int) -> int | None:
        """The window llama.cpp uses, or None when no layer slides (Rule 2)."""
        if self.only_n_layer is not None and n_layer != self.only_n_layer:
            return None
        if file_window is None:
            return self.default_window
        return (self.forced_window or file_window) if file_window > 0 else None

    def slides(self, il: int, period: int) -> bool:
        """Rule 3 for one layer and a period."""
        if period == 0:
            return True
        return il % period != 0 if self.dense_first else il % period < period - 1


SWA_RULES: Mapping[str, SwaRule] = MappingProxyType({
    "afmoe": SwaRule(4),
    "cohere2": SwaRule(4),
    "cohere2moe": SwaRule(4, dense_first=True),
    "exaone-moe": SwaRule(4, default_window=128),
    "exaone4": SwaRule(4, default_window=4096, only_n_layer=64),
    "gemma-embedding": SwaRule(6),
    "gemma2": SwaRule(2, default_window=4096),
    "gemma3": SwaRule(6),
    "gemma3n": SwaRule(5),
    "gemma4": SwaRule(None),
    "gemma4-assistant": SwaRule(None),
    "gpt-oss": SwaRule(2),
    "granite_swa": SwaRule(None),
    "laguna": SwaRule(4, dense_first=True),
    "lfm2": SwaRule(0),
    "llama4": SwaRule(4, default_window=8192, forced_window=8192),
    "maple": SwaRule(None),
    "mellum": SwaRule(4),
    "mimo2": SwaRule(None),
    "modern-bert": SwaRule(3, dense_first=True),
    "muse-glimmer": SwaRule(4),
    "olmo2": SwaRule(4),
    "plamo3": SwaRule(8),
    "smallthinker": SwaRule(4, dense_first=True, forced_window=4096),
    "spark2_5": SwaRule(None),
})


def sliding_windows(arch: str, n_layer: int, file_window: int | None, pattern: object) -> tuple[int | None, ...]:
    """Each layer's window, None where the layer attends to the whole context (Rules 1–3).

    `pattern` is the file's `sliding_window_pattern` value: a tuple of bools, a period, or None.
    """
    rule = SWA_RULES.get(arch)
    window = rule.window(file_window, n_layer) if rule is not None else None
    if rule is None or not window:
        return (None,) * n_layer
    if isinstance(pattern, tuple) and pattern:
        return tuple(window if pattern[il % len(pattern)] else None for il in range(n_layer))
    period = pattern if isinstance(pattern, int) and not isinstance(pattern, bool) else rule.period
    if period is None:
        return (None,) * n_layer
    return tuple(window if rule.slides(il, period) else None for il in range(n_layer))
