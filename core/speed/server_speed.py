"""What llama-server gives: decode with N parallel slots, and the speed-up a draft model brings.

Estimates built on `estimate.SpeedEstimate`, never measurements.

Rule 1: N slots decoding together run one batch of N tokens a step (llama-server batches every
        active slot into one `llama_decode`): the weights are read once, each slot reads its own
        KV, and each extra token adds its compute. A step at the start of the conversations takes
        the one-token decode time + (N − 1) × a prompt token's compute time (the prefill
        estimate's compute seconds per token; 0 when there is no prefill estimate, said as
        memory-bound); each slot decodes 1 / step tokens/s, the server N / step.
Rule 2: a draft model proposes up to `draft_max` tokens a step (llama-server's draft-simple:
        DRAFT_N_MAX = 3, `core.fit.server.draft` Rule 4), the target checks them in one batch of
        draft_max + 1 tokens. With each drafted token accepted with probability a (independent),
        a step yields (1 − a^(draft_max+1)) / (1 − a) tokens (Leviathan et al. 2023, eq. 1) and
        takes draft_max draft tokens + one target batch of draft_max + 1 tokens (Rule 1's step);
        the speed-up is the tokens a step yields × the target's one-token time / the step's time.
        The acceptance rate is typed (`--draft-accept`); DEFAULT_ACCEPTANCE is an assumption
        (a draft of the same family on chat text), and every text says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.errors import RequestError
from gguf_budget.core.fit.server.draft import DRAFT_N_MAX
from gguf_budget.core.fit.server.holdings import HOST
from gguf_budget.core.fit.types import FitEstimate
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.speed.estimate import SpeedEstimate
from gguf_budget.core.speed.token_bytes import TokenBytes, TokenPrices

DEFAULT_ACCEPTANCE = 0.7
ACCEPTANCE_WORDS = "an assumed acceptance rate"


def extra_token_seconds(speed: SpeedEstimate) -> float:
    """Rule 1: what one more token in a decode batch adds: a prompt token's compute time (0 without a prefill)."""
    p = speed.prefill
    return 0.0 if p is None or p.prompt_tokens == 0 else p.compute_seconds / p.prompt_tokens


def batch_seconds(speed: SpeedEstimate, tokens: int) -> float:
    """Rule 1: one decode step of `tokens` tokens at the start of the conversations."""
    return speed.seconds_at(speed.start) + (tokens - 1) * extra_token_seconds(speed)


@dataclass(frozen=True, kw_only=True)
class SlotSpeed:
    """Rule 1 for `slots` slots decoding together."""

    slots: int
    per_slot_tok_s: float
    aggregate_tok_s: float

    @property
    def text(self) -> str:
        return (f"{self.slots} slots decoding together: ≈ {self.per_slot_tok_s:.3g} tok/s each, "
                f"≈ {self.aggregate_tok_s:.3g} tok/s in all (estimate)")


def slot_speed(speed: SpeedEstimate, slots: int) -> SlotSpeed:
    """Rule 1."""
    if slots < 1:
        raise RequestError("parallel slots (-np) must be 1 or more")
    step = batch_seconds(speed, slots)
    return SlotSpeed(slots=slots, per_slot_tok_s=1 / step, aggregate_tok_s=slots / step)


@dataclass(frozen=True, kw_only=True)
class DraftSpeedup:
    """Rule 2: the expected speed-up at `acceptance`, and the decode it gives."""

    acceptance: float
    assumed: bool
    draft_max: int
    tokens_per_step: float
    speedup: float
    tok_s: float

    @property
    def text(self) -> str:
        said = f"{ACCEPTANCE_WORDS} of {self.acceptance:.0%}" if self.assumed else f"an acceptance rate of {self.acceptance:.0%}"
        return (f"with the draft: ≈ {self.tok_s:.3g} tok/s, {self.speedup:.2f}× ({self.tokens_per_step:.2f} tokens a "
                f"step of up to {self.draft_max} drafted, at {said}; estimate)")


def draft_speedup(target: SpeedEstimate, draft_seconds: float, acceptance: float | None = None,
                  draft_max: int = DRAFT_N_MAX) -> DraftSpeedup:
    """Rule 2; `draft_seconds` is one draft token's decode time, `acceptance` None takes DEFAULT_ACCEPTANCE."""
    a = DEFAULT_ACCEPTANCE if acceptance is None else acceptance
    if not 0 <= a < 1:
        raise RequestError(f"a draft acceptance rate must be from 0 up to (not including) 1, got {a!r}")
    tokens = (1 - a ** (draft_max + 1)) / (1 - a)
    step = draft_max * draft_seconds + batch_seconds(target, draft_max + 1)
    single = target.seconds_at(target.start)
    return DraftSpeedup(acceptance=a, assumed=acceptance is None, draft_max=draft_max, tokens_per_step=tokens,
                        speedup=tokens * single / step, tok_s=tokens / step)


def draft_token_seconds(target: SpeedEstimate, draft: ModelSpec, gpu_weights: int, all_weights: int) -> float:
    """One draft token on the target's machine: what it reads (`TokenPrices.read_per_token`, an empty cache), split
    between the host and the GPUs as its weights are (`DraftLoad.weights`), at the target's figures (Rule 2)."""
    read = TokenPrices.of(draft).read_per_token(0)
    vram = read * gpu_weights // all_weights if all_weights and target.vram is not None and target.gpu is not None else 0
    return target.seconds_at(TokenBytes(ram=read - vram, stream=0, vram=vram))


@dataclass(frozen=True, kw_only=True)
class ServerSpeed:
    """Rules 1–2 for a fit's llama-server settings: slots when more than one, the draft when there is one."""

    slots: SlotSpeed | None
    draft: DraftSpeedup | None

    @property
    def lines(self) -> list[str]:
        return [s.text for s in (self.slots, self.draft) if s is not None]


def server_speed(speed: SpeedEstimate | None, fit: FitEstimate, acceptance: float | None = None) -> ServerSpeed | None:
    """Rules 1–2 for the fit's slots and draft; None without a speed estimate or anything to say."""
    load = fit.server
    if speed is None or load is None:
        return None
    n = load.layout.n_seq
    slots = slot_speed(speed, n) if n > 1 else None
    draft_model = fit.request.server.draft
    draft = None
    if draft_model is not None and load.draft is not None:
        weights = dict(load.draft.weights)
        total = sum(weights.values())
        on_gpus = total - weights.get(HOST, 0)
        draft = draft_speedup(speed, draft_token_seconds(speed, draft_model.spec, on_gpus, total), acceptance)
    return None if slots is None and draft is None else ServerSpeed(slots=slots, draft=draft)


def server_speed_dict(served: ServerSpeed | None) -> dict[str, object] | None:
    """`fit --json`'s `server_tok_s_estimate`: the slots' and the draft's figures (None: nothing to say)."""
    if served is None:
        return None
    slots, draft = served.slots, served.draft
    return {
        "slots": None if slots is None else {"slots": slots.slots, "per_slot_tok_s": slots.per_slot_tok_s,
                                             "aggregate_tok_s": slots.aggregate_tok_s},
        "draft": None if draft is None else {"acceptance": draft.acceptance, "acceptance_assumed": draft.assumed,
                                             "draft_max": draft.draft_max, "tokens_per_step": draft.tokens_per_step,
                                             "speedup": draft.speedup, "tok_s": draft.tok_s},
        "kind": "estimate",
    }
