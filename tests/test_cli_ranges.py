"""Every number a command line takes has a stated range (`core.ranges`), checked before anything
is computed: outside it, one line and exit 2 — never an `OverflowError`, never 22 seconds of
work for a million hypothetical GPUs."""

from __future__ import annotations

import pytest
from gguf_factory import ArchDesc, write_gguf
from hostile_support import assert_one_line_exit_2, run_cli

from gguf_budget.core.errors import RequestError
from gguf_budget.core.ranges import BUDGET, BUFFERS, CONTEXT, GPU_COUNT, GPU_LAYERS, MEMORY, Range
from gguf_budget.gui.cli import main

HUGE = "1" + "0" * 310  # 10^310: past any float


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> str:
    return str(write_gguf(tmp_path_factory.mktemp("ranges") / "m.gguf", ArchDesc(), "header_only")[0])


OUT_OF_RANGE = [
    (["fit", "--no-gpu", "--ctx", HUGE], "--ctx: a context must be from 1 to 16,777,216 tokens, got 100000000000…"),
    (["fit", "--no-gpu", "--ctx", "0"], "--ctx: a context must be from 1 to 16,777,216 tokens, got 0"),
    (["fit", "--gpu-free", "8G", "--gpu-count", "1000000"], "--gpu-count: a GPU count must be from 1 to 64 GPUs"),
    (["fit", "--no-gpu", "--gpu-layers", "65537"], "--gpu-layers: the GPU layers must be from 0 to 65,536 layers"),
    (["fit", "--no-gpu", "--gpu-layers", "-1"], "--gpu-layers"),
    (["fit", "--host-available", "2P", "--no-gpu"], "--host-available: a memory size must be from 0 B to 1.00 PiB"),
    (["fit", "--no-gpu", "--host-reserve", "1e3"], "--host-reserve: not a size"),
    (["plan", "--budget", "2P"], "--budget: a RAM budget must be from 0 B to 1.00 PiB, got 2251799813685248"),
    (["plan", "--budget", "1G", "--ctx", HUGE], "--ctx: a context must be"),
    (["plan", "--budget", "1G", "--buffers", "9"], "--buffers: a ring depth must be from 1 to 8 buffers"),
    (["sweep", "--budgets", "1G:2P:1P"], "a RAM budget must be from 0 B to 1.00 PiB"),
]


@pytest.mark.parametrize("args, message", OUT_OF_RANGE)
def test_numbers_outside_their_range_are_one_line_exit_2(model, args, message):
    assert_one_line_exit_2(run_cli([args[0], model, *args[1:]]), message)


def test_the_window_refuses_a_budget_it_could_not_show(model):
    assert_one_line_exit_2(run_cli([model, "--budget", "2P"]), "--budget: a RAM budget must be from 0 B to 1.00 PiB")
    assert_one_line_exit_2(run_cli([model, "--ctx", HUGE]), "--ctx: a context must be")


def test_the_ends_of_each_range_are_accepted(model, capsys):
    assert main(["fit", model, "--no-gpu", "--host-available", "1P", "--ctx", str(CONTEXT.high),
                 "--gpu-layers", str(GPU_LAYERS.high)]) in (0, 3)
    assert main(["plan", model, "--budget", "1P", "--ctx", "1", "--buffers", "8"]) == 0
    assert main(["fit", model, "--gpu-free", "8G", "--gpu-count", "64", "--host-available", "64G"]) in (0, 3)
    capsys.readouterr()


def test_help_states_the_ranges(capsys):
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "from 1 to 64 GPUs" in text and "from 1 to 16,777,216 tokens" in text and "from 0 to 65,536 layers" in text


@pytest.mark.parametrize("limits", [BUDGET, MEMORY, CONTEXT, GPU_LAYERS, GPU_COUNT, BUFFERS])
def test_each_range_is_closed_and_refuses_what_is_not_a_whole_number(limits: Range):
    assert limits.check(limits.low) == limits.low and limits.check(limits.high) == limits.high
    for bad in (limits.low - 1, limits.high + 1, True, 1.0, "1", None):
        with pytest.raises(RequestError, match=f"^{limits.what} must be from "):
            limits.check(bad)
