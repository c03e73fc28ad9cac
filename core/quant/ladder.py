"""The quant ladder: every file type of one model, priced from its tensor directory and judged on one machine.

Nothing is downloaded: each row is the model as llama-quantize would write it (`quant_mix`),
planned and fitted as if it had been opened (`priced_model`).

Rule 1: rows are the file types of `FILE_TYPES` llama.cpp can write for this model —
        MXFP4_MOE only when the model has expert tensors, none whose rows no type divides
        (listed in `skipped` with the reason) — sorted by bits per weight, highest first.
Rule 2: a row's full load is `fit.ctx.auto_ctx.auto_fit` with automatic GPU layers — what `fit` says
        of that file: at the asked ctx, else at the ctx llama.cpp's default fit would choose
        (the trained context, lowered by the cap, shrunk to fit but not below 4096), each row
        stating its ctx; "fully on GPU" is its fits_gpu verdict; "fully in RAM" is the same
        load with no GPU layers admitted by host RAM alone at the asked ctx, else at that floor.
Rule 3: the largest ctx that fits is `largest_fitting_ctx` with the placement chosen again at
        each ctx (automatic GPU layers: the most context this type runs at on the machine,
        not only with the GPU layers of the row's ctx), searched up to the one ctx ceiling
        (`model.context.ctx_ceiling`), or the asked ctx when larger. None when not even 256
        tokens fit or facts are missing. On a machine without GPUs a row whose automatic ctx
        was shrunk to a multiple of 256, or stayed at the ceiling, already has it: the auto
        ctx's search bisected the same verdict (admitted, placed automatically) over the same
        candidates (`auto_ctx` Rules 2–3), so it is not searched again.
Rule 4: best fit = the first row fully on GPU; else the first row fully in RAM; else none.
Rule 5: with a budget request, each row carries its budget plan (`plan_memory`) or the
        planner's one-line refusal.
Rule 6: `QuantLadder.ctx` is the asked ctx every row was judged at, None when each row's is
        llama.cpp's default (Rule 2); the dock's header and the report say which.
Rule 7: a row's decode estimate is its full load's (`fit_speed`, as `fit` and the window's full
        load compute it) and, with a budget, its plan's (`plan_speed`, as `plan` and the window's
        plan compute it, with the machine's available RAM deciding page cache or disk), both
        at the request's bandwidths and prompt length; the token prices are machine-independent
        (`PricedTypes`).
Rule 8: recommended = quality weighed against speed on the best fit's tier (the rows fully on
        GPU, else fully in RAM): walking down from the highest precision, the first type whose
        decode is at most SLOWDOWN_LIMIT× slower than the next smaller type on that tier (the
        next with fewer bits per weight), or the smallest on the tier when every step costs
        more. Slowdown = the ratio of the two rows' decode estimates (seconds per token, as
        `fit_speed` gives them, whatever the bandwidths); when a row has no estimate, the ratio
        of their tensor bytes (what a token reads). Why 1.5: BF16 → Q8_0 halves the bits and
        the estimate puts BF16 at ~1.8× Q8_0's time (the KV cache reads the same at both), a
        step worth taking; every step below 8 bits costs ≤ 1.3× (Q8_0 → Q6_K is 8.5 → 6.6 bits).
Rule 9: below HEAVY_LOSS_BPW (3) bits per weight a type loses quality heavily; such rows, and
        a recommendation among them, say so. llama.cpp's own table (tools/quantize/quantize.cpp,
        `QUANT_OPTIONS`, perplexity added on Llama-3-8B): Q8_0 +0.0026, Q6_K +0.0217, Q4_K_M
        +0.1754, Q3_K_S +1.6321, Q2_K +3.5199 — twenty times Q4_K_M's loss. The flag follows the bits per
        weight as shown (BPW_DECIMALS places), so a row never reads 3.00 flagged or 2.99 unflagged.
Rule 10: the row of the file's own type is the file itself, not its type priced again from shapes (a
        published file's mix may differ from llama-quantize's: Mixtral Q4_K_M by 2 GiB), so its GPU
        layers, --n-cpu-moe and speed are `fit`'s for that file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gguf_budget.core.errors import PlanError, RequestError
from gguf_budget.core.fit.ctx.auto_ctx import AutoFit, FitCtxReason, auto_fit
from gguf_budget.core.fit.estimate import fit_verdict
from gguf_budget.core.fit.ctx.max_ctx import largest_fitting_ctx
from gguf_budget.core.fit.types import FitEstimate, FitRequest, FitVerdict
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.model.context import DEFAULT_CTX, ctx_ceiling
from gguf_budget.core.model.kv import ENGINE_CELL_PAD
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.plan.search import plan_memory
from gguf_budget.core.plan.types import BudgetRequest, MemoryPlan
from gguf_budget.core.errors import QuantMixError
from gguf_budget.core.quant.file_types import FILE_TYPES
from gguf_budget.core.quant.mix import QuantMix, quant_mix
from gguf_budget.core.quant.mix import PreparedModel
from gguf_budget.core.quant.ladder_request import LadderRequest as LadderRequest  # its callers name it here too
from gguf_budget.core.quant.priced import priced_model
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.speed.estimate import SpeedEstimate, fit_speed, plan_speed
from gguf_budget.core.speed.token_bytes import TokenPrices

FULLY_ON_GPU = "fully on GPU"
FULLY_IN_RAM = "fully in RAM"
SLOWDOWN_LIMIT = 1.5
HEAVY_LOSS_BPW = 3.0
BPW_DECIMALS = 2
DECODE_ESTIMATE = "decode estimate"
TENSOR_BYTES = "tensor bytes"


@dataclass(frozen=True, kw_only=True)
class QuantRow:
    """One file type of the model: its price, its full load and, with a budget, its plan; their speed estimates."""

    mix: QuantMix
    model: ModelSpec
    choice: AutoFit
    fits_in_ram: bool
    largest_ctx: int | None
    plan: MemoryPlan | None
    plan_error: str | None
    is_source: bool
    speed: SpeedEstimate | None
    plan_speed: SpeedEstimate | None

    @property
    def name(self) -> str:
        return self.mix.file_type.name.value

    @property
    def fit(self) -> FitEstimate:
        return self.choice.fit

    @property
    def ctx(self) -> int:
        """The ctx this row's full load was judged at (Rule 2)."""
        return self.choice.ctx

    @property
    def fully_on_gpu(self) -> bool:
        return self.fit.verdict == FitVerdict.FITS_GPU

    @property
    def load_rank(self) -> int:
        """The full load's place when rows are sorted by it: 2 for fully on a GPU, 1 more for fitting in RAM."""
        return self.fully_on_gpu * 2 + self.fits_in_ram

    @property
    def bits_per_weight(self) -> float:
        """Rule 9: the bits per weight every screen shows, to BPW_DECIMALS places."""
        return shown_bits(self.mix)

    @property
    def heavy_loss(self) -> bool:
        """Rule 9, on the figure shown: a row reading 3.00 is never flagged, one reading 2.99 always is."""
        return loses_heavily(self.mix)


