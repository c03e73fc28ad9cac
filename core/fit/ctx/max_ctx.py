"""The largest context a full load still fits at: with its GPU layers held, or placed again at each ctx.

Rule 1: candidates are the cap itself and the multiples of ENGINE_CELL_PAD (256) below it —
        llama.cpp pads every context to 256 cells (`kv` Rule 5), so a ctx between two
        multiples costs the next one up; its `--fit` likewise lowers n_ctx in whole steps.
Rule 2: only ctx (and, when asked, the placement) moves; the machine, KV type and reserves are
        the request's. `gpu_layers` a number: those layers are held at every candidate — "how
        far can ctx go with this placement" (the fit view, the library). `gpu_layers` None:
        each candidate is placed automatically, as llama.cpp's `-ngl` auto does at that ctx —
        "how far can ctx go on this machine at all" (the quant ladder). A candidate fits when
        the verdict admits it.
Rule 3: every device's KV grows with ctx under either placement, so "fits" holds up to some ctx
        and no further: the largest is bisected (log2(cap / 256) verdicts, not cap / 256).
Rule 4: None when even the first candidate (256 tokens, or the cap when smaller) does not fit,
        or the verdict cannot be told (unknown facts).
Rule 5: the answer does not depend on the request's own ctx, so it is kept by the rest of its inputs
        (the last KEPT searches): moving an asked ctx back and forth over the same GPU layers in the
        window, or judging one model's ladder again, searches once.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import replace

from gguf_budget.core.model.per_model_cache import per_model
from gguf_budget.core.fit.estimate import fit_verdict
from gguf_budget.core.fit.types import FitRequest
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.model.kv import ENGINE_CELL_PAD
from gguf_budget.core.model.spec import ModelSpec

KEPT = 256


def _candidate(i: int, n: int, cap: int) -> int:
    return cap if i == n - 1 else ENGINE_CELL_PAD * (i + 1)


def largest_fitting_ctx(model: ModelSpec, snapshot: HardwareSnapshot, request: FitRequest,
                        gpu_layers: int | None, cap: int) -> int | None:
    """Rules 1–5: the largest candidate ctx ≤ cap at which the model fits this machine with `gpu_layers`
    layers held (None: placed automatically at each candidate)."""
    return _searched(model, snapshot, replace(request, gpu_layers=gpu_layers, ctx=None), cap)


@per_model(maxsize=KEPT)
def _searched(model: ModelSpec, snapshot: HardwareSnapshot, held: FitRequest, cap: int) -> int | None:
    n = max(-(-cap // ENGINE_CELL_PAD), 1)

    def fits(i: int) -> bool:
        return fit_verdict(model, snapshot, replace(held, ctx=_candidate(i, n, cap))).admitted

    last = bisect_left(range(n), True, key=lambda i: not fits(i)) - 1
    return None if last < 0 else _candidate(last, n, cap)
