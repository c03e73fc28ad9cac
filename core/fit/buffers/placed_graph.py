"""Each device's compute buffer for one placement: the scheduler replayed once per distinct graph.

Pure. The replay (`sched` over `compute_graph`'s nodes) is the costly part of pricing a placement, and the
searches price many: the automatic GPU layers, ctx and `--n-cpu-moe`, the largest ctx, the cheapest fix.

Rule 1: the replay reads a block only through the blocks `compute_graph.replayed` keeps (Rule 5 there: per run of
        blocks placed alike, its first two and its last), and reads each kept block only through its shape, where
        its weights and its KV cache live (`Scheduler.slot_device`, `kv_device`), its tensors' names and sizes
        within the block, and whether it is the model's last. Its index names its weights and nothing else. So
        two placements whose kept blocks agree on all of that, in order, with the same scheduler otherwise and
        the same graph settings, reserve the same buffers (`GraphKey`): `-ngl 20` and `-ngl 24` of a model whose
        blocks are alike, where each run keeps three blocks either way.
Rule 2: a weight's device is its block's, except where an `-ot` pattern (`--n-cpu-moe` among them) matches its
        name: with overrides the key holds the device of every weight a kept block's nodes may read
        (`compute_graph.BLOCK_WEIGHTS`) and of those outside the blocks, so `--n-cpu-moe 10` and `12` share a replay
        where their kept blocks keep their experts alike. A repacked weight (`sched` Rule 3) is known by its name
        alone: with repacked weights the key holds each kept block's index, and no two placements share a replay.
Rule 3: the replays are kept per model (`per_model`), the newest KEPT signatures: a search's steps and the
        next tick's share them; the exact placement's answer is kept by its caller as before.
Rule 4: the key's blocks are a function of the scheduler alone (the graph settings — ctx, ubatch, cache type — do
        not enter them), and finding them asks every weight's device: kept per model and scheduler too, so the
        placements a search prices at many ctxs (the automatic GPU layers, `tune`'s bisections) find them once.
Rule 5: the full cache's cells do not enter the key either: a replay runs with them as a parameter (`affine`) and
        answers with a `Span`, the cells over which every decision of the allocator and the scheduler holds and each
        buffer there as the highest of a few affine functions of the cells — exact, byte for byte, not an estimate
        (`affine` Rules 3–5). An ask inside a kept span is answered from it, with no graph built: a 70B dragged over
        50 ctxs on a 24 GiB GPU asks 136 graphs and replays 24. The sliding-window cache's cells stay in the key
        (they stop growing at the window). Each placement keeps its newest `SPANS` spans (more than cover the
        70B's whole slider: Rule 6).
Rule 6: one allocator and scheduler, written over ints (an `Affine` is an int; a size that does not move stays a
        plain one), replay a graph either way: with the cells a parameter, or over plain ints, a span of the asked
        cells alone. The parametric replay costs more (a 70B's placements ~3.0 ms against ~2.0 ms over plain
        ints, Mixtral-8x22B's on 4 GPUs ~2.5×: more tensors that move, copied to more devices), and a placement
        asked at one ctx only (`tune`'s and the fit's searches over placements at the asked ctx) never repays it.
        So a placement's first ask replays over plain ints, and an ask of it at other cells than its spans hold
        replays with the cells a parameter (Rule 7): a ctx drag pays one plain replay more per placement, a search
        at one ctx nothing. Spans are widest where the cache's tensors dwarf the rest and narrowest at small ctx, where the
        best fit among freed blocks of fixed and growing sizes changes every few hundred cells: the 70B's slider
        (512 … 131,072 cells, one 24 GiB GPU, -ngl 0-40) is covered by 24-28 spans with flash attention, 16-20
        without, the last from ~37k cells on; with every layer offloaded by 4.
Rule 7: the graph and its split do not change with the cells: the builder's sizes move with them but nothing it or
        the scheduler decides reads them, but for a tensor-size limit (`sched` Rule 8), whose comparisons narrow the
        cells the split holds for like any other (`affine` Rule 3). So a placement's split graph is built once with
        the cells a parameter (`SplitGraph`: its nodes, the sizes that move as lines) and kept beside its spans; an
        ask its spans miss replays the allocator alone over it, with the moving sizes at the asked cells as
        parameters from there — the same allocator over the same nodes and sizes as a whole replay, so the same
        answer. On the 70B (one 24 GiB GPU, 151 nodes, 214 split) a whole replay is ~1.0 ms of graph, ~1.9 ms of
        split and ~0.6 ms of allocator; the allocator with the cells a parameter ~2.1–2.5 ms, 20 sizes moving.
Rule 8: a span repays its dearer allocator only where later asks land in it. Where the placement's span nearest
        the asked cells (of those holding more than their own cells) is narrower than `WIDE` steps, as at small ctx
        (Rule 6), the allocator replays over plain ints at the asked cells. Over a 70B drag (50 new ctxs, one 24 GiB
        GPU) a tick's CPU p95 fell from 7.1–7.5 to 6.4–6.6 ms (WIDE 4: 7.5–7.7, 32: 6.3–6.6, 128: 6.6–6.8). The
        nearest span is one whose cells end within `WIDE` of its steps of the asked cells; else the nearest below
        them, unless the asked cells are `FAR` times its own or more (spans widen as the cache's tensors outgrow the
        rest: the allocator then takes the cells a parameter); else the nearest above. The placements of one key share
        its spans (Rule 1), and with the nearest span taken anywhere, one narrow span at ~4k cells said the 70B's wide
        spans at 90k were narrow: drag70's 49 new ctxs replayed the allocator 57 times (55 over plain ints), now 16
        (11), none past ~27k cells, and no tick replays it more often than before.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gguf_budget.core.fit.buffers.affine import Affine, Domain, cells_of, grid, lines_of
from gguf_budget.core.fit.buffers.compute_graph import (
    BLOCK_WEIGHTS, GLOBAL_WEIGHTS, BlockShape, GraphSettings, block_shapes, compute_nodes, layer_tensors, replayed,
)
from gguf_budget.core.fit.buffers.graph_alloc import Node, buffer_sizes
from gguf_budget.core.fit.buffers.sched import Scheduler, compute_buffers, split_graph
from gguf_budget.core.model.per_model_cache import per_model
from gguf_budget.core.model.spec import ModelSpec

KEPT = 1024
SPANS = 64
WIDE = 16
FAR = 4
"""Rule 8: how far above a narrow span its narrowness stops telling."""

KeptBlock = tuple[int | None, bool, BlockShape, int, int, tuple[tuple[str, int], ...], tuple[int, ...]]
"""Rules 1–2 for one kept block: (its index where Rule 2 needs it, last, shape, its slot's device, its KV's device,
its tensors, its weights' devices where `-ot` moves them)."""


@dataclass(frozen=True, eq=False)
class GraphKey:
    """Rules 1 and 5: what the buffers of one placement's graph depend on but the full cache's cells; equal keys, the
    same buffers as functions of the cells. It carries the placement it was made from (its cells among its
    `settings`), for the replay a first ask makes, but compares by `signature` alone."""

    signature: tuple[object, ...]
    settings: GraphSettings
    sched: Scheduler
    blocks: tuple[tuple[int, BlockShape], ...]

    def __hash__(self) -> int:
        return hash(self.signature)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GraphKey) and other.signature == self.signature


