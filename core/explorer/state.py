"""The explorer session's input: everything a person chose on the screen, and nothing derived.

The explorer session (`session.py`) holds one `ExplorerState`, replaces it as each change says,
and publishes what `derive(state)` returns; the window and every dock draw that.

Rule 1: the budget is one `Budget` (unlimited, or n ≥ 1 bytes), passed to the planner as it is;
        `budget_origin` says where it came from (the person, this machine's usable RAM, or a
        provisional figure while no machine is known — `session` Rule 2).
Rule 2: `ctx` None asks the planner for ctx under `ctx_cap` (None: the model's context length)
        by the `prefer` policy; an explicit ctx is planned as it is, never snapped or clamped.
Rule 3: `machine` is the snapshot the full load is judged on (probed, or a hypothetical
        machine the person typed); None until one is known. `bandwidths` are the figures the
        speed estimates use (measured, typed or assumed — each says which).
Rule 4: `slow_below_tok_s` is the threshold under which a plan that streams weights is
        headlined FEASIBLE — SLOW (`headline` Rule 2); 2 tok/s by default.
Rule 5: the ranges a control may offer are core policy, named here once: ring depth
        (`ranges.BUFFERS`), the head modes, the KV types, the slow threshold.
Rule 6: `measured` is what a real run gave for this model (imported or measured): its column,
        its summary and its runtime-evidence claim, which the full load's claims carry; the
        estimate never fills it itself.
Rule 7: `prompt_tokens` is the prompt whose prefill and time to the first token are estimated
        (`ranges.PROMPT_TOKENS`; 1,000 by default, as the CLI's `--prompt-tokens`).
Rule 8: `runtime` is the llama.cpp program the full load's peak-RSS band is for (llama-server).
Rule 9: `server` is what llama-server runs beside the model in the full load (slots, prompt
        cache, checkpoints, a projector, a draft); its defaults are `ServerSettings`'s.
Rule 10: `engine` is what the person set of llama.cpp's engine in its own options (`-fa`, `-ub`,
        `--swa-full`, `-lm`, `-ot`, …; `fit.engine_options`), None where the program's own default
        applies; `v_type` is the V cache's type where it differs from `kv_type` (K's, `-ctk`), and
        `n_cpu_moe` a forced `--n-cpu-moe N`.
Rule 12: the session holds what the machine panel's inputs came from: `probed` (the hardware probe's
        answer), `hypothetical` (the machine the person typed or picked, while its box is ticked),
        `measured_bandwidths` (this machine's figures as every command reads them, None until read)
        and `typed_bandwidths` (what the person typed over them). The session's changes keep
        `machine` = hypothetical, else probed, and `bandwidths` = the typed figures over the measured.
Rule 13: `goal` is the goal last applied from the Goal control (`AppliedGoal`: the goal and its floors, its answer in
        words, and the settings the answer made), None when none was; the knobs themselves hold the answer's settings.
Rule 11: every field is checked where a state is made (`check_field`, one table for the state
        and for the session's typed changes): a value of the wrong kind or out of its range
        (`core.ranges`, the enums) is a RequestError, so no state holds a value `derive` cannot read.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Callable

from gguf_budget.core.errors import RequestError
from gguf_budget.core.fit.engine_options import DEFAULT_ENGINE_OPTIONS, EngineOptions
from gguf_budget.core.fit.runtime_types import DEFAULT_RUNTIME, EngineSettings, Runtime
from gguf_budget.core.fit.server.types import ServerSettings
from gguf_budget.core.fit.types import FitRequest, Reserves
from gguf_budget.core.machine.backend import Backend
from gguf_budget.core.machine.bandwidth import Bandwidths, with_typed, with_typed_compute
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.model.kv import DEFAULT_KV_TYPE, KV_TYPES, KVType
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.plan.types import HEAD_MODES, BudgetRequest, CtxPolicy, HeadMode
from gguf_budget.core.ranges import (
    BANDWIDTH, BUFFERS, CONTEXT, CPU_GFLOPS, GPU_COUNT, GPU_TFLOPS, LAYERS_ASKED, PROMPT_TOKENS, shown,
)
from gguf_budget.core.speed.estimate import DEFAULT_PROMPT_TOKENS
from gguf_budget.core.vocab import TextEnum

if TYPE_CHECKING:  # a view of a run imports the measuring code (psutil): not for a CLI refusal
    from gguf_budget.core.views.evidence_view import MeasuredView

DEFAULT_SLOW_BELOW_TOK_S = 2.0
SLOW_RANGE = (0.0, 10_000.0)
DEFAULT_N_BUFFERS = 2
BUFFER_RANGE = (BUFFERS.low, BUFFERS.high)
KV_TYPE_CHOICES = tuple(KV_TYPES)
HEAD_MODE_CHOICES = HEAD_MODES
POLICY_CHOICES = tuple(CtxPolicy)


class BudgetOrigin(TextEnum):
    """Where the budget came from (Rule 1)."""

    CHOSEN = "chosen"
    """The person set it for this model (remembered with the model)."""
    MACHINE = "machine"
    """This machine's usable RAM: it follows the machine and the host reserve."""
    PROVISIONAL = "provisional"
    """No machine known yet: halfway between the model's thresholds until one answers."""


