"""llama-server's context checkpoints: where one prompt leaves them, and how big each is.

The positions follow tools/server/server-context.cpp of the pinned llama.cpp (batches end 4 + n_ubatch
and 4 tokens before a prompt's end; a checkpoint is taken before each batch within n_ubatch of the
end); the size is the SWA cache's state for one sequence. The recorded llama-server and llama-cli
runs of a sliding-window model show them in their peak RSS (tests/test_peak_rss_band.py).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st
from recorded_models import load_recorded_models

from gguf_budget.core.fit.server.checkpoints import (
    CheckpointSettings, checkpoint_bytes, checkpoint_memory, checkpoint_positions, makes_checkpoints,
)

MiB = 1 << 20


@pytest.fixture(scope="module")
def specs(tmp_path_factory):
    return load_recorded_models(tmp_path_factory.mktemp("recorded"))


CHECKPOINT_TABLE = [
    # prompt tokens, n_batch, n_ubatch, max → tokens in the cache at each checkpoint
    (0, 2048, 512, 32, ()),
    (4, 2048, 512, 32, ()),
    (29, 2048, 512, 32, (25,)),          # the batch of the last 4 tokens
    (516, 2048, 512, 32, (512,)),        # 4 + n_ubatch: one batch, then the last 4
    (3740, 2048, 512, 32, (3224, 3736)),  # ends at 3740 − 516 and 3740 − 4
    (3740, 2048, 512, 1, (3736,)),        # --ctx-checkpoints 1 keeps the newest
    (3740, 2048, 512, 0, ()),
    (3740, 256, 256, 32, (3484, 3736)),
]


@pytest.mark.parametrize("prompt, batch, ubatch, most, expected", CHECKPOINT_TABLE)
def test_checkpoint_positions(prompt, batch, ubatch, most, expected):
    assert checkpoint_positions(prompt, CheckpointSettings(most, batch, ubatch)) == expected


@given(prompt=st.integers(0, 300_000), batch=st.integers(1, 8192), ubatch=st.integers(1, 4096),
       most=st.integers(0, 64))
@settings(max_examples=200, deadline=None)
def test_checkpoints_are_few_ordered_and_inside_the_prompt(prompt, batch, ubatch, most):
    at = checkpoint_positions(prompt, CheckpointSettings(most, batch, ubatch))
    assert len(at) <= min(2, most) and list(at) == sorted(set(at)) and all(0 < p < prompt for p in at)


def test_only_sliding_window_or_recurrent_models_checkpoint(specs):
    assert makes_checkpoints(specs["gemma3"], CheckpointSettings())
    assert not makes_checkpoints(specs["gemma3"], CheckpointSettings(swa_full=True))
    assert not makes_checkpoints(specs["smollm2"], CheckpointSettings())
    assert checkpoint_memory(specs["smollm2"], "f16", 4096, CheckpointSettings()) == 0




def test_a_gemma3_checkpoint_is_its_sliding_window_of_cells(specs):
    """512 cells (the window) × 15 sliding layers × (K + V rows of 256 f16) = 7.5 MiB, plus 12 bytes a cell
    and the headers; a prompt shorter than the window holds that many cells."""
    gemma3 = specs["gemma3"]
    rows = 15 * 2 * 256 * 2
    head = 16 + 8 + 15 * 2 * 12
    assert checkpoint_bytes(gemma3, "f16", 4096) == head + 512 * (12 + rows)
    assert checkpoint_bytes(gemma3, "f16", 100) == head + 100 * (12 + rows)
    assert checkpoint_bytes(gemma3, "q8_0", 4096) == head + 512 * (12 + 15 * 2 * 272)
    assert checkpoint_memory(gemma3, "f16", 3740, CheckpointSettings()) == 2 * checkpoint_bytes(gemma3, "f16", 4096)
