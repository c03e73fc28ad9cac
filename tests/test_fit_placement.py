"""llama.cpp's layer placement (`gpu_split`): hand-worked tables and the literal per-slot rule."""

from __future__ import annotations

import struct
from bisect import bisect_right

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gguf_budget.core.fit.gpu_split import place_layers, split_points

GiB = 1024**3


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def literal_device(n_layer: int, g: int, frees: list[int], il: int) -> int | None:
    """llama.cpp `get_layer_buft_list`, transcribed slot by slot (float32 as in C++)."""
    start = max(n_layer - g, 0)
    act = min(g, n_layer + 1) if frees else 0
    if il < start or il - start >= act:
        return None
    s, running = 0.0, []
    for free in frees:
        s = f32(s + f32(float(free)))
        running.append(s)
    points = [f32(r / s) for r in running]
    return bisect_right(points, f32((il - start) / act))


def devices_of(n_layer: int, g: int, frees: list[int]) -> list[int | None]:
    p = place_layers(n_layer, g, frees)
    out: list[int | None] = [None] * (n_layer + 1)
    for d, (start, end) in enumerate(p.runs):
        for il in range(start, end):
            out[il] = d
    return out


@pytest.mark.parametrize(
    ("n_layer", "g", "frees", "expected"),
    [
        # one GPU: the LAST g blocks; the output layer (slot L) only when g > L
        (4, 0, [GiB], [None, None, None, None, None]),
        (4, 1, [GiB], [None, None, None, 0, None]),
        (4, 4, [GiB], [0, 0, 0, 0, None]),
        (4, 5, [GiB], [0, 0, 0, 0, 0]),
        (4, 99, [GiB], [0, 0, 0, 0, 0]),
        # no GPU: nothing moves, whatever g asks
        (4, 5, [], [None, None, None, None, None]),
        # four equal GPUs, all 9 slots: j/9 against split points .25 .5 .75 1
        (8, 9, [GiB] * 4, [0, 0, 0, 1, 1, 2, 2, 3, 3]),
        # two GPUs, 3 blocks offloaded: j/3 = 0, .33, .67 against .5 → 0, 0, 1
        (8, 3, [GiB, GiB], [None, None, None, None, None, 0, 0, 1, None]),
        # unequal free memory 1:3 → split point .25; a GPU with nothing free gets nothing
        (8, 9, [GiB, 0, 3 * GiB], [0, 0, 0, 2, 2, 2, 2, 2, 2]),
    ],
)
def test_placement_table(n_layer, g, frees, expected):
    assert devices_of(n_layer, g, frees) == expected


def test_placement_flags():
    p = place_layers(32, 20, [GiB])
    assert (p.gpu_layers, p.host_blocks, p.output_on_gpu) == (20, 12, False)
    p = place_layers(32, 40, [GiB])
    assert (p.gpu_layers, p.host_blocks, p.output_on_gpu) == (33, 0, True)
    p = place_layers(32, 40, [])
    assert (p.gpu_layers, p.host_blocks, p.output_on_gpu) == (0, 32, False)


def test_split_points_with_nothing_free_share_equally():
    assert split_points([0, 0]) == (0.5, 1.0)


@given(
    n_layer=st.integers(0, 130),
    g=st.integers(0, 140),
    frees=st.lists(st.integers(0, 200 * GiB), min_size=1, max_size=8).filter(any),
)
def test_runs_match_the_literal_rule_slot_by_slot(n_layer, g, frees):
    assert devices_of(n_layer, g, frees) == [literal_device(n_layer, g, frees, il) for il in range(n_layer + 1)]
