"""What should I run: a goal-driven search over llama.cpp's settings, each candidate priced as the full load.

Rule 1: a candidate is the person's state with some of llama.cpp's options replaced — `-ctk/-ctv` (f16, q8_0; q4_0
        only when `allow_q4_kv`), `-fa` (auto; a quantized V cache needs on; an f16 one tries on where auto is off),
        `-ub` (256, 512, 1024), `--n-cpu-moe` (MoE models: not set, the fewest blocks that put every layer on the
        GPUs at the ctx floor per KV type, aimed and bisected, and a quarter, half, three quarters and all), `--cache-ram`
        (the person's; where llama-server runs and memory is the goal — max-ctx, max-slots, least-memory — also 0), `-ngl` (llama.cpp's own; for `least-memory` on GPUs also
        the fewest layers that still meet the speed floor, bisected), `-np`, `-c` and — when the model's Hub
        repository is known (`views.remote_command.source_repo`: opened from the Hub, or a file of the Hugging
        Face cache) — the quantization, every type of the quant ladder (`quant.ladder.price_types`) but those
        with heavy loss (`quant.ladder.loses_heavily`) unless `allow_heavy_quant`; not when `keep_file_type`
        (the window's goals: another file is the person's to open, from the Quants view, not a knob to set).
Rule 2: every candidate is priced by `full_load` (fit + speed) — the one pricing path `fit` and the window use — and
        is admissible when its verdict is admitted and its decode (`SpeedEstimate.tok_s`, an empty cache) meets the
        floor. The answer's command is that full load's `fit.command` (a priced type's names the type it is).
Rule 3: goals. `max-ctx`: the largest ctx; `max-speed`: the fastest at `min_ctx`; `max-slots`: the most `-np` slots of
        `min_ctx` each (`-c` = slots × min_ctx); `least-memory`: the least memory over every device at `min_ctx`,
        where within MEMORY_STEP (1 %) of the least is a tie (saving less is no saving worth its speed). Ties go
        to the file's own type (nothing to download), then the higher-quality type (more bits per weight), then
        the faster, then the one that keeps the prompt cache (what it saves on a repeated prompt is not priced),
        then the smaller, then the earlier candidate in Rule 1's order (defaults first).
Rule 4: search, not brute force. With the other knobs fixed, admission and decode speed are monotone in ctx (a longer
        cache only adds bytes, and fewer layers then fit), in slots and in `-ngl` (a layer on a GPU is read from
        VRAM), so ctx, slots and the least-memory `-ngl` are bisected: about log2(ceiling / 256) full loads per
        candidate. Not monotone, so enumerated: the KV type (q8_0 shrinks the cache but reads differently), `-ub`
        (compute buffers against prefill), `--n-cpu-moe` (experts in RAM free VRAM for layers, but are read from
        RAM); these are few. `-fa off` where auto is on is dominated, so not priced: the decode estimate does not
        see fused attention, and unfused attention only adds the score matrices to the compute buffers. Where
        memory is the goal the smallest cache and ubatch are priced first, so the bisections after start high.
        `--cache-ram 0` and then the quantization are searched after them, one at a time with the best settings
        so far held (a heuristic: the prompt cache's bytes on the host, and the bits of the weights, rarely change
        which other settings win): fewer bits free memory and read less, but the compute buffers and the repacked
        copies do not follow the bits. The runners-up are the best of what the
        search priced: a knob that cannot reach the best so far is dropped after one load, not bisected for a
        runner-up's figure.
Rule 5: a goal nothing meets names the binding constraint: memory (no candidate fits at the smallest ctx asked; by
        the smallest shortfall over the devices) or speed (the fastest candidate that fits, and how far under the
        floor it is).
Rule 6: what costs quality is never chosen silently: a q4_0 KV cache only when `allow_q4_kv`, a heavy-loss type only
        when `allow_heavy_quant`; the answer's notes say what the chosen q4_0 cache, and a type with fewer bits
        per weight than the file's own, cost.
Rule 7: MoE models on GPUs: once the knobs above are settled, the `-ot` expert placement (`tune_ot`): with the best
        so far's other knobs, ctx and slots (nothing met the goal yet: the defaults at the smallest ctx asked), every
        slot offloaded and the fewest routed experts per GPU on the host that fit — whole blocks of each GPU's own
        run and part of one more — is one more candidate, chosen only where Rule 3 ranks it first: never slower
        than the best `--n-cpu-moe` answer for max-speed. Its ctx and slots are the best so far's, not bisected
        further: its levels are sized for them, so more would need more levels — a search of levels against ctx,
        not monotone together (more levels fit more cache but read slower), which is not made; each `-ot` load
        costs several plain ones. Where it is the only answer, its ctx or slots are bisected as Rule 4's are.
        Its decode reads each moved tensor from RAM (`speed.token_bytes` Rule 10). The person's own `-ot` stays
        under every other candidate.
Rule 8: a candidate pays only for what the search and the answer read — its verdict, devices, command and speed,
        the report's own: it is priced once (the same knobs, ctx and slots asked again are the load priced
        before), without its largest ctx (`full_load` Rule 5) and without the rest of the fit's report
        (`fit.estimate` Rule 14: the automatic GPU layers beside a fixed `-ngl`, the MoE strategies, the peak-RSS
        band), the answer too: the window applies the answer's state and prices that whole itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from math import prod

from gguf_budget.core.errors import RequestError
from gguf_budget.core.explorer.full_load import FullLoad, full_load
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.explorer.tune_goal import Constraints as Constraints, Goal as Goal  # named here too
from gguf_budget.core.explorer.tune_ot import aimed_cpu_moe, fewest_levels, runs_of, spelled
from gguf_budget.core.fit.runtime_memory import flash_attn
from gguf_budget.core.fit.runtime_types import Runtime, TensorOverride
from gguf_budget.core.fit.server.slots import MAX_SLOTS
from gguf_budget.core.model.context import ctx_ceiling
from gguf_budget.core.model.kv import KVType
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.quant.ladder import BPW_DECIMALS, HEAVY_LOSS_BPW, is_own_type, loses_heavily, price_types, shown_bits
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.core.views.quant_report import HEAVY_LOSS_MARK
from gguf_budget.core.views.remote_command import source_repo

CTX_STEP = 256
UBATCHES = (512, 256, 1024)
KV_CHOICES = (KVType.F16, KVType.Q8_0)
MEMORY_STEP = 0.01
_KV_RANK = {KVType.Q4_0: 0, KVType.Q8_0: 1, KVType.F16: 2}
Q4_QUALITY = ("q4_0 KV cache: about a quarter of f16's bytes, at a measurable loss of quality on long contexts "
              "(perplexity rises); chosen only because q4_0 was allowed")


@dataclass(frozen=True, kw_only=True)
class Knobs:
    """One candidate's settings (Rule 1): None is llama.cpp's own choice (`flash_attn`, `gpu_layers`), the person's
    (`cache_ram_mib`) or the file's own type (`quant`)."""

    kv: KVType
    ubatch: int
    n_cpu_moe: int | None
    cache_ram_mib: int | None
    flash_attn: bool | None = None
    gpu_layers: int | None = None
    quant: str | None = None
    overrides: tuple[TensorOverride, ...] = ()
    """Rule 7's `-ot` expert placement (empty: the person's own `-ot`, if any)."""

    def apply(self, state: ExplorerState, ctx: int, slots: int, model: ModelSpec | None = None) -> ExplorerState:
        """The state with these settings at `ctx` and `slots`; `model` is the type `quant` names (None: the state's)."""
        quantized = self.kv is not KVType.F16
        engine = replace(state.engine, ubatch=None if self.ubatch == 512 else self.ubatch,
                         flash_attn=True if quantized else self.flash_attn,
                         overrides=self.overrides or state.engine.overrides)
        cache = self.cache_ram_mib if self.cache_ram_mib is not None else state.server.cache_ram_mib
        server = replace(state.server, n_parallel=slots, cache_ram_mib=cache)
        return replace(state, model=model or state.model, ctx=ctx, gpu_layers=self.gpu_layers, kv_type=self.kv,
                       v_type=None, n_cpu_moe=self.n_cpu_moe, engine=engine, server=server)

    def words(self) -> tuple[str, ...]:
        out = [f"-ctk/-ctv {self.kv.value}", f"-ub {self.ubatch}"]
        out += [f"-fa {'on' if self.flash_attn else 'off'}"] if self.flash_attn is not None else []
        out += [f"-ngl {self.gpu_layers}"] if self.gpu_layers is not None else []
        out += [f"--n-cpu-moe {self.n_cpu_moe}"] if self.n_cpu_moe is not None else []
        out += [f"-ot {','.join(f'{o.pattern}={o.buffer}' for o in self.overrides)}"] if self.overrides else []
        out += [f"--cache-ram {self.cache_ram_mib}"] if self.cache_ram_mib is not None else []
        out += [f"quant {self.quant}"] if self.quant is not None else []
        return tuple(out)


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """A priced candidate: its knobs, ctx, slots, the state priced (every knob set) and its full load."""

    knobs: Knobs
    ctx: int
    slots: int
    load: FullLoad
    state: ExplorerState
    bits: float = 0.0
    """The bits per weight of its type as the ladder shows them (Rule 3's quality tie-break; 0 without a quant search)."""

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
    quants: tuple[str, ...] = ()
    """The types the quant search priced beside the file's own (Rule 1; empty when the repository is unknown)."""

    @property
    def state(self) -> ExplorerState | None:
        """The best candidate's state: every knob set as the answer's command says (None when nothing meets)."""
        return None if self.best is None else self.best.state


