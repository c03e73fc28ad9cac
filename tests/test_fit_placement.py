"""llama.cpp's layer placement (`gpu_split`): hand-worked tables, the literal per-slot rule
transcribed from llama.cpp 0c1e570, the user tensor split, and the O(log L) auto search."""

from __future__ import annotations

import math
import struct
from bisect import bisect_right

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gguf_budget.core.fit.placement.gpu_split import most_layers_that_fit, place_layers, split_points, split_shares
from gguf_budget.core.llama_cpp import LLAMA_CPP_REVISION

GiB = 1024**3


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def literal_device(n_layer: int, g: int, frees: list[int], il: int, ts: list[float] | None = None) -> int | None:
    """llama.cpp 0c1e570 `load_tensors` → `get_layer_buft_list`, transcribed slot by slot (float32 as in C++)."""
    start = max(n_layer + 1 - g, 0)
    act = min(g, n_layer + 1) if frees else 0
    if il < start or il - start >= act:
        return None
    all_zero = ts is None or all(x == 0.0 for x in (ts + [0.0] * len(frees))[:len(frees)])
    splits = [float(f) for f in frees] if all_zero else [(ts + [0.0] * len(frees))[i] for i in range(len(frees))]
    s, running = 0.0, []
    for share in splits:
        s = f32(s + f32(share))
        running.append(s)
    points = [f32(r / s) for r in running]
    return bisect_right(points, f32((il - start) / act))


def devices_of(n_layer: int, g: int, frees: list[int], ts: list[float] | None = None) -> list[int | None]:
    p = place_layers(n_layer, g, frees, ts)
    out: list[int | None] = [None] * (n_layer + 1)
    for d, (start, end) in enumerate(p.runs):
        for il in range(start, end):
            out[il] = d
    return out


def test_the_rules_name_the_llama_cpp_revision_they_follow():
    assert LLAMA_CPP_REVISION == "0c1e570"


@pytest.mark.parametrize(
    ("n_layer", "g", "frees", "expected"),
    [
        # one GPU: the OUTPUT layer (slot L) first, then the last g − 1 blocks
        (4, 0, [GiB], [None, None, None, None, None]),
        (4, 1, [GiB], [None, None, None, None, 0]),
        (4, 2, [GiB], [None, None, None, 0, 0]),
        (4, 4, [GiB], [None, 0, 0, 0, 0]),
        (4, 5, [GiB], [0, 0, 0, 0, 0]),
        (4, 99, [GiB], [0, 0, 0, 0, 0]),
        # no GPU: nothing moves, whatever g asks
        (4, 5, [], [None, None, None, None, None]),
        # four equal GPUs, all 9 slots: j/9 against split points .25 .5 .75 1
        (8, 9, [GiB] * 4, [0, 0, 0, 1, 1, 2, 2, 3, 3]),
        # two GPUs, 3 slots offloaded (6, 7, 8): j/3 = 0, .33, .67 against .5 → 0, 0, 1
        (8, 3, [GiB, GiB], [None, None, None, None, None, None, 0, 0, 1]),
        # unequal free memory 1:3 → split point .25; a GPU with nothing free gets nothing
        (8, 9, [GiB, 0, 3 * GiB], [0, 0, 0, 2, 2, 2, 2, 2, 2]),
    ],
)
def test_placement_table(n_layer, g, frees, expected):
    assert devices_of(n_layer, g, frees) == expected


def test_placement_flags():
    p = place_layers(32, 20, [GiB])
    assert (p.gpu_layers, p.offloaded_blocks, p.host_blocks, p.output_on_gpu, p.all_on_gpu) == (20, 19, 13, True, False)
    p = place_layers(32, 1, [GiB])
    assert (p.gpu_layers, p.host_blocks, p.output_on_gpu, p.runs) == (1, 32, True, ((32, 33),))
    p = place_layers(32, 40, [GiB])
    assert (p.gpu_layers, p.host_blocks, p.output_on_gpu, p.all_on_gpu) == (33, 0, True, True)
    p = place_layers(32, 40, [])
    assert (p.gpu_layers, p.host_blocks, p.output_on_gpu) == (0, 32, False)


def test_split_points_with_nothing_free_share_equally():
    assert split_points([0, 0]) == (0.5, 1.0)


@pytest.mark.parametrize(
    ("frees", "ts", "shares"),
    [
        ([24 * GiB, 12 * GiB], None, (24.0 * GiB, 12.0 * GiB)),
        ([24 * GiB, 12 * GiB], [1, 1], (1.0, 1.0)),
        ([24 * GiB, 12 * GiB], [3], (3.0, 0.0)),  # entries past the list are 0
        ([24 * GiB, 12 * GiB], [0, 0], (24.0 * GiB, 12.0 * GiB)),  # all zero = no split given
        ([24 * GiB], [1, 5], (1.0,)),  # entries past the GPUs are ignored, as llama.cpp copies n_devices
    ],
)
def test_split_shares_follow_the_user_split_unless_it_is_all_zero(frees, ts, shares):
    assert split_shares(frees, ts) == shares


