"""The auto GPU-layer search asks O(log L) placements, however many layers and GPUs (hostile #12 item 11:
it used to step one layer at a time, O(L·G): 200k layers × 64 GPUs took 18 s)."""

from __future__ import annotations

import math
from dataclasses import replace

from gguf_factory import ArchDesc

import gguf_budget.core.fit.placement.devices as devices
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.types import FitRequest, Reserves
from gguf_budget.core.machine.snapshot import hypothetical_machine

GiB = 1024**3
N_LAYER = 200_000


def test_200k_layers_on_64_gpus_take_log_l_placements(model, monkeypatch):
    small = model(ArchDesc(n_layer=1, n_vocab=256))
    slot = small.layer_bytes[0] + estimate_fit(small, hypothetical_machine(GiB), FitRequest(ctx=256)).kv.engine
    huge = replace(small, n_layer=N_LAYER, layers=small.layers * N_LAYER, layer_bytes=small.layer_bytes * N_LAYER,
                   layer_role_bytes=small.layer_role_bytes * N_LAYER)
    placements = []
    real = devices.place_layers

    def counting(*args, **kwargs):
        placements.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(devices, "place_layers", counting)
    # 64 GPUs of 64 MiB; the first keeps all but three slots and its compute buffer back, so the total would take
    # far more layers than the first GPU allows: a search that steps down from the total walks ~58,000 steps.
    # A GPU's compute buffer is one block's graph and the copies it reads, whatever the number of blocks: 200
    # blocks every one offloaded give it.
    machine = hypothetical_machine(64 * GiB, gpu_count=64, gpu_total=GiB // 16)
    few = replace(huge, n_layer=200, layers=huge.layers[:200], layer_bytes=huge.layer_bytes[:200],
                  layer_role_bytes=huge.layer_role_bytes[:200])
    compute = estimate_fit(few, machine, FitRequest(ctx=256, gpu_layers=201)).devices[1].compute
    request = FitRequest(ctx=256, reserves=Reserves(gpu=GiB // 16 - 3 * slot - compute))
    placements.clear()
    e = estimate_fit(huge, machine, request)
    search = len(placements) - 1  # the chosen placement itself is one more
    assert search <= 2 + math.ceil(math.log2(N_LAYER + 2))
    assert 0 < e.auto_gpu_layers < N_LAYER
    assert all(d.shortfall == 0 for d in e.devices[1:])
    worse = estimate_fit(huge, machine, replace(request, gpu_layers=e.auto_gpu_layers + 1))
    assert any(d.shortfall for d in worse.devices[1:])


def test_the_candidates_are_the_floor_the_pad_multiples_between_and_the_ceiling_never_listed():
    """A header claiming a 2^32-token context made auto_fit list 16 million candidates (11 s per open)."""
    from gguf_budget.core.fit.ctx.auto_ctx import _Candidates
    from gguf_budget.core.model.kv import ENGINE_CELL_PAD

    for floor, ceiling in ((4096, 4096), (4096, 4100), (1000, 4096), (4096, 131_072), (7, 7), (4096, 2**32 - 1)):
        c = _Candidates(floor, ceiling)
        if ceiling < 10**6:
            listed = sorted({floor, *range(-(-(floor + 1) // ENGINE_CELL_PAD) * ENGINE_CELL_PAD, ceiling,
                                           ENGINE_CELL_PAD), ceiling})
            assert list(c) == listed and c[-1] == ceiling
        assert (c[0], c[len(c) - 1], len(c) >= 1) == (floor, ceiling, True)
    huge = _Candidates(4096, 2**32 - 1)
    assert (huge[1], huge[-2], huge[-1]) == (4096 + ENGINE_CELL_PAD, 2**32 - ENGINE_CELL_PAD, 2**32 - 1)
