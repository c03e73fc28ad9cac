"""The computing core of GGUF Budget Explorer: no Qt, no I/O beyond GGUF headers and the hardware probe."""

from .errors import GGUFFormatError, ModelLoadError
from .fit import estimate_fit, fit_dict, fit_text, snapshot_dict, snapshot_text
from .fit_types import FitEstimate, FitRequest, Reserves
from .hardware import GpuInfo, HardwareSnapshot, hypothetical_machine, what_if
from .hardware_probe import probe_hardware
from .ledger import LEDGER_LINES, LedgerPrices, MemLedger, missing_facts
from .model_loader import load_model
from .model_spec import GlobalBytes, LayerAttention, ModelSpec, ModelTensor
from .plan_report import plan_dict, plan_text
from .plan_types import HEAD_MODES, MAX_BUFFERS, BudgetRequest, MemoryPlan, PlanError
from .planner import budget_thresholds, plan_memory
from .sweep import SweepResult, SweepRow, budget_range, sweep_budgets, sweep_dict, sweep_text
from .version import __version__

__all__ = [
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
    "SweepResult",
    "SweepRow",
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