@dataclass(frozen=True)
class _Variant:
    """A type the search may choose: its name (None: the file's own), model, token prices and shown bits."""

    name: str | None
    model: ModelSpec
    prices: TokenPrices
    bits: float
    heavy: bool


def _variants(model: ModelSpec, allow_heavy: bool, keep: bool) -> tuple[_Variant, ...]:
    """Rule 1: the file's own type first, then — when its repository is known — every other type of the ladder, most
    bits first, less those with heavy loss unless allowed. Without a quant search every bits figure is 0."""
    own = _Variant(None, model, TokenPrices.of(model), 0.0, False)
    if keep or model.priced_type is not None or source_repo(model.path) is None:
        return (own,)
    priced = price_types(model)
    elements = sum(prod(t.shape) for t in model.tensors)
    out = [replace(own, bits=round(model.tensor_bytes * 8 / elements, BPW_DECIMALS) if elements else 0.0)]
    for mix, variant, prices in zip(priced.mixes, priced.models, priced.prices, strict=True):
        if is_own_type(model, mix):
            out[0] = _Variant(None, model, prices, shown_bits(mix), loses_heavily(mix))
        elif allow_heavy or not loses_heavily(mix):
            out.append(_Variant(mix.file_type.name.value, variant, prices, shown_bits(mix), loses_heavily(mix)))
    return tuple(out)


