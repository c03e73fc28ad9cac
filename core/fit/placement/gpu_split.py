"""Which device each layer lands on when g layers are offloaded — llama.cpp's placement rule.

Source: `LLAMA_CPP_SOURCE`, src/llama-model.cpp `llama_model_base::load_tensors` (split mode
layer). Slots 0 … L−1 are the blocks, slot L is the output layer (`output_norm` and `output`,
or the duplicated token-embedding table when tied).

Rule 1: i_gpu_start = max(L + 1 − g, 0) and act = min(g, L + 1): slots i_gpu_start … L go to
        the GPUs, the rest stay on the host. So `-ngl g` offloads the OUTPUT LAYER first, then
        the last g − 1 blocks; g ≥ L + 1 offloads everything. (Builds of 2023–2024 started at
        max(L − g, 0): the last g blocks, the output layer only when g > L.)
Rule 2: the input layer (token and position embeddings) always stays on the host.
Rule 3: split points are the running sums of each GPU's share, normalised, in float32 as
        llama.cpp computes them. The shares are the user's tensor split (`-ts a,b,…`; entries
        past the list are 0) unless it is absent or all zero; then each GPU's free memory
        (llama.cpp asks the backend: cudaMemGetInfo; we use the probe's figure). Slot il goes
        to the first GPU whose split point exceeds float32((il − i_gpu_start) / act)
        (`std::upper_bound`), so every GPU gets one contiguous run of slots and the last GPU
        holds the output layer. When every share is zero (where llama.cpp would divide by
        zero) the GPUs share equally.
Rule 4: with no GPU, nothing is offloaded, whatever g asks (act = 0).
Rule 5: the most slots that fit is found by bisection over g = 0 … L + 1: O(log L) placements,
        each O(number of GPUs). With one GPU feasibility is monotone in g (its run only grows).
        With several, each run slides by at most one slot per step of g, so uneven layers can
        make it non-monotone; the answer is then a g that fits while g + 1 does not — never
        one that does not fit. With one GPU the estimate first finds, by the same bisection, the most
        layers whose weights and cache fit before any compute buffer (no scheduler replay), and
        searches down from that g in doubling steps: the compute buffers only add, so nothing past
        it fits, and it is usually the answer or a layer or two above it (one or two replays, not
        log₂ L). A search that knows a g near the answer (`near`: the same search's answer at the last ctx, a slider
        tick moves it by a layer or two) starts there and walks away from it in doubling steps before it bisects:
        with one GPU, the same answer in two or three placements instead of about log₂ L.
Rule 6: the GPUs llama.cpp offloads to (src/llama.cpp, `llama_model_load_from_file_impl`):
        the discrete ones, and integrated GPUs (iGPU, APU, Apple) only when there is no discrete
        GPU. Of those, a GPU whose memory could not be read cannot be judged: it is left out of
        the estimate (and named in its notes).
Rule 7: `--n-cpu-moe N` (common/arg.cpp, `llm_add_n_cpu_ffn_overrides`) keeps the routed
        experts (`blk.i.ffn_{up,down,gate,gate_up}_{ch,}exps`) of blocks 0 … N − 1 in host RAM;
        every other tensor stays where the placement puts it. With every slot offloaded, each
        GPU's load only falls as N grows, so the smallest N that fits is bisected too.
Rule 8: `-dev A,B` (common/arg.cpp `parse_device_list`) offloads to the devices named, counted in
        llama.cpp's order of its GPUs (CUDA0 is the first); `-dev none` to none. `-sm none`
        (src/llama.cpp `llama_model_load_from_file_impl`: `model->devices = {devices[main_gpu]}`)
        keeps one GPU, the `-mg` one.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from typing import Callable, Sequence

from gguf_budget.core.errors import RequestError
from gguf_budget.core.machine.gpu import GpuInfo

FLOAT32_MAX = 3.4028234663852886e38
MAX_TENSOR_SPLIT = 16  # llama.cpp's LLAMA_MAX_DEVICES: -ts takes fewer entries than that


def _f32(x: float) -> float:
    """Round to float32: float64 arithmetic then one rounding equals float32 arithmetic for + − × ÷."""
    return float(struct.unpack("f", struct.pack("f", x))[0])


@dataclass(frozen=True)
class BlockRun:
    """A GPU's run of slots as what it holds (Rule 1): blocks `first` … `last` (`count` of them, none when 0),
    the output layer or not; `empty` when the run holds no slot at all."""

    first: int
    last: int
    count: int
    output: bool
    empty: bool


def block_run(slots: tuple[int, int], n_layer: int) -> BlockRun:
    """The run of slots [start, end) — slot `n_layer` is the output layer — as blocks and the output layer."""
    start, end = slots
    count = min(end, n_layer) - start
    return BlockRun(first=start, last=start + count - 1, count=count, output=end > n_layer, empty=end <= start)


def offloaded_blocks(gpu_layers: int) -> int:
    """Blocks on a GPU under `gpu_layers` (-ngl): the output layer is the first one offloaded (Rule 1)."""
    return max(gpu_layers - 1, 0)


@dataclass(frozen=True)
class Placement:
    """Per GPU, its run of slots [start, end) (slot L = output layer); `gpu_layers` = act of Rule 1."""

    n_layer: int
    gpu_layers: int
    runs: tuple[tuple[int, int], ...]

    @property
    def offloaded_blocks(self) -> int:
        return offloaded_blocks(self.gpu_layers)

    @property
    def host_blocks(self) -> int:
        """Blocks 0 … host_blocks − 1 stay on the host (Rule 1)."""
        return self.n_layer - self.offloaded_blocks

    @property
    def output_on_gpu(self) -> bool:
        return self.gpu_layers >= 1

    @property
    def all_on_gpu(self) -> bool:
        return self.gpu_layers == self.n_layer + 1


def split_shares(gpu_free: Sequence[int], tensor_split: Sequence[float] | None = None) -> tuple[float, ...]:
    """Each GPU's share (Rule 3): the user's tensor split unless absent or all zero, else free memory."""
    n = len(gpu_free)
    user = tuple(float(tensor_split[i]) if i < len(tensor_split) else 0.0 for i in range(n)) if tensor_split else ()
    return user if any(user) else tuple(float(f) for f in gpu_free)


def parse_tensor_split(text: str) -> tuple[float, ...] | None:
    """'3,1' or '3/1' (llama.cpp splits -ts on commas and slashes) → (3.0, 1.0); '' → None (by free memory).
    Every share must be a finite number of 0 or more whose 32-bit running sum stays finite (1e308,1e308
    made every split point NaN), RequestError in words otherwise."""
    parts = [p for p in re.split(r"[,/]+", text.strip()) if p.strip()]
    if not parts:
        return None
    try:
        shares = tuple(float(p) for p in parts)
    except ValueError:
        raise RequestError(f"not a list of shares: {text.strip()!r} (try 1,1 or 3,1)") from None
    if not all(math.isfinite(x) and x >= 0 for x in shares):
        raise RequestError(f"shares must be numbers of 0 or more: {text.strip()!r}")
    if len(shares) >= MAX_TENSOR_SPLIT:
        raise RequestError(f"a tensor split is 1 to {MAX_TENSOR_SPLIT - 1} shares")
    if not all(math.isfinite(p) for p in split_points(shares)):
        raise RequestError(f"shares too large: {text.strip()!r} (llama.cpp adds them as 32-bit floats, "
                           f"so their sum must stay below {FLOAT32_MAX:.4g})")
    return shares


def split_points(shares: Sequence[float]) -> tuple[float, ...]:
    total = 0.0
    running = []
    for share in shares:
        total = _f32(total + _f32(float(share)))
        running.append(total)
    if total == 0.0:
        return tuple(_f32((i + 1) / len(shares)) for i in range(len(shares)))
    return tuple(_f32(r / total) for r in running)


def _first_slot_at_or_above(point: float, act: int) -> int:
    """The first j in [0, act] with float32(j / act) ≥ point (monotone in j, so step from an estimate)."""
    j = min(max(math.ceil(point * act) - 1, 0), act)
    while j > 0 and _f32((j - 1) / act) >= point:
        j -= 1
    while j < act and _f32(j / act) < point:
        j += 1
    return j


def place_layers(n_layer: int, gpu_layers: int, gpu_free: Sequence[int],
                 tensor_split: Sequence[float] | None = None) -> Placement:
    """Where llama.cpp puts each slot for `-ngl gpu_layers [-ts tensor_split]` on GPUs with `gpu_free` bytes free."""
    g = max(gpu_layers, 0)
    act = min(g, n_layer + 1) if gpu_free else 0
    start = n_layer + 1 - act
    if act == 0:
        return Placement(n_layer, 0, tuple((n_layer + 1, n_layer + 1) for _ in gpu_free))
    points = split_points(split_shares(gpu_free, tensor_split))
    bounds = [0] + [_first_slot_at_or_above(p, act) for p in points[:-1]] + [act]
    runs = tuple((start + bounds[d], start + bounds[d + 1]) for d in range(len(gpu_free)))
    return Placement(n_layer, act, runs)


def _first_true(lo: int, hi: int, holds: Callable[[int], bool]) -> int:
    """The smallest x in (lo, hi] where `holds` turns true, given it holds at hi; lo itself is never asked."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid
    return hi