def shown_bits(mix: QuantMix) -> float:
    """Rule 9: a type's bits per weight as every screen shows them, to BPW_DECIMALS places."""
    return round(mix.bits_per_weight, BPW_DECIMALS)


def loses_heavily(mix: QuantMix) -> bool:
    """Rule 9: the one heavy-loss flag (the ladder's rows, `tune`'s quant choice), on the figure shown."""
    return shown_bits(mix) < HEAVY_LOSS_BPW


@dataclass(frozen=True)
class Step:
    """One step down the recommendation's tier: `name` decodes `slowdown`× slower than `smaller`,
    judged by `basis` (DECODE_ESTIMATE, or TENSOR_BYTES when a row has no estimate)."""

    name: str
    smaller: str
    slowdown: float
    basis: str


@dataclass(frozen=True)
class Recommendation:
    """Rule 8: the type, its tier, the step that admitted it (None: the smallest on the tier) and
    the higher types passed over for costing more than SLOWDOWN_LIMIT."""

    name: str
    tier: str
    step: Step | None
    passed_over: tuple[Step, ...]
    heavy_loss: bool


@dataclass(frozen=True, kw_only=True)
class QuantLadder:
    """Every row, the best fit (Rule 4), the recommended type (Rule 8) and the file types left out with their reasons."""

    source: ModelSpec
    snapshot: HardwareSnapshot
    request: LadderRequest
    ctx: int | None
    rows: tuple[QuantRow, ...]
    best: str | None
    best_reason: str | None
    recommended: Recommendation | None
    skipped: tuple[tuple[str, str], ...]

    def row(self, name: str) -> QuantRow:
        return next(r for r in self.rows if r.name == name)


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
    prices: tuple[TokenPrices, ...]
    skipped: tuple[tuple[str, str], ...]


def is_own_type(model: ModelSpec, mix: QuantMix) -> bool:
    """Rule 10: whether `mix` is the type `model`'s file is written in."""
    return model.file_type == int(mix.file_type.llama_ftype)


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
    models = tuple(model if is_own_type(model, m) else priced_model(model, m) for m in mixes)
    return PricedTypes(model, imatrix, tuple(mixes), models, tuple(TokenPrices.of(m) for m in models),
                       tuple(skipped))


def priced_variant(model: ModelSpec, type_name: str) -> ModelSpec:
    """`model` in the quantization named `type_name` (case as llama.cpp's names, any case accepted), priced, not
    downloaded — the model a double-click on its Quants row plans; RequestError names the types there are."""
    priced = price_types(model)
    for mix, variant in zip(priced.mixes, priced.models, strict=True):
        if mix.file_type.name.value.lower() == type_name.lower():
            return variant
    names = ", ".join(m.file_type.name.value for m in priced.mixes)
    raise RequestError(f"{safe_text(type_name, 40)} is not a quantization this model can be priced in ({names})")


