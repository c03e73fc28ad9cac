"""The planner's records: what a user asks for (`BudgetRequest`) and what they get (`MemoryPlan`).

Rule 1: a request validates on construction; nonsense raises RequestError with a one-line message.
Rule 2: the budget is a `Budget` (unlimited, or n ≥ 1 bytes); `ctx is None` means the planner picks ctx under
        `ctx_cap` (default: the model's context length) by the request's `prefer` policy
        (`CtxPolicy`, search.py Rule 1); an explicit ctx is honoured or refused.
Rule 3: `n_buffers` is the requested ring depth, 1..MAX_BUFFERS: a deeper prefetch ring only
        costs memory once one layer is in flight while the next is read.
Rule 4: a plan that is not feasible and not forced describes the minimum configuration it
        measured (its ledger is `minimum_ledger`); `weight_ceiling` is None unless feasible
        under a real budget.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.errors import RequestError
from gguf_budget.core.model.kv import DEFAULT_KV_TYPE, KV_TYPES, KVType
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.plan.ledger import MemLedger
from gguf_budget.core.ranges import BUFFERS
from gguf_budget.core.units import INT64_MAX
from gguf_budget.core.vocab import TextEnum


class HeadMode(TextEnum):
    """Where the LM head's table lives: the planner's choice, always resident, or streamed per token."""

    AUTO = "auto"
    RESIDENT = "resident"
    STREAM = "stream"


HEAD_MODES = tuple(HeadMode)


class PlanOutcome(TextEnum):
    """What a plan says at a glance, decided in this order (`MemoryPlan.outcome`)."""

    UNLIMITED = "unlimited"
    """No budget (0): everything resident."""
    OVERRIDDEN = "overridden"
    """Forced: the minimum configuration, over the budget."""
    FEASIBLE = "feasible"
    IMPOSSIBLE = "impossible"
    """Refused: the minimum configuration exceeds the budget."""


# Auto ctx steps in multiples of CTX_STEP (docs/budget-plan.md, "The search"); the speed-first policy holds at
# `model.context.DEFAULT_CTX`.
CTX_STEP = 128
MAX_BUFFERS = BUFFERS.high


class CtxPolicy(TextEnum):
    """How an auto ctx is chosen (docs/budget-plan.md); the value is what JSON and `--prefer` say."""

    SPEED = "speed"  # the default: ctx up to model.context.DEFAULT_CTX, beyond it only while every layer stays pinned
    CONTEXT = "context"  # the contract's ctx-first ranking from the cap


CTX_POLICIES = tuple(CtxPolicy)


class CtxReason(TextEnum):
    """Why the plan's ctx is what it is (the report words it, search.py decides it)."""

    EXPLICIT = "explicit"  # asked for: honoured or refused, never changed
    MINIMUM = "minimum"  # forced or refused: the minimum configuration's ctx
    CAP = "cap"  # the cap itself, not lowered
    LOWERED = "lowered"  # lowered from the search's top to fit the budget
    SPEED_HELD = "speed_held"  # held at DEFAULT_CTX: above it the budget pins layers, not context
    SPEED_GROWN = "speed_grown"  # grown past DEFAULT_CTX while every layer stays pinned


class RingReason(TextEnum):
    """Why the planned ring depth differs from the requested one (or that it does not)."""

    AS_REQUESTED = "as_requested"
    ALL_PINNED = "all_pinned"  # every layer pinned: no ring at all
    ONE_PINS_MORE = "one_pins_more"  # one buffer leaves room for more pinned layers
    REQUESTED_DOES_NOT_FIT = "requested_does_not_fit"  # the requested depth does not fit at this ctx
    MINIMUM = "minimum"  # forced or refused: the minimum configuration's one buffer


@dataclass(frozen=True)
class RingChoice:
    """Ring depth requested vs planned (0 = no ring), and why they differ."""

    requested: int
    planned: int
    reason: RingReason
    extra_pinned: int = 0  # layers one buffer pins beyond the requested depth (ONE_PINS_MORE)


