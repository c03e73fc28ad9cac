"""Judge a library entry on a machine and a budget: the full load and the budget plan, in brief.

Rule 1: the full load is `fit.ctx.auto_ctx.auto_fit` on the given machine with the library's reserves
        and ctx cap — what `fit` and the window answer: the ctx llama.cpp's default fit would
        choose, GPU layers chosen automatically; the entry keeps its verdict, GPU layers, that ctx
        and the largest ctx that fits with those layers.
Rule 2: the budget plan is planned at the library's budget with the default request (auto ctx);
        the entry keeps its outcome, ctx and pinned layers.
Rule 3: a model whose facts do not allow a plan or a fit keeps the one-line reason instead.
Rule 4: `assessment_key(settings)` names what a verdict was made with (the rules' version, the
        judged settings of Rule 5 and the verdict's fields), so the scan reuses a kept verdict only
        for the same settings and rules. The name is the same in every process: a set (the CPU's
        features) is named sorted, never in the order string hashing gives it, which changes
        from one run to the next (every `gguf-budget library` judged every model again).
Rule 5: a verdict is judged at the precision it is kept at (`judged_settings`): a probed machine's
        moving figures — free host RAM, each GPU's free and used memory — rounded to MEMORY_STEP
        (free down, used up: never more than was free), and the moment it was probed dropped (a
        typed machine's figures do not move: they are judged as typed). A
        machine probed again a minute later, its free RAM moved by a few MiB, keeps every verdict;
        one whose free RAM moved a step judges again. The step is a quarter of llama.cpp's own
        `--fit` margin (1024 MiB a device, `common/common.h` `fit_params_target`): a verdict closer
        to the edge than that is one a free-RAM reading a minute later could flip anyway.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass, replace
from enum import Enum
from typing import Any

from gguf_budget.core.errors import BudgetError
from gguf_budget.core.fit.ctx.auto_ctx import auto_fit, largest_ctx
from gguf_budget.core.fit.types import FitRequest, Reserves
from gguf_budget.core.machine.gpu import GpuInfo
from gguf_budget.core.machine.snapshot import HardwareSnapshot, SnapshotSource
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.plan.search import plan_memory
from gguf_budget.core.plan.types import BudgetRequest


RULES_VERSION = "full load as llama.cpp's default fit (3)"
MEMORY_STEP = 256 << 20
"""Rule 5: the precision of the machine's moving figures a verdict is judged at."""


@dataclass(frozen=True)
class LibrarySettings:
    """What every entry is judged against: a machine, a RAM budget and a ctx cap."""

    machine: HardwareSnapshot
    budget: Budget
    ctx_cap: int | None = None
    reserves: Reserves = Reserves()
    like: FitRequest | None = None
    """llama.cpp's options every model is judged with (engine, cache types, program); None: the defaults."""


@dataclass(frozen=True, kw_only=True)
class Assessment:
    """What the library shows of one model (Rules 1–3)."""

    n_layer: int
    fit_verdict: str | None
    gpu_layers: int | None
    fit_ctx: int | None
    max_ctx: int | None
    plan_outcome: str | None
    plan_ctx: int | None
    pinned: int | None
    error: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "full_load": {"verdict": self.fit_verdict, "gpu_layers": self.gpu_layers, "ctx": self.fit_ctx,
                          "max_ctx": self.max_ctx},
            "budget_plan": {"outcome": self.plan_outcome, "ctx": self.plan_ctx, "pinned": self.pinned,
                            "n_layer": self.n_layer},
            "assessment_error": self.error,
        }


def _down(n: int) -> int:
    return n - n % MEMORY_STEP


def _gpu(gpu: GpuInfo) -> GpuInfo:
    free = None if gpu.free is None else _down(gpu.free)
    used = None if gpu.used is None else gpu.used + (-gpu.used % MEMORY_STEP)
    return replace(gpu, free=free, used=used)


def judged_machine(machine: HardwareSnapshot) -> HardwareSnapshot:
    """Rule 5: the machine as a verdict sees it."""
    if machine.source is not SnapshotSource.PROBE:
        return replace(machine, captured_at=0.0)
    return replace(machine, captured_at=0.0, host_available=_down(machine.host_available),
                   gpus=tuple(_gpu(g) for g in machine.gpus))


def judged_settings(settings: LibrarySettings) -> LibrarySettings:
    """Rule 5: the settings a verdict is judged with."""
    return replace(settings, machine=judged_machine(settings.machine))


def assess(spec: ModelSpec, settings: LibrarySettings) -> Assessment:
    """Rules 1–3 on the judged settings (Rule 5), so a verdict depends on nothing its key does not name."""
    settings = judged_settings(settings)
    try:
        base = FitRequest() if settings.like is None else replace(settings.like, ctx=None, gpu_layers=None)
        choice = auto_fit(spec, settings.machine, replace(base, reserves=settings.reserves), settings.ctx_cap)
        max_ctx = largest_ctx(spec, settings.machine, choice)
        plan = plan_memory(spec, BudgetRequest(budget=settings.budget, ctx_cap=settings.ctx_cap))
    except BudgetError as e:
        return Assessment(n_layer=spec.n_layer, fit_verdict=None, gpu_layers=None, fit_ctx=None, max_ctx=None,
                          plan_outcome=None, plan_ctx=None, pinned=None, error=str(e))
    fit = choice.fit
    return Assessment(n_layer=spec.n_layer, fit_verdict=fit.verdict.value, gpu_layers=fit.gpu_layers,
                      fit_ctx=choice.ctx, max_ctx=max_ctx, plan_outcome=plan.outcome.value, plan_ctx=plan.ctx,
                      pinned=plan.n_pinned, error=None)


def assessment_key(settings: LibrarySettings) -> str:
    """Rule 4."""
    return f"{RULES_VERSION} {[f.name for f in fields(Assessment)]} {_named(judged_settings(settings))}"


def _named(value: object) -> str:
    """Rule 4: `repr`, with every set sorted (and records named field by field, so those within are too)."""
    if is_dataclass(value) and not isinstance(value, type):
        inner = ", ".join(f"{f.name}={_named(getattr(value, f.name))}" for f in fields(value))
        return f"{type(value).__name__}({inner})"
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(sorted(_named(v) for v in value)) + "}"
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_named(v) for v in value) + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(sorted(f"{_named(k)}: {_named(v)}" for k, v in value.items())) + "}"
    if isinstance(value, Enum):
        return f"{type(value).__name__}.{value.name}"
    return repr(value)