def _fewest_cpu_moe(p: _Pricer, ctx: int, kv: KVType) -> int | None:
    """Rule 1: the fewest blocks whose experts go to RAM for every repeating layer to reach the GPUs at `ctx` with a
    `kv` cache (-ub 512; the output layer may stay on the host), bisected — more blocks in RAM only free VRAM, so
    "every layer fits" is monotone in N. None when 0 already does, or when all blocks in RAM still leave layers off.
    The bisection is narrowed first by N aimed from the load with every block's experts in RAM
    (`tune_ot.aimed_cpu_moe`) and the N below it, priced: where the aim fits and the N below does not, it is the
    bisection's answer in three loads, not eight (a load short of VRAM costs the automatic GPU layers' whole search,
    so the bisection's steps below N are the costly ones)."""
    blocks = p.model.n_layer

    def knobs(n: int) -> Knobs:
        return Knobs(kv=kv, ubatch=512, n_cpu_moe=n, cache_ram_mib=None)

    def all_on_gpu(n: int) -> bool:
        load = p.price(knobs(n), ctx).load
        return load.fit.verdict.admitted and load.fit.gpu_layers >= blocks

    if not all_on_gpu(blocks):
        return None
    low, high = 0, blocks
    aim = aimed_cpu_moe(p.model, p.price(knobs(blocks), ctx))
    for n in (aim, aim - 1):
        if low < n < high:
            low, high = (low, n) if all_on_gpu(n) else (n, high)
    if low == 0 and all_on_gpu(0):
        return None
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if all_on_gpu(mid) else (mid, high)
    return high


def _kv_types(allow_q4: bool) -> tuple[KVType, ...]:
    return KV_CHOICES + ((KVType.Q4_0,) if allow_q4 else ())


