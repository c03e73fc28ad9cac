"""What each dock computes from the session's state: one function per dock, so a dock never reads the window.

Rule 1: a budget sweep depends on `SweepInputs` — the model object, the request with its budget
        and force dropped (the sweep varies the budget; `sweep` ignores force), and the speed
        inputs (bandwidths, the machine's available RAM, the prompt). A dock whose drawn sweep has
        other inputs is stale; an export of a stale sweep recomputes it (`sweep_of`), never writes
        an older model's sweep under the current name.
Rule 2: `sweep_of(inputs, budgets, mark)` is the sweep the dock draws, `gguf-budget sweep` prints
        and File ▸ Export writes: `budgets` as given, else the automatic range holding `mark`
        (the window's budget), each feasible row with its decode estimates.
Rule 3: the quant ladder is judged with `ladder_request(state)`: the state's asked ctx (None:
        llama.cpp's default per row) and cap, KV type, reserves, budget request, bandwidths,
        prompt and server — the same ctx policy as `fit` (`fit.ctx.auto_ctx`), so the dock's header
        and every column state the one rule they were judged by.
Rule 4: the Library judges every model with `library_settings(state)`: the state's machine,
        budget, cap and reserves (None until a machine is known).
Rule 5: the view publishes all three at once (`dock_inputs(state, previous)`, `ExplorerView.docks`),
        with one staleness key: the state's fields any of them reads (`DockKey`, the model by
        identity). While the key holds, the previous view's `DockInputs` is the one published, so a
        dock knows its inputs did not move when it holds the very same object.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Sequence

from gguf_budget.core.errors import BudgetError
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit.engine_options import EngineOptions
from gguf_budget.core.fit.runtime_types import Runtime
from gguf_budget.core.fit.server.types import ServerSettings
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.model.kv import KVType
from gguf_budget.core.library.assess import LibrarySettings
from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.plan.types import BudgetRequest, CtxPolicy, HeadMode
from gguf_budget.core.quant.ladder_request import LadderRequest

if TYPE_CHECKING:
    from gguf_budget.core.plan.sweep import SweepResult


@dataclass(frozen=True, kw_only=True)
class SweepInputs:
    """Rule 1."""

    model: ModelSpec
    request: BudgetRequest
    bandwidths: Bandwidths
    host_available: int | None

    def same(self, other: SweepInputs | None) -> bool:
        """The very same model object and equal other inputs (a reloaded file is another sweep)."""
        return other is not None and other.model is self.model and other == self


def sweep_request(request: BudgetRequest) -> BudgetRequest:
    """Rule 1's request: the budget and force dropped."""
    return replace(request, budget=Budget.unlimited(), force=False)


def sweep_inputs(state: ExplorerState) -> SweepInputs | None:
    """Rule 1 (None before a model)."""
    if state.model is None:
        return None
    machine = state.machine
    return SweepInputs(model=state.model, request=sweep_request(state.request()), bandwidths=state.bandwidths,
                       host_available=None if machine is None else machine.host_available)


def sweep_of(inputs: SweepInputs, budgets: Sequence[int] | None = None, mark: Budget | None = None) -> SweepResult:
    """Rule 2; raises a BudgetError when the model or range cannot be planned."""
    # the sweep's own code is imported by the first sweep: a view builds only its inputs
    from gguf_budget.core.plan.sweep import automatic_range, budget_range, sweep_budgets
    from gguf_budget.core.speed.sweep import with_speeds

    chosen = tuple(budgets) if budgets is not None else \
        budget_range(automatic_range(inputs.model, inputs.request, None if mark is None else mark.limit))
    result = sweep_budgets(inputs.model, chosen, inputs.request)
    return with_speeds(inputs.model, result, inputs.request.kv_type, inputs.bandwidths, inputs.host_available)


def ladder_request(state: ExplorerState) -> LadderRequest:
    """Rule 3."""
    return LadderRequest(ctx=state.ctx, ctx_cap=state.ctx_cap, kv_type=state.kv_type, reserves=state.reserves,
                         budget=state.request(), bandwidths=state.bandwidths, prompt_tokens=state.prompt_tokens,
                         server=state.server, like=state.fit_request(state.ctx))


def library_settings(state: ExplorerState) -> LibrarySettings | None:
    """Rule 4."""
    if state.machine is None:
        return None
    return LibrarySettings(state.machine, state.budget, state.ctx_cap, state.reserves)


@dataclass(frozen=True, kw_only=True)
class DockKey:
    """Rule 5: every state field a dock's inputs read (the sweep's, the ladder's, the library's)."""

    model: ModelSpec | None
    budget: Budget
    ctx: int | None
    ctx_cap: int | None
    prefer: CtxPolicy
    n_buffers: int
    head_mode: HeadMode
    kv_type: KVType
    force: bool
    machine: HardwareSnapshot | None
    reserves: Reserves
    gpu_layers: int | None
    tensor_split: tuple[float, ...] | None
    bandwidths: Bandwidths
    prompt_tokens: int
    runtime: Runtime
    server: ServerSettings
    engine: EngineOptions
    v_type: KVType | None
    n_cpu_moe: int | None

    @classmethod
    def of(cls, state: ExplorerState) -> DockKey:
        return cls(**{f.name: getattr(state, f.name) for f in fields(cls)})

    def same(self, other: DockKey) -> bool:
        """The very same model object and equal other fields (a model is compared by identity: cheap, and a
        reloaded file is another model)."""
        return self.model is other.model and replace(self, model=None) == replace(other, model=None)


@dataclass(frozen=True)
class DockInputs:
    """Rule 5: what every dock computes from, for one view."""

    key: DockKey
    sweep: SweepInputs | None
    """None before a model, or while the planner refuses the knobs (the window says why)."""
    ladder: LadderRequest | None
    """None while the planner refuses the knobs."""
    library: LibrarySettings | None
    """None until a machine is known."""


def dock_inputs(state: ExplorerState, previous: DockInputs | None = None) -> DockInputs:
    """Rule 5: `previous` itself while its key holds, else all three built once."""
    key = DockKey.of(state)
    if previous is not None and previous.key.same(key):
        return previous
    try:
        sweep, ladder = sweep_inputs(state), ladder_request(state)
    except BudgetError:  # knobs the planner refuses: the docks wait, the Library judges on
        sweep, ladder = None, None
    return DockInputs(key, sweep, ladder, library_settings(state))