def graph_key(model: ModelSpec, settings: GraphSettings, sched: Scheduler) -> GraphKey:
    """Rules 1–2 and 5: the blocks the replay keeps for this placement, and its signature."""
    blocks, scheduler, kept = _placed(model, sched)
    return GraphKey(signature=(replace(settings, full_cells=0), scheduler, kept), settings=settings, sched=sched,
                    blocks=blocks)


@per_model(maxsize=KEPT)
def _placed(model: ModelSpec, sched: Scheduler) -> tuple[tuple[tuple[int, BlockShape], ...], tuple[object, ...],
                                                          tuple[KeptBlock, ...]]:
    """Rule 4: the kept blocks, the scheduler's part of the signature and the kept blocks' part of it."""
    tensors = layer_tensors(model)
    keys = tuple(sched.block_key(il, tuple(n for n, _ in tensors[il]) if sched.overrides else ())
                 + (sched.slot_device[il],) for il in range(model.n_layer))
    blocks = tuple(replayed(block_shapes(model), keys))
    last = model.n_layer - 1
    kept: tuple[KeptBlock, ...] = tuple(
        (il if sched.repacked else None, il == last, shape, sched.slot_device[il], sched.kv_device[il],
         tuple((name.split(".", 2)[-1], size) for name, size in tensors[il]),
         tuple(sched.weight_device(f"blk.{il}.{w}.weight") for w in BLOCK_WEIGHTS) if sched.overrides else ())
        for il, shape in blocks)
    scheduler = (sched.alignments, sched.offload, sched.copies, sched.kv_on_cpu, sched.matmul_only, sched.max_tensor,
                 sched.pin_norms, sched.repacked, sched.slot_device[-1],
                 tuple(sched.weight_device(name) for name in GLOBAL_WEIGHTS))
    return blocks, scheduler, kept


@dataclass(frozen=True, kw_only=True)
class Span:
    """Rule 5: one replay's answer: the cells it holds for (from `lo` to `hi`, every `step`-th from `at`, the cells it
    was asked at) and each backend's buffer there: the highest of its lines, (bytes at `at`, bytes more per step)."""

    at: int
    step: int
    lo: int
    hi: int
    buffers: tuple[tuple[tuple[int, int], ...], ...]

    def holds(self, cells: int) -> bool:
        return self.lo <= cells <= self.hi and (cells - self.at) % self.step == 0

    def buffers_at(self, cells: int) -> tuple[int, ...]:
        steps = (cells - self.at) // self.step
        return tuple(max(at + per * steps for at, per in lines) for lines in self.buffers)


