"""`-ot` expert placement beyond `--n-cpu-moe`: which blocks' routed experts each GPU sends to the CPU, and part of one.

`--n-cpu-moe N` keeps the experts of blocks 0 … N − 1 in host RAM. With every slot offloaded over several GPUs those
blocks are the first GPU's (llama.cpp splits by layer count, `gpu_split` Rule 3), so the last GPU, still full, sets N
and the first ones are left nearly empty (Qwen3-235B-A22B in Q4_K on 4 × 24 GiB: N = 77 of 94, 1.2–1.8 GiB used on
three GPUs). And a whole block's experts is a coarse step (≈ 1.3 GiB there): the VRAM a step leaves unused is lost.

Rule 1: the placements: every slot on the GPUs (`-ngl L + 1`, as `--n-cpu-moe`'s candidates), and on each GPU j a level
        ℓ_j = 3·k_j + r_j: the routed experts of the first k_j blocks of its run in host RAM (whole blocks, llama.cpp's
        `LLM_FFN_EXPS_REGEX`, common/common.h), and of the block after them, by r_j, nothing, its down experts
        (r = 1), or its gate and down experts (r = 2) — the two part blocks llama.cpp's own `--fit` makes
        (common/fit.cpp `LAYER_FRACTION_GATE`: up and gate stay; `LAYER_FRACTION_UP`: up stays), here of the
        experts only. A gated block's three expert matrices are alike, so each step moves a third of its experts.
Rule 2: monotone per GPU: each step of ℓ_j moves more of GPU j's own experts to the host, so its weights only fall
        (fits is monotone in ℓ_j), decode only slows (each moved byte is read from RAM, `speed.token_bytes`
        Rule 10), and the host's need only rises. The fewest levels that fit are the fastest placement of the family.
        They are found as llama.cpp's `--fit` finds its layers, by false position, not by bisection (a full load with
        `-ot` costs several plain ones): the bytes each level moves are exact (the tensors the patterns find), so
        from one priced load each GPU's next level is the fewest that moves its shortfall (or gives back its
        slack), every GPU in the same load; a level met again is raised one step where its GPU is short. Two or
        three loads; at most MAX_LOADS.
Rule 3: not quite independent, so priced, not predicted: a GPU's compute buffer depends on where the others' experts
        are (the first GPU borrows host-held experts for large batches, op offload; any `-ot` turns pipeline copies
        off), which the moved bytes do not see. The answer is the priced load that fits with the fewest bytes moved,
        so it always fits by the pricing; a host short ends the search (more levels only add to the host).
Rule 4: spelled as llama.cpp reads it (`-ot PATTERN=BUFFER`, common/arg.cpp `parse_tensor_buffer_overrides`: a
        comma separates overrides, so no pattern holds one): whole blocks alone that are 0 … N − 1 are
        `--n-cpu-moe N`; any other set one `-ot blk\\.(i|j|…)\\.ffn_(up|down|gate|gate_up)_(ch|)exps=CPU`, and the
        part blocks one `-ot` per part. No two patterns find the same tensor, so their order does not matter. Never
        `--n-cpu-moe` beside `-ot`: llama.cpp adds both to its overrides, but the fit prices the experts
        `--n-cpu-moe` moves only where no `-ot` is given.
Rule 5: not searched: the layer split (`-ts`), a part block overflowing to the next GPU instead of the CPU (`--fit`
        does; a byte on another GPU is read at the same VRAM rate, so it would only move memory), the order of the
        blocks within a run (the first ones, as `--n-cpu-moe`), dense FFN and attention weights.
Rule 6: `--n-cpu-moe N` is the same family with every GPU's level a multiple of STEPS set by N (the blocks before N
        keep their experts on the host), so its fewest N is aimed as the levels are: from a load with every block's
        experts on the host, per GPU the fewest of its run's first blocks whose experts must stay there for the
        rest to fit its spare memory; the largest of those over the GPUs. The compute buffers' move with the
        placement is not seen, so the aim is checked by pricing, not trusted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol, TypeVar

from gguf_budget.core.explorer.full_load import FullLoad
from gguf_budget.core.fit.placement.gpu_split import block_run
from gguf_budget.core.fit.placement.moe import LLM_FFN_EXPS_REGEX
from gguf_budget.core.fit.runtime_types import TensorOverride
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.speed.token_bytes import HOST_BUFFER


class Priced(Protocol):
    """A priced candidate (`tune.Candidate`): its full load."""

    @property
    def load(self) -> FullLoad: ...


Candidate = TypeVar("Candidate", bound=Priced)

STEPS = 3
"""Rule 1: levels per block."""
PARTS = {1: r"\.ffn_down_(ch|)exps", 2: r"\.ffn_(gate|gate_up|down)_(ch|)exps"}
"""Rule 1: the part of the block after the whole ones that goes to the host, by r."""
MAX_LOADS = 6

Runs = tuple[tuple[int, int], ...]
"""Per GPU, its run of blocks: (first block, count)."""


def runs_of(cand: Priced) -> Runs:
    """Each GPU's run of blocks in a priced candidate (the output slot is no block)."""
    n_layer = cand.load.fit.n_layer
    out = []
    for d in cand.load.fit.devices[1:]:
        run = block_run(d.slots, n_layer) if d.slots is not None else None
        out.append((run.first, run.count) if run is not None and run.count > 0 else (0, 0))
    return tuple(out)