def most_layers_that_fit(n_layer: int, fits: Callable[[int], bool], upper: int | None = None,
                         near: int | None = None) -> int:
    """The largest g in 0 … L + 1 with `fits(g)` (g = 0 always counts as fitting), by bisection (Rule 5); `upper`,
    where given, a g past which nothing fits (`fits(upper + 1)` is false), asked first; else `near`, where given, a g
    the search starts from (Rule 5)."""
    if upper is None and near is not None:
        return _from_near(n_layer + 1, fits, min(max(near, 0), n_layer + 1))
    top = n_layer + 1 if upper is None else upper
    if top == 0 or fits(top):
        return top
    lo, hi, step = 0, top, 1
    while upper is not None and hi - step > 0:  # from the top down, in doubling steps: the answer is near it
        if fits(hi - step):
            lo = hi - step
            break
        hi, step = hi - step, step * 2
    return _first_true(lo, hi, lambda g: not fits(g)) - 1


def _from_near(top: int, fits: Callable[[int], bool], g: int) -> int:
    """Rule 5: the largest g in 0 … top with `fits(g)`, walked to from `g` in doubling steps, then bisected."""
    if g == 0 or fits(g):
        lo, step = g, 1
        while lo < top:
            hi = min(lo + step, top)
            if not fits(hi):
                return _first_true(lo, hi, lambda x: not fits(x)) - 1
            lo, step = hi, step * 2
        return top
    hi, step = g, 1
    while True:
        lo = max(hi - step, 0)
        if lo == 0 or fits(lo):
            return _first_true(lo, hi, lambda x: not fits(x)) - 1
        hi, step = lo, step * 2


