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
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.fit.buffers.compute_graph import (
    BLOCK_WEIGHTS, GLOBAL_WEIGHTS, BlockShape, GraphSettings, block_shapes, compute_nodes, layer_tensors, replayed,
)
from gguf_budget.core.fit.buffers.sched import Scheduler, compute_buffers
from gguf_budget.core.model.per_model_cache import per_model
from gguf_budget.core.model.spec import ModelSpec

KEPT = 1024

KeptBlock = tuple[int | None, bool, BlockShape, int, int, tuple[tuple[str, int], ...], tuple[int, ...]]
"""Rules 1–2 for one kept block: (its index where Rule 2 needs it, last, shape, its slot's device, its KV's device,
its tensors, its weights' devices where `-ot` moves them)."""


@dataclass(frozen=True, eq=False)
class GraphKey:
    """Rule 1: what the buffers of one placement's graph depend on; equal keys, equal buffers. It carries the
    placement it was made from, for the replay a first ask makes, but compares by `signature` alone."""

    signature: tuple[object, ...]
    settings: GraphSettings
    sched: Scheduler
    blocks: tuple[tuple[int, BlockShape], ...]

    def __hash__(self) -> int:
        return hash(self.signature)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GraphKey) and other.signature == self.signature


def graph_key(model: ModelSpec, settings: GraphSettings, sched: Scheduler) -> GraphKey:
    """Rules 1–2: the blocks the replay keeps for this placement, and its signature."""
    blocks, scheduler, kept = _placed(model, sched)
    return GraphKey(signature=(settings, scheduler, kept), settings=settings, sched=sched, blocks=blocks)


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


@per_model(maxsize=KEPT)
def _replayed(model: ModelSpec, key: GraphKey) -> tuple[int, ...]:
    return compute_buffers(compute_nodes(model, key.settings, key.blocks, kv_on_cpu=key.sched.kv_on_cpu), key.sched)


def device_buffers(model: ModelSpec, settings: GraphSettings, sched: Scheduler) -> tuple[int, ...]:
    """Each backend's compute buffer (GPUs in order, the host last) for the placement `sched` describes (Rule 3)."""
    return _replayed(model, graph_key(model, settings, sched))