# Two hypothetical GPUs, 24 and 12 GiB free, a 32-block model (33 slots), everything offloaded.
# Default split (by free memory): split points 24/36 = .6667, 1. Slot j of 33 goes to GPU 0 while
# j/33 < .6667: j = 0 … 21 (21/33 = .636; 22/33 = .6667 is not below float32(2/3)) → 22 slots on
# GPU 0 (blocks 0–21), 11 on GPU 1 (blocks 22–31 and the output layer).
# -ts 1,1: split point .5: j/33 < .5 for j = 0 … 16 → 17 slots on GPU 0 (blocks 0–16), 16 on GPU 1.
# -ngl 20 with the default split: slots 13 … 32; j/20 < .6667 for j = 0 … 13 → 14 slots on GPU 0
# (blocks 13–26), 6 on GPU 1 (blocks 27–31 and the output layer); blocks 0–12 stay on the host.
# -ngl 20 -ts 1,1: j/20 < .5 for j = 0 … 9 → 10 and 10.
@pytest.mark.parametrize(
    ("g", "ts", "runs", "per_gpu"),
    [
        (33, None, ((0, 22), (22, 33)), (22, 11)),
        (33, [1, 1], ((0, 17), (17, 33)), (17, 16)),
        (20, None, ((13, 27), (27, 33)), (14, 6)),
        (20, [1, 1], ((13, 23), (23, 33)), (10, 10)),
    ],
)
def test_two_gpus_of_24_and_12_gib_hand_worked(g, ts, runs, per_gpu):
    p = place_layers(32, g, [24 * GiB, 12 * GiB], ts)
    assert p.runs == runs
    assert tuple(end - start for start, end in p.runs) == per_gpu
    assert p.runs[-1][1] == 33  # the output layer (slot 32) is on the last device


def test_one_offloaded_slot_is_the_output_layer_and_goes_to_the_first_share():
    # -ngl 1: act = 1, slot 32 is j = 0, and 0/1 lies below GPU 0's split point
    assert place_layers(32, 1, [24 * GiB, 12 * GiB]).runs == ((32, 33), (33, 33))


@given(
    n_layer=st.integers(0, 130),
    g=st.integers(0, 140),
    frees=st.lists(st.integers(0, 200 * GiB), min_size=1, max_size=8).filter(any),
    ts=st.none() | st.lists(st.integers(0, 9).map(float), min_size=1, max_size=9),
)
def test_runs_match_the_literal_rule_slot_by_slot(n_layer, g, frees, ts):
    expected = [literal_device(n_layer, g, frees, il, ts) for il in range(n_layer + 1)]
    assert devices_of(n_layer, g, frees, ts) == expected


class Counting:
    """A feasibility predicate that counts how often the search asks it."""

    def __init__(self, limit: int):
        self.limit, self.calls = limit, 0

    def __call__(self, g: int) -> bool:
        self.calls += 1
        return g <= self.limit


@pytest.mark.parametrize("n_layer", [0, 1, 7, 200_000])
def test_the_auto_search_bisects(n_layer):
    bound = 2 + math.ceil(math.log2(n_layer + 2))
    for limit in sorted({0, 1, n_layer // 3, n_layer, n_layer + 1}):
        fits = Counting(limit)
        assert most_layers_that_fit(n_layer, fits) == limit
        assert fits.calls <= bound  # O(log L) questions, never one per layer


@given(n_layer=st.integers(0, 200_000), data=st.data())
def test_the_auto_search_from_a_near_g_finds_the_bisections_answer(n_layer, data):
    """gpu_split Rule 5: a search started from any g (`near`, in range or not) finds the largest g that fits, as the
    bisection does, for a test monotone in g (one GPU); two placements where `near` is the answer or the g above it,
    and O(log L) from anywhere."""
    limit = data.draw(st.integers(0, n_layer + 1), label="limit")
    near = data.draw(st.integers(-3, n_layer + 4), label="near")
    fits = Counting(limit)
    assert most_layers_that_fit(n_layer, fits, near=near) == limit == most_layers_that_fit(n_layer, Counting(limit))
    assert fits.calls <= 2 * (2 + math.ceil(math.log2(n_layer + 2)))
    if near in (limit, limit + 1) and 0 < near <= n_layer:
        assert fits.calls <= 2


def test_the_auto_search_over_64_gpus_and_200k_layers_asks_log_l_placements():
    n_layer, frees = 200_000, [GiB * (1 + i % 3) for i in range(64)]
    slot = 4096
    room = [f // 8192 for f in frees]  # every GPU holds a share of slots of 4096 bytes
    calls = []

    def fits(g: int) -> bool:
        calls.append(g)
        p = place_layers(n_layer, g, frees)
        return all((end - start) * slot <= r for (start, end), r in zip(p.runs, room, strict=True))

    g = most_layers_that_fit(n_layer, fits)
    assert fits(g) and not fits(g + 1)
    assert len(calls) <= 2 + 2 + math.ceil(math.log2(n_layer + 2))
