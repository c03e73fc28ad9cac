"""Every buffer of real Vulkan llama.cpp runs, predicted through the path `fit --command` takes.

The runs (tests/data/llamacpp-vulkan, made by its record.py; `vulkan_runs.RUNS` lists them) are llama.cpp
0c1e570 built with its Vulkan backend, on Mesa's software Vulkan driver (lavapipe), a real GPU
backend's allocator, buffers and op offload: `Vulkan0` weights, KV and compute, the `Vulkan_Host`
compute buffer on the host. Each run's own command line (its log's first line) is read as llama.cpp
reads it and asked over a one-GPU machine; every buffer llama.cpp printed must come out within 1 %
(compute from llama.cpp's four-decimal re-check), and nothing it did not allocate may be predicted.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from recorded_models import load_recorded_models
from rpc_runs import printed
from vulkan_runs import RUNS, predicted

from gguf_budget.core.model.spec import ModelSpec

DATA = Path(__file__).parent / "data" / "llamacpp-vulkan"
MiB = 1024 * 1024
TOLERANCE = 0.01
SLACK = 0.00501 * MiB  # half the last printed digit: 0.125 MiB prints as 0.12, a printed 0.00 is below 5 KiB


@pytest.fixture(scope="module")
def specs(tmp_path_factory) -> dict[str, ModelSpec]:
    return load_recorded_models(tmp_path_factory.mktemp("vulkan-models"))


def test_the_runs_cover_both_models_every_offload_and_both_attentions():
    assert all((DATA / f"{r.name}.log").exists() for r in RUNS)
    assert {r.model for r in RUNS} == {"smollm2", "gemma3"}
    assert {0, 99} <= {r.ngl for r in RUNS} and any(0 < r.ngl < 99 for r in RUNS)
    assert any(("-fa", "off") == r.flags[:2] for r in RUNS) and any("-np" in r.flags for r in RUNS)


@pytest.mark.parametrize("run", RUNS, ids=[r.name for r in RUNS])
def test_every_printed_buffer_is_predicted_within_one_percent(specs, run):
    text = (DATA / f"{run.name}.log").read_text()
    assert text.splitlines()[-1] == "rc=0" and "Vulkan0" in text
    want, got = printed(text), predicted(text, specs[run.model])
    for key, measured in want.items():
        guess = got.get(key, 0)
        assert abs(guess - measured) <= max(TOLERANCE * measured, SLACK), (key, guess / MiB, measured / MiB)
    for key, guess in got.items():  # and nothing llama.cpp did not allocate
        assert key in want or guess <= SLACK, (key, guess / MiB)
