"""The full load (llama.cpp's placement on the machine): its fit and ctx, the largest ctx it fits at, its speed.

Rule 1: the fit is `fit.ctx.auto_ctx.auto_fit` on the state's machine, with the state's GPU layers,
        KV type, reserves and cap: an asked ctx is judged as asked; with none, the ctx is what
        llama.cpp's own default `--fit` would choose (the trained context, shrunk to fit, never
        below 4096 before GPU layers are given up). The Budget plan's ctx does not enter: the
        two runtimes each answer at their own ctx, and each says which.
Rule 2: the largest ctx that fits holds the fit's GPU layers and searches up to the one ctx
        ceiling (`model.context.ctx_ceiling`). When the ctx was chosen automatically at or below
        the ceiling by shrinking (or not), that ctx is already the largest (the same candidates,
        the same test), so nothing is searched again; a caller that knows the largest for the same
        GPU layers and the same search cap (only an asked ctx moved, and not past the ceiling: an asked ctx
        past it raises the cap, `auto_ctx` Rule 5) passes it in.
Rule 3: the speed estimate is `fit_speed` for the state's prompt length: only for a full load that fits.
Rule 4: the fit's runtime-evidence claim is the state's `evidence` (None until a real run).
Rule 5: a search that prices many loads and reads none of their largest ctx (`tune`, `load_fix`) asks `largest=False`: the fit
        and speed are the same, the largest ctx is not searched (None). One that reads only each load's verdict,
        devices, command and speed (`tune`) asks `report=False` too (`fit.estimate` Rule 14).
`gguf-budget fit` and the window both call `full_load`, so they show the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit.ctx.auto_ctx import AutoFit, FitCtxReason, auto_fit, largest_cap, largest_ctx
from gguf_budget.core.fit.types import FitEstimate
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.speed.estimate import SpeedEstimate, fit_speed
from gguf_budget.core.speed.token_bytes import TokenPrices


@dataclass(frozen=True)
class FullLoad:
    """The full load: llama.cpp's placement at its ctx (and why that ctx), the largest ctx it fits at, its speed."""

    choice: AutoFit
    max_ctx: int | None
    speed: SpeedEstimate | None

    @property
    def fit(self) -> FitEstimate:
        return self.choice.fit

    @property
    def ctx(self) -> int:
        return self.choice.ctx


def _largest(model: ModelSpec, state: ExplorerState, choice: AutoFit,
             known: tuple[int, int, int | None] | None) -> int | None:
    """Rule 2: `fit.ctx.auto_ctx.largest_ctx`, unless the caller knows it for the same GPU layers and search cap."""
    if (known is not None and known[:2] == (choice.fit.gpu_layers, largest_cap(choice))
            and choice.reason is FitCtxReason.ASKED):
        return known[2]
    assert state.machine is not None
    return largest_ctx(model, state.machine, choice)


def full_load(model: ModelSpec, state: ExplorerState, prices: TokenPrices,
              known: tuple[int, int, int | None] | None = None, largest: bool = True,
              report: bool = True) -> FullLoad | None:
    """Rules 1–5 at the state's asked ctx (None: llama.cpp's default); None until the state knows a machine.
    `known` is (GPU layers, the cap searched to, their largest ctx) from a full load of the same state at another
    asked ctx."""
    if state.machine is None:
        return None
    choice = auto_fit(model, state.machine, state.fit_request(state.ctx), state.ctx_cap, report)
    if choice.fit.claims.runtime_evidence != state.evidence:
        choice = replace(choice, fit=replace(choice.fit, claims=replace(choice.fit.claims,
                                                                        runtime_evidence=state.evidence)))
    return FullLoad(choice, _largest(model, state, choice, known) if largest else None,
                    fit_speed(prices, choice.fit, state.bandwidths, state.prompt_tokens))