@dataclass(frozen=True)
class TypedBandwidths:
    """Rule 12: bytes per second the person typed per tier (None: not typed), checked by `ranges.BANDWIDTH`, and the
    GPU backend and compute rates typed beside them (FLOP/s, checked by `ranges.GPU_TFLOPS`/`CPU_GFLOPS`)."""

    ram: int | None = None
    disk: int | None = None
    vram: int | None = None
    backend: Backend | None = None
    gpu_flops: int | None = None
    cpu_flops: int | None = None

    def __post_init__(self) -> None:
        for name in ("ram", "disk", "vram"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, BANDWIDTH.check(value))
        if self.backend is not None and not isinstance(self.backend, Backend):
            raise RequestError(f"the backend must be one of llama.cpp's, got {shown(self.backend)}")
        for name, rate in (("gpu_flops", GPU_TFLOPS), ("cpu_flops", CPU_GFLOPS)):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, rate.check(value))

    def over(self, measured: Bandwidths | None) -> Bandwidths:
        """The figures the estimates read: what was typed, over what was measured (assumed before that)."""
        figures = with_typed(measured or Bandwidths(), self.ram, self.disk, self.vram)
        return with_typed_compute(figures, self.backend, self.gpu_flops, self.cpu_flops)


@dataclass(frozen=True, kw_only=True)
class AppliedGoal:
    """Rule 13, in plain values (the search's own types import this module): made by `goal.applied_goal`."""

    goal: str
    """The goal's name as `tune.Goal` and `gguf-budget tune --goal` spell it."""
    min_tok_s: float
    min_ctx: int
    phrase: str
    """The goal and its floors in words ('longest context at ≥ 20 tok/s')."""
    outcome: str
    """'met: …' with the answer's figure, or 'not met; …' with the binding constraint."""
    settings: ExplorerState
    """The state the answer made (nothing met: the state as it was), its own `goal` None."""


@dataclass(frozen=True, kw_only=True)
class ExplorerState:
    """What the person chose; `derive` turns it into everything the screen shows."""

    model: ModelSpec | None = None
    budget: Budget = Budget()
    budget_origin: BudgetOrigin = BudgetOrigin.CHOSEN
    ctx: int | None = None
    ctx_cap: int | None = None
    prefer: CtxPolicy = CtxPolicy.SPEED
    n_buffers: int = DEFAULT_N_BUFFERS
    head_mode: HeadMode = HeadMode.AUTO
    kv_type: KVType = DEFAULT_KV_TYPE
    force: bool = False
    machine: HardwareSnapshot | None = None
    reserves: Reserves = field(default_factory=Reserves)
    gpu_layers: int | None = None
    tensor_split: tuple[float, ...] | None = None
    bandwidths: Bandwidths = field(default_factory=Bandwidths)
    slow_below_tok_s: float = DEFAULT_SLOW_BELOW_TOK_S
    measured: MeasuredView | None = None
    prompt_tokens: int = DEFAULT_PROMPT_TOKENS
    runtime: Runtime = DEFAULT_RUNTIME
    server: ServerSettings = field(default_factory=ServerSettings)
    engine: EngineOptions = DEFAULT_ENGINE_OPTIONS
    v_type: KVType | None = None
    n_cpu_moe: int | None = None
    asked: tuple[str, ...] = ()
    """The last llama.cpp command asked about, in the answer's words (what it gave, what was not priced)."""
    probed: HardwareSnapshot | None = None
    hypothetical: HardwareSnapshot | None = None
    measured_bandwidths: Bandwidths | None = None
    typed_bandwidths: TypedBandwidths = TypedBandwidths()
    goal: AppliedGoal | None = None

    def __post_init__(self) -> None:
        """Rule 11: the words arrive as text from settings and widgets: each becomes its enum, or a RequestError."""
        for f in fields(self):
            object.__setattr__(self, f.name, check_field(f.name, getattr(self, f.name)))

    @property
    def evidence(self) -> str | None:
        """Rule 6's runtime-evidence claim (None until a real run)."""
        return None if self.measured is None else self.measured.claim

    def request(self) -> BudgetRequest:
        """The planner's request (Rule 1); raises RequestError for knobs out of range."""
        return BudgetRequest(budget=self.budget, ctx=self.ctx,
                             ctx_cap=self.ctx_cap, n_buffers=self.n_buffers, head_mode=self.head_mode,
                             kv_type=self.kv_type, force=self.force, prefer=self.prefer)

    def fit_request(self, ctx: int | None) -> FitRequest:
        """The full load's request at `ctx` (None: the model's context length); RequestError for a bad split."""
        engine = self.engine.settings(self.runtime, EngineSettings(ctx_checkpoints=self.server.ctx_checkpoints))
        return FitRequest(ctx=ctx, gpu_layers=self.gpu_layers, kv_type=self.kv_type, v_type=self.v_type,
                          n_cpu_moe=self.n_cpu_moe, reserves=self.reserves, tensor_split=self.tensor_split, engine=engine,
                          server=self.server, fit=self.engine.fit, fit_ctx=self.engine.fit_ctx,
                          engine_argv=tuple(self.engine.argv()))