def offload_gpus(gpus: Sequence[GpuInfo]) -> tuple[tuple[GpuInfo, ...], tuple[GpuInfo, ...]]:
    """(the GPUs the estimate places layers on, those llama.cpp would use whose memory is unknown) — Rule 6."""
    discrete = [g for g in gpus if not g.integrated]
    used = discrete or list(gpus)
    return tuple(g for g in used if g.budget is not None), tuple(g for g in used if g.budget is None)


def chosen_gpus(gpus: tuple[GpuInfo, ...], devices: tuple[str, ...] | None, split_mode: str,
                main_gpu: int) -> tuple[GpuInfo, ...]:
    """Rule 8: the GPUs `-dev` names (all when None, none for `-dev none`), and with `-sm none` only `-mg`'s."""
    if devices is not None:
        wanted = set()
        for name in devices:
            m = re.search(r"(\d+)$", name.split("[")[0])
            if m is None:
                raise RequestError(f"-dev {name}: a device is named by its backend and number, such as CUDA0 or Vulkan1")
            wanted.add(int(m[1]))
        gpus = tuple(g for i, g in enumerate(gpus) if i in wanted)
    if split_mode == "none" and gpus:
        if not 0 <= main_gpu < len(gpus):
            raise RequestError(f"-mg {main_gpu}: this machine has {len(gpus)} GPU{'s' if len(gpus) != 1 else ''} "
                               f"(0 … {len(gpus) - 1})")
        gpus = (gpus[main_gpu],)
    return gpus


def fewest_cpu_moe_layers(n_layer: int, fits: Callable[[int], bool]) -> int | None:
    """The smallest N in 0 … L with `fits(N)`, by bisection (Rule 7); None when even N = L does not fit."""
    return _first_true(-1, n_layer, fits) if fits(n_layer) else None