def _plan(model: ModelSpec, budget: BudgetRequest | None) -> tuple[MemoryPlan | None, str | None]:
    if budget is None:
        return None, None
    try:
        return plan_memory(model, budget), None
    except PlanError as e:
        return None, str(e)


def _row(source: ModelSpec, mix: QuantMix, model: ModelSpec, prices: TokenPrices, snapshot: HardwareSnapshot,
         request: LadderRequest) -> QuantRow:
    base = (FitRequest(ctx=request.ctx, kv_type=request.kv_type, reserves=request.reserves, server=request.server)
            if request.like is None else
            replace(request.like, ctx=request.ctx, gpu_layers=None, kv_type=request.kv_type, reserves=request.reserves,
                    server=request.server))
    choice = auto_fit(model, snapshot, base, request.ctx_cap)
    ceiling = ctx_ceiling(source.context_length, request.ctx_cap)
    in_ram_at = request.ctx or min(DEFAULT_CTX, ceiling)
    in_ram = fit_verdict(model, snapshot, replace(base, ctx=in_ram_at, gpu_layers=0)) == FitVerdict.CPU_ONLY
    plan, error = _plan(model, request.budget)
    bandwidths = request.bandwidths
    return QuantRow(
        mix=mix, model=model, choice=choice, fits_in_ram=in_ram,
        largest_ctx=_largest(model, snapshot, base, choice, max(ceiling, request.ctx or 0)),
        plan=plan, plan_error=error, is_source=is_own_type(source, mix),
        speed=fit_speed(prices, choice.fit, bandwidths, request.prompt_tokens),
        plan_speed=None if plan is None else plan_speed(prices, plan, bandwidths, snapshot.host_available,
                                                        request.prompt_tokens),
    )


def _largest(model: ModelSpec, snapshot: HardwareSnapshot, base: FitRequest, choice: AutoFit, cap: int) -> int | None:
    """Rule 3: the largest ctx placed automatically; the auto ctx itself where its search was this one."""
    searched = (choice.reason is FitCtxReason.CEILING
                or choice.reason is FitCtxReason.SHRUNK and choice.ctx % ENGINE_CELL_PAD == 0)
    if searched and not snapshot.gpus and base.ctx is None and choice.ceiling == cap:
        return choice.ctx
    return largest_fitting_ctx(model, snapshot, base, None, cap)


def best_fit(rows: tuple[QuantRow, ...]) -> tuple[str | None, str | None]:
    """Rule 4."""
    for row in rows:
        if row.fully_on_gpu:
            return row.name, FULLY_ON_GPU
    for row in rows:
        if row.fits_in_ram:
            return row.name, FULLY_IN_RAM
    return None, None


def _step(row: QuantRow, smaller: QuantRow) -> Step:
    if row.speed is not None and smaller.speed is not None:
        ratio, basis = row.speed.seconds_per_token / smaller.speed.seconds_per_token, DECODE_ESTIMATE
    else:
        ratio, basis = row.mix.tensor_bytes / smaller.mix.tensor_bytes, TENSOR_BYTES
    return Step(row.name, smaller.name, ratio, basis)


def recommend(rows: tuple[QuantRow, ...], tier: str | None) -> Recommendation | None:
    """Rule 8 on the rows (highest bits per weight first) and the best fit's tier (None: no recommendation)."""
    on_tier = [r for r in rows if (r.fully_on_gpu if tier == FULLY_ON_GPU else r.fits_in_ram)]
    if tier is None or not on_tier:
        return None
    passed: list[Step] = []
    for i, row in enumerate(on_tier[:-1]):
        smaller = next((r for r in on_tier[i + 1:] if r.mix.bits_per_weight < row.mix.bits_per_weight), None)
        step = None if smaller is None else _step(row, smaller)
        if step is None or step.slowdown <= SLOWDOWN_LIMIT:
            return Recommendation(name=row.name, tier=tier, step=step, passed_over=tuple(passed),
                                  heavy_loss=row.heavy_loss)
        passed.append(step)
    last = on_tier[-1]
    return Recommendation(name=last.name, tier=tier, step=None, passed_over=tuple(passed), heavy_loss=last.heavy_loss)


def quant_ladder(model: ModelSpec, snapshot: HardwareSnapshot, request: LadderRequest | None = None,
                 priced: PricedTypes | None = None) -> QuantLadder:
    """Rules 1–9; `priced` (from `price_types`, same model and imatrix) saves pricing again."""
    request = request or LadderRequest()
    if priced is None or priced.source is not model or priced.imatrix != request.imatrix:
        priced = price_types(model, request.imatrix)
    rows = tuple(_row(model, mix, m, prices, snapshot, request)
                 for mix, m, prices in zip(priced.mixes, priced.models, priced.prices, strict=True))
    best, reason = best_fit(rows)
    return QuantLadder(source=model, snapshot=snapshot, request=request, ctx=request.ctx, rows=rows, best=best,
                       best_reason=reason, recommended=recommend(rows, reason), skipped=priced.skipped)


