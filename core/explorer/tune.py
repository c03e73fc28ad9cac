"""What should I run: a goal-driven search over llama.cpp's settings, each candidate priced as the full load.

Rule 1: a candidate is the person's state with some of llama.cpp's options replaced — `-ctk/-ctv` (f16, q8_0; q4_0
        only when `allow_q4_kv`), `-ub` (256, 512, 1024), `--n-cpu-moe` (MoE models: not set, the fewest blocks
        that put every layer on the GPUs at the ctx floor, bisected per KV type, and a quarter, half, three
        quarters and all), `--cache-ram` (the server's default, or 0 for `least-memory`), `-np` and `-c`.
        `-ngl` stays llama.cpp's own choice (auto): at an asked ctx `auto_fit` already gives up layers until the ctx
        fits, so fewer layers are searched by the fit itself, and a fixed lower count never decodes faster.
        `-fa` is left to llama.cpp (auto) for an f16 cache and set on for a quantized V cache, which needs it.
Rule 2: every candidate is priced by `full_load` (fit + speed) — the one pricing path `fit` and the window use — and
        is admissible when its verdict is admitted and its decode (`SpeedEstimate.tok_s`, an empty cache) meets the
        floor. The answer's command is that full load's `fit.command`.
Rule 3: goals. `max-ctx`: the largest ctx; `max-speed`: the fastest at `min_ctx`; `max-slots`: the most `-np` slots of
        `min_ctx` each (`-c` = slots × min_ctx); `least-memory`: the least memory over every device at `min_ctx`.
        Ties go to the faster, then the smaller, then the earlier candidate in Rule 1's order (defaults first).
Rule 4: search, not brute force. With the other knobs fixed, admission and decode speed are monotone in ctx (a longer
        cache only adds bytes, and fewer layers then fit) and in slots, so ctx and slots are bisected: about
        log2(ceiling / 256) full loads per candidate. Not monotone, so enumerated: the KV type (q8_0 shrinks the cache
        but reads differently), `-ub` (compute buffers against prefill), `--n-cpu-moe` (experts in RAM free VRAM for
        layers, but are read from RAM); these are few. The runners-up are the best of what the search priced: a knob
        that cannot reach the best so far is dropped after one load, not bisected for a runner-up's figure.
Rule 5: a goal nothing meets names the binding constraint: memory (no candidate fits at the smallest ctx asked; by
        the smallest shortfall over the devices) or speed (the fastest candidate that fits, and how far under the
        floor it is).
Rule 6: a q4_0 KV cache costs quality: the answer says so, and it is never chosen unless `allow_q4_kv`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from gguf_budget.core.errors import RequestError
from gguf_budget.core.explorer.full_load import FullLoad, full_load
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit.server.slots import MAX_SLOTS
from gguf_budget.core.model.context import DEFAULT_CTX, ctx_ceiling
from gguf_budget.core.model.kv import KVType
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.core.vocab import TextEnum

CTX_STEP = 256
UBATCHES = (512, 256, 1024)
KV_CHOICES = (KVType.F16, KVType.Q8_0)
Q4_QUALITY = ("q4_0 KV cache: about a quarter of f16's bytes, at a measurable loss of quality on long contexts "
              "(perplexity rises); chosen only because q4_0 was allowed")


class Goal(TextEnum):
    """What to optimise (Rule 3)."""

    MAX_CTX = "max-ctx"
    MAX_SPEED = "max-speed"
    MAX_SLOTS = "max-slots"
    LEAST_MEMORY = "least-memory"


@dataclass(frozen=True, kw_only=True)
class Constraints:
    """The floors a goal must meet, and whether q4_0 KV may be chosen (Rule 6)."""

    min_tok_s: float = 0.0
    min_ctx: int = DEFAULT_CTX
    allow_q4_kv: bool = False

    def __post_init__(self) -> None:
        if not 0 <= self.min_tok_s < 1e9 or not 1 <= self.min_ctx < 2**31:
            raise RequestError("--min-tok-s must be from 0 and --min-ctx from 1 to 2^31−1")


@dataclass(frozen=True, kw_only=True)
class Knobs:
    """One candidate's settings (Rule 1)."""

    kv: KVType
    ubatch: int
    n_cpu_moe: int | None
    cache_ram_mib: int | None

    def apply(self, state: ExplorerState, ctx: int, slots: int) -> ExplorerState:
        quantized = self.kv is not KVType.F16
        engine = replace(state.engine, ubatch=None if self.ubatch == 512 else self.ubatch,
                         flash_attn=True if quantized else state.engine.flash_attn)
        server = replace(state.server, n_parallel=slots, cache_ram_mib=self.cache_ram_mib)
        return replace(state, ctx=ctx, gpu_layers=None, kv_type=self.kv, v_type=None, n_cpu_moe=self.n_cpu_moe,
                       engine=engine, server=server)

    def words(self) -> tuple[str, ...]:
        out = [f"-ctk/-ctv {self.kv.value}", f"-ub {self.ubatch}"]
        out += [f"--n-cpu-moe {self.n_cpu_moe}"] if self.n_cpu_moe is not None else []
        out += [f"--cache-ram {self.cache_ram_mib}"] if self.cache_ram_mib is not None else []
        return tuple(out)


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """A priced candidate: its knobs, ctx, slots, the state they make and its full load."""

    knobs: Knobs
    ctx: int
    slots: int
    load: FullLoad
    state: ExplorerState

    @property
    def tok_s(self) -> float:
        return 0.0 if self.load.speed is None else self.load.speed.tok_s

    @property
    def memory(self) -> int:
        """Every device's need together (Rule 3's `least-memory`)."""
        return sum(d.need or 0 for d in self.load.fit.devices)

    @property
    def needs(self) -> tuple[tuple[str, int | None], ...]:
        return tuple((d.name, d.need) for d in self.load.fit.devices)


