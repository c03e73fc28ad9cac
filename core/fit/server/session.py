"""What llama-server holds after each request of a described session: its prompt cache and every slot's checkpoints.

Pure; replays llama.cpp 0c1e570's server (read in `core.llama_cpp.LLAMA_CPP_SOURCE`,
tools/server/server-context.cpp and server-task.cpp) over `session_spec.SessionSpec`.

Rule 1: a request goes to the slot that holds its conversation (`get_available_slot`: a common
        prefix above 10 % of the prompt); else to the least recently used slot, the last of equal
        ones. A slot that holds another conversation is saved to the prompt cache first
        (`prompt_save`), and its tokens and checkpoints are dropped when the new prompt shares no
        prefix with them. After a request starts, every idle slot with tokens is saved too
        (`cache_idle_slots`, on by default); with a unified KV cache it is then cleared.
Rule 2: a cache entry is the slot's tokens as a whole state — the prompt and what was generated but the
        last token sampled, which is never decoded —
        (`checkpoints` Rule 5), plus a copy of the slot's checkpoints, plus the draft's state
        beside the target's (`server_prompt_data::drft`). `server_prompt_cache::alloc` skips an
        entry already held or larger than the limit, drops entries the new one contains, then the
        oldest until it fits; `update` keeps at most n_ctx tokens when there is no byte limit
        (`prompt_cache` Rules 2–3).
Rule 3: a request's checkpoints are made as its tokens are fed from what the slot held
        (`checkpoints` Rules 2, 6 and 7), each of the target's partial state and the draft's.
Rule 4: an image takes the projector's tokens of the slot's context, in its request's first
        message. A request whose prompt and generated tokens exceed the slot's context is
        refused by llama-server (no context shift by default): it changes nothing and is marked.
Rule 5: after each request the server holds its cache entries and every slot's checkpoints;
        the session's peak is the largest such sum. The worst case — every cache and checkpoint
        full — is `server.finish_server`'s, kept beside it.
Rule 6: the replay is kept per model by what it can tell apart: a slot's context at or above the widest request
        (its prompt, images and generated tokens) refuses none, whatever it is; the cache holds one entry a
        conversation (Rule 2), so an n_ctx at or above the sum of each conversation's widest request prunes none;
        and without checkpoints, a cache limit at or above the sum of each conversation's largest entry skips and
        evicts none. Each of those is replayed once, at the smallest such value (so a ctx tick, whose slot context,
        cells and cache limit move with the ctx and the placement, mostly finds its session replayed).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gguf_budget.core.fit.server.checkpoints import (
    CheckpointSettings, checkpoint_bytes, checkpoint_positions, keep_checkpoints, makes_checkpoints, partial_state_bytes,
    seq_state_bytes,
)
from gguf_budget.core.fit.server.draft import DraftModel
from gguf_budget.core.fit.server.prompt_cache import MiB
from gguf_budget.core.fit.server.session_spec import Request, SessionSpec
from gguf_budget.core.fit.server.slots import SlotLayout
from gguf_budget.core.model.kv import KVType
from gguf_budget.core.model.per_model_cache import per_model
from gguf_budget.core.model.spec import ModelSpec

SLOT_SIMILARITY = 0.1  # common/common.h slot_prompt_similarity


@dataclass(frozen=True, kw_only=True)
class SessionModel:
    """What the replay needs beside the model: the draft, the slots, the cache limit, how checkpoints are made."""

    kv_type: KVType
    layout: SlotLayout
    slot_ctx: int
    n_ctx: int
    cache_ram_mib: int
    checkpoints: CheckpointSettings
    draft: DraftModel | None = None
    image_tokens: int = 0


@dataclass(frozen=True, kw_only=True)
class SessionStep:
    """The server after one request (Rule 5)."""

    request: Request
    slot: int
    prompt_tokens: int
    refused: bool
    cache_entries: int
    cache_bytes: int
    checkpoint_count: int
    checkpoint_bytes: int
    largest_prompt: int
    """The most tokens one request has fed so far (its compute graphs' widest ubatch)."""
    largest_tokens: int
    """The most tokens one slot has held so far (the cells its graphs span)."""

    @property
    def held(self) -> int:
        return self.cache_bytes + self.checkpoint_bytes


@dataclass(frozen=True, kw_only=True)
class SessionTrace:
    """Every request's step, in order; the peak is the step that holds the most."""

    spec: SessionSpec
    steps: tuple[SessionStep, ...]
    largest_state: int
    """The whole state of the most tokens one slot held (a cache entry without its checkpoints)."""

    @property
    def peak(self) -> SessionStep:
        return max(self.steps, key=lambda s: s.held)

    @property
    def refused(self) -> int:
        """How many requests exceed a slot's context, so llama-server refuses them."""
        return sum(step.refused for step in self.steps)


@dataclass
class _Slot:
    conversation: int | None = None
    tokens: int = 0
    checkpoints: list[tuple[int, int]] = field(default_factory=list)
    last_used: int = -1


@dataclass
class _Entry:
    conversation: int
    tokens: int
    nbytes: int


class _Server:
    """The replay's mutable state (Rules 1–3)."""

    def __init__(self, model: ModelSpec, m: SessionModel):
        self.model, self.m = model, m
        self.slots = [_Slot() for _ in range(m.layout.n_seq)]
        self.cache: list[_Entry] = []
        self.limit = max(m.cache_ram_mib, 0) * MiB
        self.swa = makes_checkpoints(model, m.checkpoints)
        self.states: dict[int, int] = {}
        self.checkpoints: dict[int, int] = {}

    def state(self, tokens: int) -> int:
        if tokens not in self.states:
            s = self.m
            own = seq_state_bytes(self.model, s.kv_type, tokens, s.layout.streams) or 0
            draft = seq_state_bytes(s.draft.spec, s.draft.kv_type, tokens, s.layout.streams) or 0 if s.draft else 0
            self.states[tokens] = own + draft
        return self.states[tokens]

    def checkpoint(self, tokens: int) -> int:
        if tokens not in self.checkpoints:
            s = self.m
            own = checkpoint_bytes(self.model, s.kv_type, tokens, s.layout.streams) or 0
            draft = partial_state_bytes(s.draft.spec, s.draft.kv_type, tokens, s.layout.streams) or 0 if s.draft else 0
            self.checkpoints[tokens] = own + draft
        return self.checkpoints[tokens]

    def slot_checkpoints(self, slot: _Slot) -> int:
        return sum(self.checkpoint(n) for n, _ in slot.checkpoints)

    def save(self, slot: _Slot) -> None:
        """Rule 2: `prompt_save` → `alloc`, then `update`."""
        if self.m.cache_ram_mib == 0 or not slot.tokens or slot.conversation is None:
            return
        if any(e.conversation == slot.conversation and e.tokens >= slot.tokens for e in self.cache):
            return
        size = self.state(slot.tokens) + self.slot_checkpoints(slot)
        if self.limit and size > self.limit:
            return
        self.cache = [e for e in self.cache if not (e.conversation == slot.conversation and e.tokens <= slot.tokens)]
        while self.limit and self.cache and sum(e.nbytes for e in self.cache) + size > self.limit:
            self.cache.pop(0)
        self.cache.append(_Entry(slot.conversation, slot.tokens, size))
        self.update()

    def update(self) -> None:
        held = sum(e.nbytes for e in self.cache)
        tokens = sum(e.tokens for e in self.cache)
        per_token = max(1.0, held / max(1, tokens))
        limit_tokens = max(self.m.n_ctx, int(self.limit / per_token)) if self.limit else self.m.n_ctx
        while self.cache and sum(e.tokens for e in self.cache) > limit_tokens:
            self.cache.pop(0)

    def pick(self, r: Request, prompt: int) -> int:
        """Rule 1's choice of slot."""
        best, best_sim = None, 0.0
        for i, slot in enumerate(self.slots):
            if slot.conversation == r.conversation and slot.tokens:
                sim = min(slot.tokens, prompt) / prompt
                if sim > best_sim and sim > SLOT_SIMILARITY:
                    best, best_sim = i, sim
        if best is not None:
            return best
        return min(range(len(self.slots)), key=lambda i: (self.slots[i].last_used, -i))

    def run(self, index: int, r: Request) -> tuple[int, int, int]:
        """Rules 1, 3 and 4 for one request: its slot, its prompt tokens, the tokens fed (-1: refused)."""
        prompt = r.prompt + r.images * self.m.image_tokens
        if prompt + r.generated > self.m.slot_ctx:
            return -1, prompt, -1
        i = self.pick(r, prompt)
        slot = self.slots[i]
        if slot.conversation != r.conversation:
            self.save(slot)
            slot.conversation, slot.tokens, slot.checkpoints = r.conversation, 0, []
        held = min(slot.tokens, prompt)
        if self.swa:
            for at in checkpoint_positions(prompt, self.m.checkpoints, held):
                slot.checkpoints = keep_checkpoints(slot.checkpoints, at, index, self.m.checkpoints)
        for j, other in enumerate(self.slots):
            if j != i and other.tokens:
                self.save(other)
                if self.m.layout.unified:
                    other.conversation, other.tokens, other.checkpoints = None, 0, []
        slot.tokens, slot.last_used = prompt + max(r.generated - 1, 0), index
        return i, prompt, prompt - held


def replay(model: ModelSpec, m: SessionModel, spec: SessionSpec) -> SessionTrace:
    """Rules 1–5 over every request of `spec`, kept per model by what the replay can tell apart (Rule 6)."""
    return _replay(model, _told_apart(model, m, spec), spec)


@dataclass(frozen=True)
class _Bounds:
    """Rule 6's bounds for one session: the widest request, the sum of each conversation's widest, and the sum of each
    conversation's largest cache entry (None where checkpoints make entries larger)."""

    widest: int
    cells: int
    entries: int | None


@per_model(maxsize=64)
def _bounds(model: ModelSpec, m: SessionModel, spec: SessionSpec) -> _Bounds | None:
    """Rule 6 for `m` with its slot context, cells and cache limit left out (None: a session of no token, whose largest
    state is the slot context's own)."""
    widest: dict[int, int] = {}
    kept: dict[int, list[int]] = {}
    for r in spec.requests():
        prompt = r.prompt + r.images * m.image_tokens
        widest[r.conversation] = max(widest.get(r.conversation, 0), prompt + r.generated)
        kept.setdefault(r.conversation, []).append(prompt + max(r.generated - 1, 0))
    if not widest or not max(widest.values()):
        return None
    server = _Server(model, m)
    entries = None if server.swa else sum(max(server.state(n) for n in ns) for ns in kept.values())
    return _Bounds(max(widest.values()), sum(widest.values()), entries)


def _told_apart(model: ModelSpec, m: SessionModel, spec: SessionSpec) -> SessionModel:
    """Rule 6: `m` with its slot context, cells and cache limit at the smallest value the replay tells apart from
    theirs."""
    bounds = _bounds(model, replace(m, slot_ctx=0, n_ctx=0, cache_ram_mib=0), spec)
    if bounds is None or m.slot_ctx < bounds.widest:
        return m
    if m.n_ctx < bounds.cells:
        return replace(m, slot_ctx=bounds.widest)
    limit = None if bounds.entries is None or m.cache_ram_mib <= 0 else max(-(-bounds.entries // MiB), 1)
    cache = limit if limit is not None and m.cache_ram_mib >= limit else m.cache_ram_mib
    return replace(m, slot_ctx=bounds.widest, n_ctx=bounds.cells, cache_ram_mib=cache)


@per_model(maxsize=256)
def _replay(model: ModelSpec, m: SessionModel, spec: SessionSpec) -> SessionTrace:
    server = _Server(model, m)
    steps = []
    largest_prompt = largest_tokens = 0
    for index, r in enumerate(spec.requests()):
        slot, prompt, fed = server.run(index, r)
        refused = fed < 0
        if not refused:
            largest_prompt = max(largest_prompt, fed)
            largest_tokens = max(largest_tokens, prompt + r.generated)
        steps.append(SessionStep(
            request=r, slot=slot, prompt_tokens=prompt, refused=refused, cache_entries=len(server.cache),
            cache_bytes=sum(e.nbytes for e in server.cache),
            checkpoint_count=sum(len(s.checkpoints) for s in server.slots),
            checkpoint_bytes=sum(server.slot_checkpoints(s) for s in server.slots),
            largest_prompt=largest_prompt, largest_tokens=largest_tokens))
    return SessionTrace(spec=spec, steps=tuple(steps), largest_state=server.state(largest_tokens or m.slot_ctx))