@dataclass(frozen=True, kw_only=True)
class SplitGraph:
    """Rule 7: one placement's graph as the scheduler splits it, built with the cells a parameter: its nodes (a size
    that moves with the cells is an `Affine` from `at`), the sizes that move, (name, bytes at `at`, bytes more per
    step), and the cells over which the graph and its split hold (from `lo` to `hi`, every `step`-th from `at`)."""

    at: int
    step: int
    lo: int
    hi: int
    nodes: tuple[Node, ...]
    moving: tuple[tuple[str, int, int], ...]

    def holds(self, cells: int) -> bool:
        return self.lo <= cells <= self.hi and (cells - self.at) % self.step == 0

    def span_at(self, cells: int, alignments: tuple[int, ...], parametric: bool = True) -> Span:
        """Rule 7: the allocator replayed over this graph at `cells` (inside it), the cells a parameter from there
        (else the moving sizes at `cells`, plain ints: a span of `cells` alone, Rule 8)."""
        steps = (cells - self.at) // self.step
        if not parametric:
            sizes = {name: at + per * steps for name, at, per in self.moving}
            buffers = buffer_sizes(self.nodes, alignments, sizes)
            return Span(at=cells, step=self.step, lo=cells, hi=cells, buffers=tuple(((b, 0),) for b in buffers))
        domain = Domain()
        domain.lo, domain.hi = (self.lo - cells) // self.step, (self.hi - cells) // self.step
        resized = {name: Affine(at + per * steps, per, domain) for name, at, per in self.moving}
        buffers = buffer_sizes(self.nodes, alignments, resized)
        return Span(at=cells, step=self.step, lo=cells + self.step * domain.lo, hi=cells + self.step * domain.hi,
                    buffers=tuple(lines_of(b) for b in buffers))


def split_graph_of(model: ModelSpec, key: GraphKey) -> SplitGraph:
    """Rule 7: the split graph of `key`'s placement, its cells a parameter from the cells `key` was asked at."""
    domain = Domain()
    cells = key.settings.full_cells
    settings = replace(key.settings, full_cells=cells_of(cells, domain))
    nodes = tuple(split_graph(compute_nodes(model, settings, key.blocks, kv_on_cpu=key.sched.kv_on_cpu), key.sched))
    step = grid(cells)
    moving = tuple((n.name, n.nbytes.a, n.nbytes.s) for n in nodes if isinstance(n.nbytes, Affine))
    return SplitGraph(at=cells, step=step, lo=cells + step * domain.lo, hi=cells + step * domain.hi, nodes=nodes,
                      moving=moving)


def replay(model: ModelSpec, key: GraphKey) -> Span:
    """Rule 6: the scheduler and allocator replayed once over the graph of `key`'s placement, over plain ints: a span
    of the asked cells alone (a placement's first ask)."""
    cells = key.settings.full_cells
    buffers = compute_buffers(compute_nodes(model, key.settings, key.blocks, kv_on_cpu=key.sched.kv_on_cpu), key.sched)
    return Span(at=cells, step=grid(cells), lo=cells, hi=cells, buffers=tuple(((b, 0),) for b in buffers))


@per_model(maxsize=KEPT)
def _spans(model: ModelSpec, key: GraphKey) -> list[Span]:
    """Rule 5: the spans kept for one placement, newest last (the asks append to it)."""
    return []


@per_model(maxsize=KEPT)
def _split_graphs(model: ModelSpec, key: GraphKey) -> list[SplitGraph]:
    """Rule 7: the split graphs kept for one placement, newest last (the asks append to it)."""
    return []


def _worth_a_span(spans: list[Span], cells: int) -> bool:
    """Rule 8: whether the allocator replays with the cells a parameter: not where this placement's span nearest to
    `cells` (of those that hold more than their own cells: within `WIDE` of its steps of them, else the nearest below
    unless `cells` is `FAR` times its own, else any) is narrower than `WIDE` steps."""
    wider = [s for s in spans if s.hi > s.lo]
    near = min((s for s in wider if s.lo - WIDE * s.step <= cells <= s.hi + WIDE * s.step),
               key=lambda s: abs(s.at - cells), default=None)
    if near is None:
        below = max((s for s in wider if s.at < cells), key=lambda s: s.at, default=None)
        if below is not None and cells >= FAR * below.at:
            return True
        near = below or min(wider, key=lambda s: abs(s.at - cells), default=None)
    return near is None or near.hi - near.lo >= WIDE * near.step


def device_buffers(model: ModelSpec, settings: GraphSettings, sched: Scheduler) -> tuple[int, ...]:
    """Each backend's compute buffer (GPUs in order, the host last) for the placement `sched` describes (Rules 3, 5)."""
    key = graph_key(model, settings, sched)
    cells = settings.full_cells
    spans = _spans(model, key)
    for span in reversed(spans):
        if span.holds(cells):
            return span.buffers_at(cells)
    if spans:
        graphs = _split_graphs(model, key)
        graph = next((g for g in reversed(graphs) if g.holds(cells)), None)
        if graph is None:
            graph = split_graph_of(model, key)
            graphs.append(graph)
            del graphs[:-SPANS]
        span = graph.span_at(cells, key.sched.alignments, _worth_a_span(spans, cells))
    else:
        span = replay(model, key)
    spans.append(span)
    del spans[:-SPANS]
    return span.buffers_at(cells)