def _check_count(name: str, value: object, low: int, optional: bool = False) -> None:
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= INT64_MAX:
        raise RequestError(f"{name} must be an integer from {low} to 2^63−1, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class BudgetRequest:
    """What the user asked for; the knobs left open (ctx, head in auto) are the planner's to choose."""

    budget: Budget = Budget()
    ctx: int | None = None
    ctx_cap: int | None = None
    n_buffers: int = 2
    head_mode: HeadMode = HeadMode.AUTO
    kv_type: KVType = DEFAULT_KV_TYPE
    force: bool = False
    prefer: CtxPolicy = CtxPolicy.SPEED

    def __post_init__(self) -> None:
        if not isinstance(self.budget, Budget):
            raise RequestError(f"budget must be a Budget, got {self.budget!r}")
        _check_count("ctx", self.ctx, 1, optional=True)
        _check_count("ctx_cap", self.ctx_cap, 1, optional=True)
        if isinstance(self.n_buffers, bool) or not isinstance(self.n_buffers, int) \
                or not 1 <= self.n_buffers <= MAX_BUFFERS:
            raise RequestError(f"n_buffers must be 1 to {MAX_BUFFERS}, got {self.n_buffers!r}")
        if self.head_mode not in HEAD_MODES:
            raise RequestError(f"head_mode must be one of {', '.join(HEAD_MODES)}, got {self.head_mode!r}")
        if self.kv_type not in KV_TYPES:
            raise RequestError(f"kv_type must be one of {', '.join(KV_TYPES)}, got {self.kv_type!r}")
        if not isinstance(self.force, bool):
            raise RequestError(f"force must be True or False, got {self.force!r}")
        if self.prefer not in CTX_POLICIES:
            raise RequestError(f"prefer must be one of {', '.join(CTX_POLICIES)}, got {self.prefer!r}")
        object.__setattr__(self, "head_mode", HeadMode(self.head_mode))
        object.__setattr__(self, "kv_type", KVType(self.kv_type))
        object.__setattr__(self, "prefer", CtxPolicy(self.prefer))

    @property
    def unlimited(self) -> bool:
        return self.budget.is_unlimited


@dataclass(frozen=True, kw_only=True)
class MemoryPlan:
    """The decision and its evidence: the chosen knobs and the ledger (`views.plan_report` words them).

    `ctx_cap` is the ctx the search started from (the explicit ctx when given); `ctx_capped`
    says the plan's ctx is below it. `ctx_start` is where the ctx-first search began lowering:
    the cap, or DEFAULT_CTX under the speed policy when that is lower. `ctx_reason` says why ctx is what it is, under the
    request's `ctx_policy`; `ring` compares the requested ring depth with the planned one.
    `over_budget_by` is how far a forced plan exceeds the budget (0 otherwise).
    """

    feasible: bool
    overridden: bool
    budget: Budget
    ctx: int
    ctx_capped: bool
    ctx_explicit: bool
    ctx_cap: int
    ctx_start: int
    context_length: int | None
    stream_lm_head: bool
    tied_head: bool
    n_buffers: int
    n_pinned: int
    n_layer: int
    kv_type: KVType
    weight_ceiling: int | None
    ledger: MemLedger
    minimum_required: int
    minimum_ledger: MemLedger
    ctx_policy: CtxPolicy
    ctx_reason: CtxReason
    ring: RingChoice

    @property
    def total(self) -> int:
        return self.ledger.total()

    @property
    def next_ctx(self) -> int:
        """The candidate ctx one step above the plan's: the one that would stream a layer when speed first grew
        ctx as far as every layer stays pinned (`CtxReason.SPEED_GROWN`)."""
        return self.ctx + CTX_STEP

    @property
    def ring_buffer(self) -> int:
        """One buffer of the prefetch ring: the ring line shared by its `n_buffers`."""
        return self.ledger.ring // self.n_buffers

    @property
    def unlimited(self) -> bool:
        return self.budget.is_unlimited

    @property
    def headroom(self) -> int | None:
        """Budget − peak (negative when over it); None when unlimited."""
        return None if self.budget.limit is None else self.budget.limit - self.total

    @property
    def over_budget_by(self) -> int:
        return max(-(self.headroom or 0), 0) if self.overridden else 0

    @property
    def impossible(self) -> bool:
        """Refused: the minimum configuration exceeds the budget and nobody forced it."""
        return not (self.feasible or self.overridden)

    @property
    def outcome(self) -> PlanOutcome:
        if self.unlimited:
            return PlanOutcome.UNLIMITED
        if self.overridden:
            return PlanOutcome.OVERRIDDEN
        return PlanOutcome.FEASIBLE if self.feasible else PlanOutcome.IMPOSSIBLE
