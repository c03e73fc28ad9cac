"""Which device each layer lands on when g layers are offloaded — llama.cpp's placement rule.

Source: llama.cpp src/llama-model.cpp, `llama_model::load_tensors` (split_mode layer, no
tensor_split given). Slot il = 0 … L−1 are the blocks, slot L is the output layer
(`output_norm` and `output`, or the duplicated token-embedding table when tied).

Rule 1: i_gpu_start = max(L − g, 0) and act = min(g, L + 1): slots i_gpu_start …
        i_gpu_start + act − 1 go to GPUs, the rest stay on the host. So g ≤ L offloads the
        LAST g blocks and keeps the output layer on the host; g = L + 1 offloads everything.
        (Some later builds compute i_gpu_start = L + 1 − g, offloading the output layer
        first; we follow the rule above.)
Rule 2: the input layer (token and position embeddings) always stays on the host.
Rule 3: with several GPUs, split points are the running sums of each GPU's free memory,
        normalised (in float32, as llama.cpp does); slot il goes to the first GPU whose split
        point exceeds float32((il − i_gpu_start) / act) (`std::upper_bound`). Every GPU thus
        gets one contiguous run of slots. With no free memory anywhere (where llama.cpp would
        divide by zero) the GPUs share equally. llama.cpp asks the backend for free memory
        (cudaMemGetInfo); we use NVML's figure, which can differ by the CUDA context's size.
Rule 4: with no GPU, nothing is offloaded, whatever g asks (act = 0).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Sequence


def _f32(x: float) -> float:
    """Round to float32: float64 arithmetic then one rounding equals float32 arithmetic for + − × ÷."""
    value: float = struct.unpack("f", struct.pack("f", x))[0]
    return value


@dataclass(frozen=True)
class Placement:
    """Per GPU, its run of slots [start, end) (slot L = output layer); blocks 0 … host_blocks − 1 stay on the host."""

    n_layer: int
    gpu_layers: int
    runs: tuple[tuple[int, int], ...]

    @property
    def host_blocks(self) -> int:
        return self.n_layer - min(self.gpu_layers, self.n_layer)

    @property
    def output_on_gpu(self) -> bool:
        return self.gpu_layers > self.n_layer


def split_points(gpu_free: Sequence[int]) -> tuple[float, ...]:
    total = 0.0
    running = []
    for free in gpu_free:
        total = _f32(total + _f32(float(free)))
        running.append(total)
    if total == 0.0:
        return tuple(_f32((i + 1) / len(gpu_free)) for i in range(len(gpu_free)))
    return tuple(_f32(r / total) for r in running)


def _first_slot_at_or_above(point: float, act: int) -> int:
    """The first j in [0, act] with float32(j / act) ≥ point (monotone in j, so step from an estimate)."""
    j = min(max(math.ceil(point * act) - 1, 0), act)
    while j > 0 and _f32((j - 1) / act) >= point:
        j -= 1
    while j < act and _f32(j / act) < point:
        j += 1
    return j


def place_layers(n_layer: int, gpu_layers: int, gpu_free: Sequence[int]) -> Placement:
    """Where llama.cpp puts each slot for `-ngl gpu_layers` across GPUs with `gpu_free` bytes free."""
    g = max(gpu_layers, 0)
    act = min(g, n_layer + 1) if gpu_free else 0
    start = max(n_layer - g, 0)
    if act == 0:
        return Placement(n_layer, 0, tuple((n_layer, n_layer) for _ in gpu_free))
    points = split_points(gpu_free)
    bounds = [0] + [_first_slot_at_or_above(p, act) for p in points[:-1]] + [act]
    runs = tuple((start + bounds[d], start + bounds[d + 1]) for d in range(len(gpu_free)))
    return Placement(n_layer, act, runs)
