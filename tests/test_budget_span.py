"""The budget slider's span is the model's and the machine's (issue 17, item 5): properties over
random real GGUF models, every ctx and knob, and the one size rule the CLI and window share."""

from __future__ import annotations

import itertools

import pytest
from arch_strategies import arch_descs
from gguf_factory import write_gguf
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import budget_thresholds, hypothetical_machine, load_model
from gguf_budget.core.explorer.budget_span import budget_span, widest_request
from gguf_budget.core.explorer.derive import derive
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.model.kv import KV_TYPES
from gguf_budget.core.units import binary_unit_note, parse_size, round_step
from gguf_budget.gui.cli import main

MiB, GiB = 1 << 20, 1 << 30
ROUND = {m * 10**k for m in (1, 2, 5) for k in range(19)}


@pytest.fixture(scope="module")
def write(tmp_path_factory):
    folder = tmp_path_factory.mktemp("span-models")
    counter = itertools.count()
    return lambda desc: load_model(write_gguf(folder / f"m{next(counter)}.gguf", desc, "header_only")[0])


@st.composite
def states(draw, model) -> ExplorerState:
    """Anything a person may set on the screen, on a machine of any size (or none yet)."""
    modes = ("auto", "resident") if model.tied_embeddings else ("auto", "resident", "stream")
    total = draw(st.none() | st.integers(1, 2048).map(lambda g: g * GiB))
    return ExplorerState(
        model=model, budget=draw(st.just(Budget.unlimited()) | st.integers(1, 1 << 40).map(Budget.of)),
        ctx=draw(st.none() | st.integers(1, 8000)), ctx_cap=draw(st.none() | st.integers(1, 8000)),
        n_buffers=draw(st.integers(1, 8)), head_mode=draw(st.sampled_from(modes)),
        kv_type=draw(st.sampled_from(tuple(KV_TYPES))), force=draw(st.booleans()),
        machine=None if total is None else hypothetical_machine(total // 2, host_total=total),
    )


@settings(max_examples=80, deadline=None)
@given(data=st.data(), desc=arch_descs())
def test_the_span_ignores_ctx_knobs_and_budget_and_holds_every_minimum(write, data, desc):
    model = write(desc)
    state = data.draw(states(model))
    total = None if state.machine is None else state.machine.host_total
    span = derive(state).budget_span
    assert span == budget_span(model, total) == derive(ExplorerState(model=model, machine=state.machine)).budget_span
    assert span.low < budget_thresholds(model, state.request())[0]
    assert span.high >= max(total or 0, budget_thresholds(model, widest_request())[1])
    assert span.low % MiB == span.high % MiB == span.step % MiB == 0 and span.step // MiB in ROUND


@settings(max_examples=40, deadline=None)
@given(data=st.data(), desc=arch_descs())
def test_a_ctx_change_keeps_the_span_of_the_previous_view(write, data, desc):
    model = write(desc)
    first = data.draw(states(model))
    second = ExplorerState(**{**first.__dict__, "ctx": data.draw(st.none() | st.integers(1, 8000))})
    assert derive(second, derive(first)).budget_span == derive(first).budget_span


@settings(max_examples=40, deadline=None)
@given(desc=arch_descs(), total_gib=st.integers(1, 2048))
def test_the_arrow_step_is_model_sized_on_any_machine(write, desc, total_gib):
    """A small model on a big machine is not one or two arrow presses from zero to all pinned."""
    model = write(desc)
    span = budget_span(model, total_gib * GiB)
    all_pinned = budget_thresholds(model, widest_request())[1]
    assert span.step == MiB or all_pinned / span.step >= 200


@given(st.floats(0, 1e18))
def test_round_steps_are_one_two_five_times_a_power_of_ten_and_never_above_what_was_asked(x):
    step = round_step(x)
    assert step in ROUND and (step <= x or step == 1) and (x < 2 or step * 2.5 > x)


@pytest.mark.parametrize("text, note", [
    ("5GB", "read 5GB as binary units: 5.00 GiB (1 GB = 1024³ bytes)"),
    ("5000MB", "read 5000MB as binary units: 4.88 GiB (1 MB = 1024² bytes)"),
    ("2 tb", "read 2 tb as binary units: 2.00 TiB (1 TB = 1024⁴ bytes)"),
    ("1KB", "read 1KB as binary units: 1.00 KiB (1 KB = 1024 bytes)"),
    ("5G", None), ("5GiB", None), ("512M", None), ("1048576", None), ("0", None), ("lots", None),
])
def test_decimal_looking_units_are_read_as_binary_and_say_so(text, note):
    assert binary_unit_note(text) == note
    if note:
        assert parse_size(text) == parse_size(text.lower().replace("b", "ib"))


def test_the_cli_says_how_it_read_gb_once_and_0_is_unlimited(capsys, gguf_file):
    path = str(gguf_file())
    assert main(["plan", path, "--budget", "5GB", "--no-measure"]) == 0
    out, err = capsys.readouterr()
    assert "peak memory ≤ 5.00 GiB" in out
    assert err.count("binary units") == 1 and f"note: {binary_unit_note('5GB')}" in err
    assert main(["plan", path, "--budget", "0", "--no-measure"]) == 0
    out, err = capsys.readouterr()
    assert "unlimited budget" in out and err == ""