def _enum(kind: type[TextEnum], name: str) -> Callable[[object], object]:
    def check(value: object) -> object:
        if not isinstance(value, str) or value not in tuple(kind):
            raise RequestError(f"{name} must be one of {', '.join(tuple(kind))}, got {shown(value)}")
        return kind(value)
    return check


def _kind(kind: type, what: str) -> Callable[[object], object]:
    def check(value: object) -> object:
        if not isinstance(value, kind):
            raise RequestError(f"{what} must be a {kind.__name__}, got {shown(value)}")
        return value
    return check


def _optional(check: Callable[[object], object]) -> Callable[[object], object]:
    return lambda value: None if value is None else check(value)


def _flag(value: object) -> object:
    if not isinstance(value, bool):
        raise RequestError(f"force must be true or false, got {shown(value)}")
    return value


def _slow(value: object) -> object:
    low, high = SLOW_RANGE
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:  # NaN compares false
        raise RequestError(f"the slow threshold must be from {low:g} to {high:,g} tok/s, got {shown(value)}")
    return float(value)


def _split(value: object) -> object:
    if not isinstance(value, tuple) or not 0 < len(value) <= GPU_COUNT.high or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and 0 <= x <= sys.float_info.max for x in value):
        raise RequestError(f"a tensor split is 1 to {GPU_COUNT.high} shares, each 0 or more, got {shown(value)}")
    return tuple(float(x) for x in value)


def _lines(value: object) -> object:
    if not isinstance(value, tuple) or not all(isinstance(x, str) for x in value):
        raise RequestError(f"the asked lines must be text, got {shown(value)}")
    return value


def _measured(value: object) -> object:
    from gguf_budget.core.views.evidence_view import MeasuredView  # only when a run was shown (psutil)
    return _kind(MeasuredView, "a measured run")(value)


_CHECKS: dict[str, Callable[[object], object]] = {
    "model": _optional(_kind(ModelSpec, "a model")),
    "budget": _kind(Budget, "a RAM budget"),
    "budget_origin": _enum(BudgetOrigin, "budget_origin"),
    "ctx": _optional(CONTEXT.check),
    "ctx_cap": _optional(CONTEXT.check),
    "prefer": _enum(CtxPolicy, "prefer"),
    "n_buffers": BUFFERS.check,
    "head_mode": _enum(HeadMode, "head_mode"),
    "kv_type": _enum(KVType, "kv_type"),
    "force": _flag,
    "machine": _optional(_kind(HardwareSnapshot, "a machine")),
    "reserves": _kind(Reserves, "the reserves"),
    "gpu_layers": _optional(LAYERS_ASKED.check),
    "tensor_split": _optional(_split),
    "bandwidths": _kind(Bandwidths, "the bandwidths"),
    "slow_below_tok_s": _slow,
    "measured": _optional(_measured),
    "prompt_tokens": PROMPT_TOKENS.check,
    "runtime": _enum(Runtime, "runtime"),
    "server": _kind(ServerSettings, "the server settings"),
    "engine": _kind(EngineOptions, "the engine options"),
    "v_type": _optional(_enum(KVType, "v_type")),
    "n_cpu_moe": _optional(LAYERS_ASKED.check),
    "asked": _lines,
    "probed": _optional(_kind(HardwareSnapshot, "a probed machine")),
    "hypothetical": _optional(_kind(HardwareSnapshot, "a hypothetical machine")),
    "measured_bandwidths": _optional(_kind(Bandwidths, "the measured bandwidths")),
    "typed_bandwidths": _kind(TypedBandwidths, "the typed bandwidths"),
    "goal": _optional(_kind(AppliedGoal, "an applied goal")),
}


def check_field(name: str, value: Any) -> Any:
    """Rule 11: `value` as the state holds field `name` (text → its enum), or a RequestError in one line."""
    return _CHECKS[name](value)