@dataclass(frozen=True, kw_only=True)
class RunnerUp:
    candidate: Candidate
    trades: str


@dataclass(frozen=True, kw_only=True)
class TuneAnswer:
    """The best candidate (None when nothing meets the goal) with its command, two runners-up, and why not."""

    goal: Goal
    constraints: Constraints
    best: Candidate | None
    runners_up: tuple[RunnerUp, ...]
    binding: str | None
    notes: tuple[str, ...]
    priced: int

    @property
    def state(self) -> ExplorerState | None:
        """The whole state the best candidate was priced as, to apply (None when nothing meets the goal)."""
        return None if self.best is None else self.best.state


def _fewest_cpu_moe(p: _Pricer, ctx: int, kv: KVType) -> int | None:
    """Rule 1: the fewest blocks whose experts go to RAM for every repeating layer to reach the GPUs at `ctx` with a
    `kv` cache (-ub 512; the output layer may stay on the host), bisected — more blocks in RAM only free VRAM, so
    "every layer fits" is monotone in N. None when 0 already does, or when all blocks in RAM still leave layers off."""
    blocks = p.model.n_layer

    def all_on_gpu(n: int) -> bool:
        load = p.price(Knobs(kv=kv, ubatch=512, n_cpu_moe=n, cache_ram_mib=None), ctx).load
        return load.fit.verdict.admitted and load.fit.gpu_layers >= blocks

    if all_on_gpu(0) or not all_on_gpu(blocks):
        return None
    low, high = 0, blocks
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if all_on_gpu(mid) else (mid, high)
    return high


def _kv_types(allow_q4: bool) -> tuple[KVType, ...]:
    return KV_CHOICES + ((KVType.Q4_0,) if allow_q4 else ())


