"""The full load (llama.cpp's placement on the machine): its fit, the largest ctx it fits at, its decode estimate.

Rule 1: the fit is `estimate_fit` at the given ctx (None: the model's context length) on the
        state's machine, with the state's GPU layers, KV type and reserves.
Rule 2: the largest ctx that fits holds those GPU layers and searches up to the cap: the
        state's ctx cap, else the model's context length, else the given ctx (none: unknown).
        It depends on the ctx asked only through the GPU layers chosen there, so a caller that
        knows it for the same GPU layers passes it in.
Rule 3: the speed estimate is `fit_speed` for the state's prompt length: only for a full load that fits.
Rule 4: the fit's runtime-evidence claim is the state's `evidence` (None until a real run).
`gguf-budget fit` and the window both call `full_load`, so they show the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.max_ctx import largest_fitting_ctx
from gguf_budget.core.fit.types import FitEstimate
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.speed.estimate import SpeedEstimate, fit_speed
from gguf_budget.core.speed.token_bytes import TokenPrices


@dataclass(frozen=True)
class FullLoad:
    """The full load: llama.cpp's placement, the largest ctx it fits at, its decode estimate."""

    fit: FitEstimate
    max_ctx: int | None
    speed: SpeedEstimate | None


def full_load_cap(model: ModelSpec, state: ExplorerState, ctx: int | None) -> int | None:
    """Rule 2's cap."""
    return state.ctx_cap or model.context_length or ctx


def full_load(model: ModelSpec, state: ExplorerState, ctx: int | None, prices: TokenPrices,
              known: tuple[int, int | None] | None = None) -> FullLoad | None:
    """Rules 1–3; None until the state knows a machine. `known` is (GPU layers, their largest ctx) from a full
    load of the same state at another ctx: the search is skipped when the GPU layers are the same (Rule 2)."""
    if state.machine is None:
        return None
    request = state.fit_request(ctx)
    fit = estimate_fit(model, state.machine, request)
    fit = replace(fit, claims=replace(fit.claims, runtime_evidence=state.evidence))
    cap = full_load_cap(model, state, ctx)
    if known is not None and known[0] == fit.gpu_layers:
        max_ctx = known[1]
    else:
        max_ctx = largest_fitting_ctx(model, state.machine, request, fit.gpu_layers, cap) if cap else None
    return FullLoad(fit, max_ctx, fit_speed(prices, fit, state.bandwidths, state.prompt_tokens))