def _blocks(blocks: list[int]) -> str:
    """`blk\\.7` for one block, `blk\\.(0|1|24)` for several (the parenthesis keeps `1` from finding `blk.12`)."""
    return rf"blk\.{blocks[0]}" if len(blocks) == 1 else rf"blk\.({'|'.join(str(b) for b in sorted(blocks))})"


def spelled(runs: Runs, levels: tuple[int, ...]) -> tuple[int | None, tuple[TensorOverride, ...]]:
    """Rule 4: the levels as (`--n-cpu-moe` N or None, the `-ot` overrides)."""
    whole = [first + i for (first, _), level in zip(runs, levels, strict=True) for i in range(level // STEPS)]
    parts: dict[int, list[int]] = {}
    for (first, _), level in zip(runs, levels, strict=True):
        if level % STEPS:
            parts.setdefault(level % STEPS, []).append(first + level // STEPS)
    prefix = bool(whole) and not parts and sorted(whole) == list(range(len(whole)))
    out = [] if prefix or not whole else [TensorOverride(_blocks(whole) + LLM_FFN_EXPS_REGEX, HOST_BUFFER)]
    out += [TensorOverride(_blocks(blocks) + PARTS[r], HOST_BUFFER) for r, blocks in sorted(parts.items())]
    return (len(whole) if prefix else None), tuple(out)


def _freed(model: ModelSpec, run: tuple[int, int]) -> tuple[int, ...]:
    """The bytes each level of a GPU's run moves to the host (level 0 … 3 · count), found by the same patterns
    `spelled` writes."""
    first, count = run
    sizes: dict[tuple[int, int], int] = {}
    for t in model.tensors:
        if t.layer is None or not first <= t.layer < first + count:
            continue
        for r, pattern in ((STEPS, LLM_FFN_EXPS_REGEX), *PARTS.items()):
            if re.search(pattern, t.name):
                sizes[t.layer, r] = sizes.get((t.layer, r), 0) + t.nbytes
    out = [0]
    for b in range(first, first + count):
        done = out[-1]
        out += [done + sizes.get((b, r), 0) for r in range(1, STEPS + 1)]
    return tuple(out)


def _level_for(freed: tuple[int, ...], target: int) -> int:
    """The fewest level that moves at least `target` bytes (the top when none does)."""
    return next((level for level, moved in enumerate(freed) if moved >= target), len(freed) - 1)


def fewest_levels(model: ModelSpec, runs: Runs, price: Callable[[tuple[int, ...]], Candidate]) -> Candidate | None:
    """Rules 2–3: the priced candidate at the fewest levels per GPU that fits (None: none of the loads tried fits);
    `price` prices one tuple of levels."""
    freed = [_freed(model, run) for run in runs]
    seen: set[tuple[int, ...]] = set()
    best: tuple[int, Candidate] | None = None
    levels = tuple(0 for _ in runs)
    for _ in range(MAX_LOADS):
        seen.add(levels)
        cand = price(levels)
        devices = cand.load.fit.devices
        moved = sum(f[lv] for f, lv in zip(freed, levels, strict=True))
        if cand.load.fit.verdict.admitted and (best is None or moved < best[0]):
            best = (moved, cand)
        needs = [d.need for d in devices]
        if devices[0].shortfall or any(n is None for n in needs):
            break  # Rule 3: more levels only add to the host
        step = tuple(_level_for(f, f[lv] + (d.need or 0) - d.usable)
                     for f, lv, d in zip(freed, levels, devices[1:], strict=True))
        if step in seen:
            step = tuple(min(lv + 1, len(f) - 1) if d.shortfall else lv
                         for f, lv, d in zip(freed, levels, devices[1:], strict=True))
        if step in seen:
            break
        levels = step
    return None if best is None else best[1]


def aimed_cpu_moe(model: ModelSpec, every_on_host: Priced) -> int:
    """Rule 6: `--n-cpu-moe`'s N aimed from `every_on_host` (N = every block, every slot on the GPUs)."""
    aim = 0
    for run, d in zip(runs_of(every_on_host), every_on_host.load.fit.devices[1:], strict=True):
        if run[1] and d.need is not None:
            freed = _freed(model, run)
            stay = freed[-1] - (d.usable - d.need)  # the bytes of the run's experts the GPU cannot take back
            aim = max(aim, run[0] + -(-_level_for(freed, stay) // STEPS) if stay > 0 else 0)
    return aim
