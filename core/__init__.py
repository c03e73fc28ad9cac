"""The computing core of GGUF Budget Explorer: no Qt, no I/O beyond GGUF headers and the hardware probe."""

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
from gguf_budget.core.version import __version__

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
