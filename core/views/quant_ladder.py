"""The quant ladder: every file type of one model, priced from its tensor directory and judged on one machine.

Nothing is downloaded: each row is the model as llama-quantize would write it (`quant_mix`),
planned and fitted as if it had been opened (`priced_model`).

Rule 1: rows are the file types of `FILE_TYPES` llama.cpp can write for this model —
        MXFP4_MOE only when the model has expert tensors, none whose rows no type divides
        (listed in `skipped` with the reason) — sorted by bits per weight, highest first.
Rule 2: a row's full load is `estimate_fit` at the ladder's ctx with automatic GPU layers;
        "fully on GPU" is its fits_gpu verdict; "fully in RAM" is the same load with no GPU
        layers admitted by host RAM alone.
Rule 3: the largest ctx that fits is the largest ctx, up to the trained context (or the
        ladder's ctx when the file gives none), whose full load is admitted — bisected over
        256-cell steps, as the need only grows with ctx. None when not even the first step
        fits or facts are missing.
Rule 4: best fit = the first row fully on GPU; else the first row fully in RAM; else none.
Rule 5: with a budget request, each row carries its budget plan (`plan_memory`) or the
        planner's one-line refusal.
Rule 6: the ctx defaults to 4096 tokens — the seed's default cap, below which llama.cpp's
        `--fit` never shrinks context (`fit_params_min_ctx`) — or the trained context if shorter.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gguf_budget.core.errors import PlanError, RequestError
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.types import FitEstimate, FitRequest, FitVerdict, Reserves
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.model.kv import DEFAULT_KV_TYPE, ENGINE_CELL_PAD, KVType
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.plan.search import plan_memory
from gguf_budget.core.plan.types import BudgetRequest, MemoryPlan
from gguf_budget.core.quant import FILE_TYPES, QuantMix, QuantMixError, quant_mix
from gguf_budget.core.quant.mix import PreparedModel
from gguf_budget.core.quant.priced import priced_model

DEFAULT_LADDER_CTX = 4096
FULLY_ON_GPU = "fully on GPU"
FULLY_IN_RAM = "fully in RAM"


@dataclass(frozen=True)
class LadderRequest:
    """ctx None = Rule 6; budget None = no budget plans."""

    ctx: int | None = None
    kv_type: KVType = DEFAULT_KV_TYPE
    reserves: Reserves = field(default_factory=Reserves)
    budget: BudgetRequest | None = None
    imatrix: bool = True

    def __post_init__(self) -> None:
        if self.ctx is not None and self.ctx < 1:
            raise RequestError("context must be at least 1 token")


@dataclass(frozen=True)
class QuantRow:
    """One file type of the model: its price, its full load and, with a budget, its plan."""

    mix: QuantMix
    model: ModelSpec
    fit: FitEstimate
    fits_in_ram: bool
    largest_ctx: int | None
    plan: MemoryPlan | None
    plan_error: str | None
    is_source: bool

    @property
    def name(self) -> str:
        return self.mix.file_type.name.value

    @property
    def fully_on_gpu(self) -> bool:
        return self.fit.verdict == FitVerdict.FITS_GPU


@dataclass(frozen=True)
class QuantLadder:
    """Every row, the best fit (Rule 4) and the file types left out with their reasons."""

    source: ModelSpec
    snapshot: HardwareSnapshot
    request: LadderRequest
    ctx: int
    rows: tuple[QuantRow, ...]
    best: str | None
    best_reason: str | None
    skipped: tuple[tuple[str, str], ...]

    def row(self, name: str) -> QuantRow:
        return next(r for r in self.rows if r.name == name)


def ladder_ctx(model: ModelSpec, request: LadderRequest) -> int:
    """Rule 6."""
    if request.ctx is not None:
        return request.ctx
    return min(DEFAULT_LADDER_CTX, model.context_length or DEFAULT_LADDER_CTX)


def _has_experts(model: ModelSpec) -> bool:
    return any(len(t.shape) > 2 and t.shape[2] > 1 for t in model.tensors)


@dataclass(frozen=True)
class PricedTypes:
    """Rule 1 for one model: every file type it can be written as, priced (machine-independent,
    so a window keeps it while the machine or ctx change), and the ones left out."""

    source: ModelSpec
    imatrix: bool
    mixes: tuple[QuantMix, ...]
    models: tuple[ModelSpec, ...]
    skipped: tuple[tuple[str, str], ...]


def price_types(model: ModelSpec, imatrix: bool = True) -> PricedTypes:
    """Rule 1."""
    prepared = PreparedModel.of(model)
    mixes, skipped = [], []
    for ftype in FILE_TYPES:
        if ftype.moe_only and not _has_experts(model):
            skipped.append((ftype.name.value, "the model has no expert tensors (llama.cpp would write Q8_0 throughout)"))
            continue
        try:
            mixes.append(quant_mix(prepared, ftype, imatrix))
        except QuantMixError as e:
            skipped.append((ftype.name.value, str(e)))
    mixes.sort(key=lambda m: -m.bits_per_weight)
    return PricedTypes(model, imatrix, tuple(mixes), tuple(priced_model(model, m) for m in mixes), tuple(skipped))


def _admitted(model: ModelSpec, snapshot: HardwareSnapshot, request: FitRequest) -> bool:
    return estimate_fit(model, snapshot, request).verdict.admitted


def largest_ctx(model: ModelSpec, snapshot: HardwareSnapshot, base: FitRequest, top: int) -> int | None:
    """Rule 3, bisected over llama.cpp's 256-cell steps (`ENGINE_CELL_PAD`: any ctx in a step costs the
    same cells) and `top` itself."""
    steps: list[int] = [*range(ENGINE_CELL_PAD, top, ENGINE_CELL_PAD), top]

    def fits(i: int) -> bool:
        return _admitted(model, snapshot, FitRequest(steps[i], None, base.kv_type, base.reserves))

    if not fits(0):
        return None
    low, high = 0, len(steps) - 1
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if fits(mid) else (low, mid - 1)
    return steps[low]


def _plan(model: ModelSpec, budget: BudgetRequest | None) -> tuple[MemoryPlan | None, str | None]:
    if budget is None:
        return None, None
    try:
        return plan_memory(model, budget), None
    except PlanError as e:
        return None, str(e)


def _row(source: ModelSpec, mix: QuantMix, model: ModelSpec, snapshot: HardwareSnapshot, request: LadderRequest,
         ctx: int) -> QuantRow:
    base = FitRequest(ctx, None, request.kv_type, request.reserves)
    in_ram = estimate_fit(model, snapshot, FitRequest(ctx, 0, request.kv_type, request.reserves)).verdict == FitVerdict.CPU_ONLY
    plan, error = _plan(model, request.budget)
    return QuantRow(
        mix=mix, model=model, fit=estimate_fit(model, snapshot, base), fits_in_ram=in_ram,
        largest_ctx=largest_ctx(model, snapshot, base, max(source.context_length or ctx, ctx)),
        plan=plan, plan_error=error, is_source=source.file_type == int(mix.file_type.llama_ftype),
    )


def best_fit(rows: tuple[QuantRow, ...]) -> tuple[str | None, str | None]:
    """Rule 4."""
    for row in rows:
        if row.fully_on_gpu:
            return row.name, FULLY_ON_GPU
    for row in rows:
        if row.fits_in_ram:
            return row.name, FULLY_IN_RAM
    return None, None


def quant_ladder(model: ModelSpec, snapshot: HardwareSnapshot, request: LadderRequest | None = None,
                 priced: PricedTypes | None = None) -> QuantLadder:
    """Rules 1–6; `priced` (from `price_types`, same model and imatrix) saves pricing again."""
    request = request or LadderRequest()
    if priced is None or priced.source is not model or priced.imatrix != request.imatrix:
        priced = price_types(model, request.imatrix)
    ctx = ladder_ctx(model, request)
    rows = tuple(_row(model, mix, m, snapshot, request, ctx) for mix, m in zip(priced.mixes, priced.models, strict=True))
    best, reason = best_fit(rows)
    return QuantLadder(model, snapshot, request, ctx, rows, best, reason, priced.skipped)