def _knobs(model: ModelSpec, goal: Goal, allow_q4: bool, fewest: dict[KVType, int | None]) -> Iterator[Knobs]:
    """Rule 1's candidates, defaults first; `fewest` is `_fewest_cpu_moe`'s N per KV type (MoE models)."""
    blocks = model.n_layer
    grid = {max(1, blocks * q // 4) for q in (1, 2, 3)} | {blocks} if model.is_moe and blocks else set()
    caches = (None, 0) if goal is Goal.LEAST_MEMORY else (None,)
    for kv in _kv_types(allow_q4):
        found = fewest.get(kv)
        moes: tuple[int | None, ...] = (None, *sorted(grid | ({found} if found is not None and grid else set())))
        for ubatch in UBATCHES:
            for moe in moes:
                for cache in caches:
                    yield Knobs(kv=kv, ubatch=ubatch, n_cpu_moe=moe, cache_ram_mib=cache)


class _Pricer:
    """Rule 2, counting the full loads priced."""

    def __init__(self, model: ModelSpec, state: ExplorerState, floor: float) -> None:
        self.model, self.state, self.floor = model, state, floor
        self.prices = TokenPrices.of(model)
        self.count = 0

    def price(self, knobs: Knobs, ctx: int, slots: int = 1) -> Candidate:
        self.count += 1
        state = knobs.apply(self.state, ctx, slots)
        load = full_load(self.model, state, self.prices)
        assert load is not None  # tune needs a machine
        return Candidate(knobs=knobs, ctx=ctx, slots=slots, load=load, state=state)

    def ok(self, c: Candidate) -> bool:
        return c.load.fit.verdict.admitted and c.load.speed is not None and c.tok_s >= self.floor


def _bisect(low: int, high: int, test: Callable[[int], Candidate | None]) -> Candidate | None:
    """Rule 4: the candidate at the largest n in [low, high] that passes `test` (monotone), None when low fails."""
    best = test(low)
    if best is None or high == low:
        return best
    step = test(low + 1)  # a knob that only ties the best so far stops here, one load later
    if step is None:
        return best
    low, best = low + 1, step
    top = test(high) if high > low else None
    if top is not None:
        return top
    while high - low > 1:
        mid = (low + high) // 2
        found = test(mid)
        low, high, best = (mid, high, found) if found is not None else (low, mid, best)
    return best


def _best_for(goal: Goal, p: _Pricer, knobs: Knobs, c: Constraints, ceiling: int,
              sofar: Candidate | None) -> Candidate | None:
    """The candidate these knobs give for the goal (Rule 3), None when they meet no floor or cannot reach `sofar`'s
    ctx or slots (Rule 4: the bisection starts at the best so far and tries one step more first, so a knob
    that loses or ties costs one or two full loads)."""
    def at_ctx(steps: int) -> Candidate | None:
        cand = p.price(knobs, min(steps * CTX_STEP, ceiling))
        return cand if p.ok(cand) else None

    def at_slots(n: int) -> Candidate | None:
        cand = p.price(knobs, c.min_ctx * n, n)
        return cand if p.ok(cand) else None

    if goal is Goal.MAX_CTX:
        low = max(1, -(-min(c.min_ctx, ceiling) // CTX_STEP), 0 if sofar is None else sofar.ctx // CTX_STEP)
        return _bisect(low, -(-ceiling // CTX_STEP), at_ctx)
    if goal is Goal.MAX_SLOTS:
        return _bisect(1 if sofar is None else sofar.slots, max(1, min(MAX_SLOTS, 2**31 // c.min_ctx - 1)), at_slots)
    cand = p.price(knobs, c.min_ctx)
    return cand if p.ok(cand) else None


def _key(goal: Goal, cand: Candidate) -> tuple[float, ...]:
    """Rule 3's order: larger is better."""
    primary = {Goal.MAX_CTX: cand.ctx, Goal.MAX_SPEED: cand.tok_s, Goal.MAX_SLOTS: cand.slots,
               Goal.LEAST_MEMORY: -cand.memory}[goal]
    speed = cand.load.speed
    return (primary, cand.tok_s, 0.0 if speed is None else speed.tok_s_full, -cand.memory)


def _distinct(ranked: list[Candidate]) -> list[Candidate]:
    """The ranked candidates less those a person could not tell apart from a better one (same ctx, slots, speed to
    0.1 tok/s and memory to 64 MiB): runners-up that trade nothing are not shown."""
    seen: set[tuple[int, int, float, int]] = set()
    out = []
    for cand in ranked:
        mark = (cand.ctx, cand.slots, round(cand.tok_s, 1), cand.memory >> 26)
        if mark not in seen:
            seen.add(mark)
            out.append(cand)
    return out


def _trades(best: Candidate, other: Candidate) -> str:
    """What a runner-up gives and gets against the best, in settings and figures."""
    mine, theirs = dict(w.split(" ", 1) for w in other.knobs.words()), dict(w.split(" ", 1) for w in best.knobs.words())
    changed = [f"{flag} {value}" for flag, value in mine.items() if theirs.get(flag) != value]
    changed += [f"no {flag}" for flag in theirs if flag not in mine]
    figures = []
    for name, have, had in (("ctx", other.ctx, best.ctx), ("slots", other.slots, best.slots)):
        if have != had:
            figures.append(f"{name} {have:,} ({have - had:+,})")
    figures.append(f"{other.tok_s:.1f} tok/s ({other.tok_s - best.tok_s:+.1f})")
    figures.append(f"memory {other.memory / 2**30:.2f} GiB ({(other.memory - best.memory) / 2**30:+.2f})")
    return f"{', '.join(changed) or 'same settings'}: {'; '.join(figures)}"


def _binding(p: _Pricer, cands: list[Candidate], c: Constraints) -> str:
    """Rule 5 over the knobs priced at the smallest ctx asked."""
    fitting = [x for x in cands if x.load.fit.verdict.admitted and x.load.speed is not None]
    if not fitting:
        short = min(cands, key=lambda x: sum(x.load.fit.shortfall.values()))
        worst = ", ".join(f"{n} by {b / 2**30:.2f} GiB" for n, b in short.load.fit.shortfall.items())
        return (f"memory: nothing fits at ctx {short.ctx:,} even with {', '.join(short.knobs.words())}"
                f"{' — short on ' + worst if worst else ''}")
    fast = max(fitting, key=lambda x: x.tok_s)
    return (f"speed: the fastest that fits at ctx {fast.ctx:,} decodes ≈ {fast.tok_s:.2f} tok/s, "
            f"{c.min_tok_s - fast.tok_s:.2f} under the floor of {c.min_tok_s:g} ({', '.join(fast.knobs.words())})")


def tune(model: ModelSpec, state: ExplorerState, goal: Goal, constraints: Constraints) -> TuneAnswer:
    """Rules 1–6: the best settings for `goal` on the state's machine, two runners-up, or the binding constraint."""
    if state.machine is None:
        raise RequestError("tune needs a machine (this one, or a hypothetical one)")
    goal = Goal(goal)
    p = _Pricer(model, state, constraints.min_tok_s)
    ceiling = ctx_ceiling(model.context_length, state.ctx_cap)
    floor_ctx = min(constraints.min_ctx, ceiling)
    fewest = ({kv: _fewest_cpu_moe(p, floor_ctx, kv) for kv in _kv_types(constraints.allow_q4_kv)}
              if model.is_moe and model.n_layer else {})
    knobs = list(_knobs(model, goal, constraints.allow_q4_kv, fewest))
    found: list[Candidate] = []
    for k in knobs:
        sofar = max(found, key=lambda x: _key(goal, x)) if found else None
        cand = _best_for(goal, p, k, constraints, ceiling, sofar)
        found += [cand] if cand is not None else []
    ranked = _distinct(sorted(found, key=lambda x: _key(goal, x), reverse=True))
    if not ranked:
        return TuneAnswer(goal=goal, constraints=constraints, best=None, runners_up=(), notes=(),
                          binding=_binding(p, [p.price(k, floor_ctx) for k in knobs], constraints), priced=p.count)
    best = ranked[0]
    ups = tuple(RunnerUp(candidate=x, trades=_trades(best, x)) for x in ranked[1:3])
    notes = (Q4_QUALITY,) if best.knobs.kv is KVType.Q4_0 else ()
    return TuneAnswer(goal=goal, constraints=constraints, best=best, runners_up=ups, binding=None, notes=notes,
                      priced=p.count)
