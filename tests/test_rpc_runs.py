"""Every buffer on every device, predicted and checked on real multi-device llama.cpp runs.

The runs (tests/data/llamacpp-rpc, made by its record.py; `rpc_runs.RUNS` lists them) are llama.cpp
0c1e570 with its RPC backend: each `ggml-rpc-server` on 127.0.0.1 is a device of its own with its own
weights, KV cache and compute buffer, so llama.cpp's scheduler splits the graph over them as it does
over GPUs. Each is re-estimated from a header-only skeleton of its model with the run's own flags, and
every buffer line llama.cpp printed — weights, KV, output and compute, per device — must come out
within 1 % (compute from llama.cpp's four-decimal re-check line). Four runs keep one compute buffer
further off (`NEAR`), held to 10 %: the replayed allocator's layout differs by one residual block
(+2 of 24.5 MiB on the middle device of a -ngl 5 split; −1 of 18.0 MiB on the second device with
-nkvo; +2 of 44.7 MiB on the first device with a q8_0 cache; −0.25 of 17.3 MiB on both devices with -nkvo and q8_0).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gguf_factory import write_gguf
from rpc_runs import RUNS, printed, predicted
from runnable_model import multi_device_descs

from gguf_budget.core.model.loader import load_model
from gguf_budget.core.model.spec import ModelSpec

DATA = Path(__file__).parent / "data" / "llamacpp-rpc"
MiB = 1024 * 1024
TOLERANCE = 0.01
NEAR = {"mid8_2dev_ngl5": {"RPC0[127.0.0.1:50611]"}, "tied12_2dev_all_nkvo": {"RPC0[127.0.0.1:50612]"},
        "mid8_2dev_all_q8": {"RPC0[127.0.0.1:50611]"},
        "tied12_2dev_all_nkvo_q8": {"RPC0[127.0.0.1:50611]", "RPC0[127.0.0.1:50612]"}}
"""The compute buffers held to `NEAR_TOLERANCE`, by run."""
NEAR_TOLERANCE = 0.10
SLACK = 0.00501 * MiB  # half the last printed digit: 0.125 MiB prints as 0.12, a printed 0.00 is below 5 KiB


@pytest.fixture(scope="module")
def specs(tmp_path_factory) -> dict[str, ModelSpec]:
    folder = tmp_path_factory.mktemp("rpc-models")
    return {name: load_model(write_gguf(folder / f"{name}.gguf", d, "header_only")[0])
            for name, d in multi_device_descs().items()}


def test_there_are_twenty_one_runs_over_two_models_and_both_device_counts():
    """Seventeen of them hold every buffer to 1 % (the issue asks twelve)."""
    assert len(RUNS) == 21 and {r.model for r in RUNS} == {"mid8", "tied12"} and {r.devices for r in RUNS} == {1, 2}
    assert all((DATA / f"{r.name}.log").exists() for r in RUNS) and len(RUNS) - len(NEAR) == 17


@pytest.mark.parametrize("run", RUNS, ids=[r.name for r in RUNS])
def test_every_printed_buffer_is_predicted_within_one_percent(specs, run):
    want, got = printed((DATA / f"{run.name}.log").read_text()), predicted(run, specs[run.model])
    for key, measured in want.items():
        guess = got.get(key, 0)
        bound = NEAR_TOLERANCE if key[0] == "compute" and key[1] in NEAR.get(run.name, ()) else TOLERANCE
        assert abs(guess - measured) <= max(bound * measured, SLACK), (key, guess / MiB, measured / MiB)
    for key, guess in got.items():  # and nothing llama.cpp did not allocate
        assert key in want or guess <= SLACK, (key, guess / MiB)
