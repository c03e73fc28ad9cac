"""The computing core of GGUF Budget Explorer: no Qt, no I/O beyond GGUF headers and the hardware probe.

Rule 1: importing the package imports nothing but the version: every name below is loaded from
        its module the first time it is asked for (PEP 562 `__getattr__`), so `gguf-budget
        --version` and a command that needs only the planner never pay for the GGUF reader, the
        hardware probe or the remote client. The imports under `TYPE_CHECKING` give type checkers
        the same names.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from gguf_budget.core.version import __version__

if TYPE_CHECKING:
    from gguf_budget.core.errors import BudgetError, GGUFFormatError, ModelLoadError, PlanError, RequestError
    from gguf_budget.core.fit.estimate import estimate_fit
    from gguf_budget.core.fit.types import FitEstimate, FitRequest, Reserves
    from gguf_budget.core.machine.snapshot import GpuInfo, HardwareSnapshot, hypothetical_machine, what_if
    from gguf_budget.core.machine.probe import probe_hardware
    from gguf_budget.core.plan.ledger import LEDGER_LINES, LedgerPrices, MemLedger, missing_facts
    from gguf_budget.core.model.loader import load_model
    from gguf_budget.core.model.spec import GlobalBytes, LayerAttention, ModelSpec, ModelTensor
    from gguf_budget.core.views.fit_report import fit_dict, fit_text, snapshot_dict, snapshot_text
    from gguf_budget.core.views.plan_report import plan_dict, plan_text
    from gguf_budget.core.plan.types import HEAD_MODES, MAX_BUFFERS, BudgetRequest, MemoryPlan
    from gguf_budget.core.plan.search import budget_thresholds, plan_memory
    from gguf_budget.core.plan.sweep import (
        SweepResult, SweepRow, automatic_range, budget_range, sweep_budgets, sweep_dict, sweep_text,
    )

_EXPORTS: dict[str, tuple[str, ...]] = {
    "errors": ("BudgetError", "GGUFFormatError", "ModelLoadError", "PlanError", "RequestError"),
    "fit.estimate": ("estimate_fit",),
    "fit.types": ("FitEstimate", "FitRequest", "Reserves"),
    "machine.snapshot": ("GpuInfo", "HardwareSnapshot", "hypothetical_machine", "what_if"),
    "machine.probe": ("probe_hardware",),
    "plan.ledger": ("LEDGER_LINES", "LedgerPrices", "MemLedger", "missing_facts"),
    "model.loader": ("load_model",),
    "model.spec": ("GlobalBytes", "LayerAttention", "ModelSpec", "ModelTensor"),
    "views.fit_report": ("fit_dict", "fit_text", "snapshot_dict", "snapshot_text"),
    "views.plan_report": ("plan_dict", "plan_text"),
    "plan.types": ("HEAD_MODES", "MAX_BUFFERS", "BudgetRequest", "MemoryPlan"),
    "plan.search": ("budget_thresholds", "plan_memory"),
    "plan.sweep": ("SweepResult", "SweepRow", "automatic_range", "budget_range", "sweep_budgets", "sweep_dict",
                   "sweep_text"),
}
"""Module (under `gguf_budget.core`) → the names the package re-exports from it."""

_HOME = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "BudgetError",
    "GGUFFormatError",
    "GlobalBytes",
    "LayerAttention",
    "ModelLoadError",
    "ModelSpec",
    "ModelTensor",
    "__version__",
    "load_model",
    "BudgetRequest",
    "HEAD_MODES",
    "MAX_BUFFERS",
    "LEDGER_LINES",
    "LedgerPrices",
    "MemLedger",
    "MemoryPlan",
    "PlanError",
    "RequestError",
    "SweepResult",
    "SweepRow",
    "automatic_range",
    "budget_range",
    "budget_thresholds",
    "missing_facts",
    "plan_dict",
    "plan_memory",
    "plan_text",
    "sweep_budgets",
    "sweep_dict",
    "sweep_text",
    "FitEstimate",
    "FitRequest",
    "GpuInfo",
    "HardwareSnapshot",
    "Reserves",
    "estimate_fit",
    "fit_dict",
    "fit_text",
    "hypothetical_machine",
    "probe_hardware",
    "snapshot_dict",
    "snapshot_text",
    "what_if",
]


def __getattr__(name: str) -> Any:
    """Rule 1: import the name's module on first use, and keep the name here for the next time."""
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