def _knobs(model: ModelSpec, allow_q4: bool, fewest: dict[KVType, int | None], auto_fa: bool) -> Iterator[Knobs]:
    """Rule 1's candidates, defaults first; `fewest` is `_fewest_cpu_moe`'s N per KV type (MoE models), `auto_fa`
    what llama.cpp's `-fa auto` comes to for the state's program (where it is off, an f16 cache also tries on)."""
    blocks = model.n_layer
    grid = {max(1, blocks * q // 4) for q in (1, 2, 3)} | {blocks} if model.is_moe and blocks else set()
    for kv in _kv_types(allow_q4):
        found = fewest.get(kv)
        moes: tuple[int | None, ...] = (None, *sorted(grid | ({found} if found is not None and grid else set())))
        fas: tuple[bool | None, ...] = (None,) if kv is not KVType.F16 or auto_fa else (None, True)
        for fa in fas:
            for ubatch in UBATCHES:
                for moe in moes:
                    yield Knobs(kv=kv, ubatch=ubatch, n_cpu_moe=moe, cache_ram_mib=None, flash_attn=fa)


class _Pricer:
    """Rule 2, counting the full loads priced; a knob's `quant` picks its type among `variants`. A candidate asked
    again (the `--n-cpu-moe` bisection's loads are grid candidates too) is the one priced before (Rule 8)."""

    def __init__(self, model: ModelSpec, state: ExplorerState, floor: float,
                 variants: tuple[_Variant, ...] | None = None) -> None:
        self.model, self.state, self.floor = model, state, floor
        own = _Variant(None, model, TokenPrices.of(model), 0.0, False)
        self.variants = {v.name: v for v in (variants or (own,))}
        self.count = 0
        self.priced: dict[tuple[Knobs, int, int], Candidate] = {}

    def price(self, knobs: Knobs, ctx: int, slots: int = 1) -> Candidate:
        """Rules 2 and 8."""
        key = (knobs, ctx, slots)
        if key not in self.priced:
            self.count += 1
            v = self.variants[knobs.quant]
            state = knobs.apply(self.state, ctx, slots, v.model)
            load = full_load(v.model, state, v.prices, largest=False, report=False)
            assert load is not None  # tune needs a machine
            self.priced[key] = Candidate(knobs=knobs, ctx=ctx, slots=slots, load=load, state=state, bits=v.bits)
        return self.priced[key]

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


def _key(goal: Goal, cand: Candidate, least: int) -> tuple[float, ...]:
    """Rule 3's order: larger is better; `least` is the least memory of the candidates compared."""
    within = cand.memory <= least * (1 + MEMORY_STEP)
    primary = {Goal.MAX_CTX: cand.ctx, Goal.MAX_SPEED: cand.tok_s, Goal.MAX_SLOTS: cand.slots,
               Goal.LEAST_MEMORY: 0 if within else -cand.memory}[goal]
    speed = cand.load.speed
    own = cand.knobs.quant is None
    cached = cand.knobs.cache_ram_mib is None
    return (primary, own, cand.bits, cand.tok_s, 0.0 if speed is None else speed.tok_s_full, cached, -cand.memory)


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


def _likely(goal: Goal, k: Knobs) -> tuple[int, ...]:
    """Rule 4's order of pricing: where memory is the goal (ctx, slots, least memory) the smallest cache and compute
    buffer first, so the bisections of the knobs after it start at a high mark and stop after one or two loads."""
    if goal is Goal.MAX_SPEED:
        return ()
    return (_KV_RANK[k.kv], k.ubatch)


def _fewest_layers(p: _Pricer, best: Candidate) -> Candidate | None:
    """Rule 1's `-ngl` for `least-memory`: the fewest GPU layers with `best`'s other knobs that still fit and meet the
    floor (Rule 4: more layers only read faster and leave the host room, up to the count that fits), bisected;
    None without GPUs or when the count that fits is already the fewest."""
    top = best.load.fit.gpu_layers
    if not p.state.machine or not p.state.machine.gpus or top == 0:
        return None

    def at(g: int) -> Candidate | None:
        cand = p.price(replace(best.knobs, gpu_layers=g), best.ctx, best.slots)
        return cand if p.ok(cand) else None

    low, high, found = -1, top, None
    while high - low > 1:
        mid = (low + high) // 2
        cand = at(mid)
        low, high, found = (low, mid, cand) if cand is not None else (mid, high, found)
    return found


def _expert_placement(p: _Pricer, best: Candidate) -> Candidate | None:
    """Rule 7: `best`'s knobs with the fewest experts on the host per GPU that fit at its ctx and slots, every slot
    offloaded (`tune_ot`), priced; None when that family does not fit or is `best`'s own placement."""
    bare = replace(best.knobs, n_cpu_moe=None, overrides=(), gpu_layers=p.model.n_layer + 1)
    every_expert = p.price(bare, best.ctx, best.slots)  # level 0: every expert on the GPUs
    runs = runs_of(every_expert)

    def at(levels: tuple[int, ...]) -> Candidate:
        n, ots = spelled(runs, levels)
        moved = replace(bare, n_cpu_moe=n, overrides=ots)
        return every_expert if moved == bare else p.price(moved, best.ctx, best.slots)

    found = fewest_levels(p.variants[best.knobs.quant].model, runs, at)
    if found is None or found.knobs == best.knobs or not (found.knobs.overrides or found.knobs.n_cpu_moe):
        return None
    return found


def _quality_notes(best: Candidate, own: _Variant, quant: _Variant | None) -> tuple[str, ...]:
    """Rule 6: what the chosen settings cost in quality, one note each."""
    notes = [Q4_QUALITY] if best.knobs.kv is KVType.Q4_0 else []
    if quant is None:
        return tuple(notes)
    notes.append(f"{quant.name}: priced, not downloaded — the command fetches it from the model's repository")
    if quant.bits < own.bits:
        notes.append(f"{quant.name}: {quant.bits:.2f} bits per weight against the file's {own.bits:.2f} — fewer bits "
                     "cost quality (llama.cpp's perplexity table on Llama-3-8B: Q8_0 +0.003, Q4_K_M +0.18, Q3_K_S "
                     "+1.63)")
    if quant.heavy:
        notes.append(f"{quant.name}: below {HEAVY_LOSS_BPW:g} bits per weight, {HEAVY_LOSS_MARK}; chosen only because "
                     "heavy-loss types were allowed")
    return tuple(notes)


def tune(model: ModelSpec, state: ExplorerState, goal: Goal, constraints: Constraints) -> TuneAnswer:
    """Rules 1–7: the best settings for `goal` on the state's machine, two runners-up, or the binding constraint."""
    if state.machine is None:
        raise RequestError("tune needs a machine (this one, or a hypothetical one)")
    goal = Goal(goal)
    variants = _variants(model, constraints.allow_heavy_quant, constraints.keep_file_type)
    p = _Pricer(model, state, constraints.min_tok_s, variants)
    ceiling = ctx_ceiling(model.context_length, state.ctx_cap)
    floor_ctx = min(constraints.min_ctx, ceiling)
    fewest = ({kv: _fewest_cpu_moe(p, floor_ctx, kv) for kv in _kv_types(constraints.allow_q4_kv)}
              if model.is_moe and model.n_layer else {})
    auto_fa = flash_attn(replace(state.engine, flash_attn=None).settings(state.runtime))
    knobs = list(_knobs(model, constraints.allow_q4_kv, fewest, auto_fa))
    order = {k: i for i, k in enumerate(knobs)}

    found: list[Candidate] = []

    def rank(x: Candidate) -> tuple[float, ...]:
        """Rule 3's order with Rule 1's as the last tie-break (the quant and `-ngl` stages' candidates after)."""
        return (*_key(goal, x, min(f.memory for f in found)), -order.get(x.knobs, len(order)))

    def search(k: Knobs) -> None:
        sofar = max(found, key=rank) if found else None
        cand = _best_for(goal, p, k, constraints, ceiling, sofar)
        found.extend([cand] if cand is not None else [])

    for k in sorted(knobs, key=lambda k: _likely(goal, k)):
        search(k)
    if found and goal is not Goal.MAX_SPEED and state.runtime is Runtime.LLAMA_SERVER:
        search(replace(max(found, key=rank).knobs, cache_ram_mib=0))
    if found:
        held = max(found, key=rank).knobs
        for v in variants[1:]:
            search(replace(held, quant=v.name))
    if constraints.place_experts and model.routed_expert_bytes and state.machine.gpus:
        met = bool(found)
        placed = _expert_placement(p, max(found, key=rank) if met else p.price(knobs[0], floor_ctx))
        if placed is not None and not met:
            search(placed.knobs)  # the only answer: its ctx or slots bisected (Rule 4)
        found.extend([placed] if placed is not None and met and p.ok(placed) else [])
    if found and goal is Goal.LEAST_MEMORY:
        fewer = _fewest_layers(p, max(found, key=rank))
        found.extend([fewer] if fewer is not None else [])
    ranked = _distinct(sorted(found, key=rank, reverse=True))
    quants = tuple(v.name for v in variants[1:] if v.name is not None)
    if not ranked:
        return TuneAnswer(goal=goal, constraints=constraints, best=None, runners_up=(), notes=(), quants=quants,
                          binding=_binding(p, [p.price(k, floor_ctx) for k in knobs], constraints), priced=p.count)
    best = ranked[0]
    ups = tuple(RunnerUp(candidate=x, trades=_trades(best, x)) for x in ranked[1:3])
    chosen = p.variants[best.knobs.quant] if best.knobs.quant is not None else None
    return TuneAnswer(goal=goal, constraints=constraints, best=best, runners_up=ups, binding=None, quants=quants,
                      notes=_quality_notes(best, variants[0], chosen), priced=p.count)
