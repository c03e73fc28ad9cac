"""The explorer session: one Qt-free owner of what every screen shows; budgets that answer "this machine"."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_budget.core import hypothetical_machine, load_model
from gguf_budget.core.errors import RequestError
from gguf_budget.core.explorer.derive import derive, initial_budget
from gguf_budget.core.explorer.dock_inputs import ladder_request, library_settings, sweep_inputs
from gguf_budget.core.explorer.model_key import model_key, spec_key
from gguf_budget.core.explorer.persist import memory_dict, memory_from
from gguf_budget.core.explorer.session import (
    MEMORY_LIMIT, Controls, ModelChoice, ModelMemory, OpenModel, Probed, ResetToMachine, Session, SetBandwidths,
    SetBudget, SetCtx, SetCtxCap, SetKnobs, SetMachine, SetTypedBandwidths,
)
from gguf_budget.core.explorer.state import BudgetOrigin, TypedBandwidths
from gguf_budget.core.machine.bandwidth import Bandwidth, Bandwidths, BandwidthSource
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.machine.usable import usable_ram
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.plan.types import HeadMode

GiB, MiB = 1 << 30, 1 << 20
DEMO_BUDGET = 384 * MiB
MACHINE = hypothetical_machine(int(23.5 * GiB), host_total=32 * GiB)


DEMO_PATH = Path(str(files("gguf_budget.resources") / "demo-tinyllama-1.1b-chat-q4_k_m.skeleton.gguf"))


@pytest.fixture(scope="module")
def demo():
    return load_model(DEMO_PATH)


def on_machine() -> Session:
    session = Session()
    session.apply(SetMachine(MACHINE, Reserves(), None, None))
    return session


def test_a_model_opens_at_this_machines_usable_ram_and_not_at_the_last_models_budget(demo, llama8b):
    """The issue's case: the demo's 384 MiB followed the person to an 8B (FEASIBLE — SLOW at ctx 640)."""
    session = on_machine()
    session.apply(OpenModel(demo, "a" * 64))
    session.apply(SetBudget(Budget.of(DEMO_BUDGET)))
    view = session.apply(OpenModel(llama8b, "b" * 64))
    usable = usable_ram(MACHINE, Reserves().host)
    assert view.state.budget == Budget.of(usable) and view.state.budget_origin is BudgetOrigin.MACHINE
    assert view.plan is not None and view.plan.budget == Budget.of(usable)


def knobs(session: Session, **values: object) -> SetKnobs:
    """The knobs as they are in `session`, `values` over them."""
    s = session.state
    now = {"n_buffers": s.n_buffers, "head_mode": s.head_mode, "kv_type": s.kv_type, "force": s.force,
           "slow_below_tok_s": s.slow_below_tok_s, "prompt_tokens": s.prompt_tokens}
    return SetKnobs(**{**now, **values})


def test_budget_ctx_and_cap_are_remembered_per_model(demo, llama8b):
    session = on_machine()
    session.apply(OpenModel(demo, "a" * 64))
    session.apply(Controls((SetBudget(Budget.of(DEMO_BUDGET)), SetCtxCap(1024))))
    session.apply(OpenModel(llama8b, "b" * 64))
    assert (session.state.ctx_cap, session.state.ctx) == (None, None)  # the demo's cap stays with the demo
    session.apply(SetCtx(8192))
    view = session.apply(OpenModel(demo, "a" * 64))
    assert (view.state.budget, view.state.ctx_cap, view.state.ctx) == (Budget.of(DEMO_BUDGET), 1024, None)
    assert view.state.budget_origin is BudgetOrigin.CHOSEN
    back = session.apply(OpenModel(llama8b, "b" * 64))
    assert back.state.ctx == 8192 and back.state.budget_origin is BudgetOrigin.MACHINE


def test_a_machine_budget_follows_the_machine_and_its_reserve_a_chosen_one_stays(demo):
    session = on_machine()
    session.apply(OpenModel(demo, "a" * 64))
    bigger = hypothetical_machine(60 * GiB, host_total=64 * GiB)
    session.apply(SetMachine(bigger, Reserves(host=2 * GiB), None, None))
    assert session.state.budget == Budget.of(58 * GiB)
    session.apply(SetBudget(Budget.of(300 * MiB)))
    session.apply(SetMachine(MACHINE, Reserves(), None, None))
    assert session.state.budget == Budget.of(300 * MiB)


def test_without_a_machine_the_budget_is_provisional_until_one_answers(demo):
    session = Session()
    view = session.apply(OpenModel(demo, "a" * 64))
    assert view.state.budget_origin is BudgetOrigin.PROVISIONAL
    assert view.state.budget == Budget.of(initial_budget(view.thresholds))
    after = session.apply(SetMachine(MACHINE, Reserves(), None, None))
    assert after.state.budget == Budget.of(usable_ram(MACHINE, Reserves().host))


def test_reset_to_this_machine_forgets_what_was_set_for_this_model(demo):
    session = on_machine()
    session.apply(OpenModel(demo, "a" * 64))
    session.apply(Controls((SetBudget(Budget.of(DEMO_BUDGET)), SetCtx(512), SetCtxCap(1024))))
    view = session.apply(ResetToMachine())
    assert view.state.budget_origin is BudgetOrigin.MACHINE and (view.state.ctx, view.state.ctx_cap) == (None, None)
    assert session.memory.recall("a" * 64) is None


def test_a_change_that_cannot_be_made_leaves_the_state_and_view(demo):
    session = on_machine()
    session.apply(OpenModel(demo, "a" * 64))
    before_state, before_view = session.state, session.view
    seen = []
    session.subscribe(seen.append)
    with pytest.raises(RequestError):
        session.apply(knobs(session, kv_type="q9_9"))
    assert (session.state, session.view, seen) == (before_state, before_view, [])


def test_observers_hear_every_change_that_moved_the_state_and_nothing_else(demo):
    session = on_machine()
    seen = []
    session.subscribe(seen.append)
    session.apply(OpenModel(demo, "a" * 64))
    session.apply(SetCtx(512))
    session.apply(SetCtx(512))
    assert [v.state.ctx for v in seen] == [None, 512] and seen[-1] is session.view


def test_a_tied_model_shows_auto_and_the_streamed_head_comes_back_with_the_next_untied_one(demo, llama8b, tmp_path):
    from gguf_factory import ArchDesc, write_gguf

    tied = load_model(write_gguf(tmp_path / "tied.gguf", ArchDesc(tied=True), mode="header_only")[0])
    session = on_machine()
    session.apply(OpenModel(llama8b, "b" * 64))
    session.apply(knobs(session, head_mode=HeadMode.STREAM))
    assert session.apply(OpenModel(tied, "c" * 64)).state.head_mode is HeadMode.AUTO
    session.apply(knobs(session, head_mode=HeadMode.AUTO))  # the tied model's combo says auto: not a new choice
    assert session.apply(OpenModel(llama8b, "b" * 64)).state.head_mode is HeadMode.STREAM


def test_the_session_view_is_derive_of_its_state(demo):
    session = on_machine()
    session.apply(OpenModel(demo, "a" * 64))
    view = session.apply(Controls((SetBudget(Budget.of(200 * MiB)), SetCtx(1024))))
    fresh = derive(session.state)
    assert (view.plan, view.headline, view.full_load.fit) == (fresh.plan, fresh.headline, fresh.full_load.fit)


def test_the_model_key_is_the_header_fingerprint_and_survives_a_rename(tmp_path):
    copy = tmp_path / "renamed.gguf"
    copy.write_bytes(DEMO_PATH.read_bytes())
    a, b = load_model(DEMO_PATH), load_model(copy)
    assert model_key(a) == model_key(b) != spec_key(a)
    assert len(model_key(a)) == 64 and len(spec_key(a)) == 64


choices = st.builds(
    ModelChoice,
    st.one_of(st.none(), st.just(Budget.unlimited()), st.integers(1, 1 << 40).map(Budget.of)),
    st.one_of(st.none(), st.integers(1, 1 << 20)), st.one_of(st.none(), st.integers(1, 1 << 20)),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.text("0123456789abcdef", min_size=64, max_size=64), choices), max_size=80))
def test_the_memory_round_trips_through_its_stored_form_and_keeps_the_latest(rows):
    memory = ModelMemory()
    for key, choice in rows:
        memory.remember(key, choice)
    back, refused = memory_from({k: {n: str(v) for n, v in row.items()} for k, row in memory_dict(memory).items()})
    assert refused == () and back.rows() == memory.rows() and len(back.rows()) <= MEMORY_LIMIT
    latest = {key: choice for key, choice in rows}
    for key in list(memory.rows())[-10:]:
        assert memory.recall(key) == latest[key]


@pytest.mark.parametrize("key, row", [
    ("../etc", {"budget": "1"}), ("a" * 64, {"budget": "-4"}), ("a" * 64, {"ctx": "lots"}),
    ("a" * 64, {"budget": "1", "colour": "red"}),
])
def test_a_stored_row_that_is_not_valid_is_refused_whole(key, row):
    memory, refused = memory_from({key: row, "b" * 64: {"budget": "0", "used": "1"}})
    assert [r.key for r in refused] == [f"models/{key}"]
    assert memory.rows() == {"b" * 64: ModelChoice(Budget.unlimited())}


@pytest.mark.parametrize("budget_set, follows_machine", [(True, False), (False, True)])
def test_a_budget_set_to_the_provisional_one_is_kept_when_the_machine_answers(demo, budget_set, follows_machine):
    """`gguf-budget MODEL --budget X` where X is the model's provisional budget (the probe not yet answered): the
    budget is the person's and stays; the same value passed along with a ctx change is not a choice."""
    session = Session()
    provisional = session.apply(OpenModel(demo, "c" * 64)).state.budget
    assert session.state.budget_origin is BudgetOrigin.PROVISIONAL
    session.apply(Controls(((SetBudget(provisional),) if budget_set else ()) + (SetCtx(1024),)))
    view = session.apply(SetMachine(MACHINE, Reserves(), None, None))
    usable = Budget.of(usable_ram(MACHINE, Reserves().host))
    assert view.state.budget == (usable if follows_machine else provisional)
    assert view.state.budget_origin is (BudgetOrigin.MACHINE if follows_machine else BudgetOrigin.CHOSEN)


def test_the_probed_machine_is_judged_unless_a_hypothetical_one_is_chosen(demo):
    """The window's old choice (probed or hypothetical) is the session's: a probe answering while a hypothetical
    machine is ticked changes nothing judged, and unticking it judges the probe's answer again."""
    probed = hypothetical_machine(8 * GiB, host_total=16 * GiB)
    session = Session()
    session.apply(OpenModel(demo, "d" * 64))
    session.apply(Probed(probed))
    assert session.state.machine is probed and session.view.usable_ram == usable_ram(probed, Reserves().host)
    session.apply(SetMachine(MACHINE, Reserves(), None, None))
    session.apply(Probed(hypothetical_machine(4 * GiB, host_total=8 * GiB)))
    assert session.state.machine is MACHINE and session.state.hypothetical is MACHINE
    session.apply(SetMachine(None, Reserves(), None, None))
    assert session.state.machine is session.state.probed and session.state.machine.host_available == 4 * GiB


def test_typed_bandwidths_stay_over_the_measured_ones_and_an_emptied_tier_reads_the_measured_one_again():
    measured = Bandwidths(ram=Bandwidth(30 * GiB, BandwidthSource.MEASURED, "measured here"))
    session = Session()
    session.apply(SetTypedBandwidths(TypedBandwidths(ram=10**11)))
    assert session.state.bandwidths.ram.bytes_per_s == 10**11 and session.state.measured_bandwidths is None
    session.apply(SetBandwidths(measured))
    assert session.state.bandwidths.ram.bytes_per_s == 10**11 and session.state.measured_bandwidths is measured
    session.apply(SetTypedBandwidths(TypedBandwidths()))
    assert session.state.bandwidths.ram == measured.ram


@pytest.mark.parametrize("value", [0, -1, 1 << 60, 2.5, "20G", True])
def test_a_typed_bandwidth_out_of_range_is_refused_where_it_is_typed(value):
    with pytest.raises(RequestError):
        TypedBandwidths(ram=value)


def test_the_view_publishes_every_docks_inputs_built_once_with_one_key(demo):
    """A change no dock reads (the slow threshold) publishes the very same inputs object; a ctx publishes new ones,
    equal to what each dock would build from the state itself."""
    session = on_machine()
    session.apply(OpenModel(demo, "d" * 64))
    first = session.view.docks
    assert first is not None and first.sweep == sweep_inputs(session.state)
    assert (first.ladder, first.library) == (ladder_request(session.state), library_settings(session.state))
    knobs = SetKnobs(n_buffers=2, head_mode=HeadMode.AUTO, kv_type=session.state.kv_type, force=False,
                     slow_below_tok_s=7.5, prompt_tokens=session.state.prompt_tokens)
    session.apply(knobs)
    assert session.state.slow_below_tok_s == 7.5 and session.view.docks is first
    session.apply(SetCtx(1024))
    moved = session.view.docks
    assert moved is not first and moved.ladder.ctx == 1024 and moved.sweep.request.ctx == 1024
    assert moved == derive(session.state).docks


def test_a_new_model_is_heard_from_the_session_after_every_view_observer_drew_it(demo, llama8b):
    session, heard = on_machine(), []
    session.subscribe(lambda view: heard.append(("view", view.state.model)))
    session.subscribe_models(lambda model: heard.append(("model", model)))
    session.apply(OpenModel(demo, "d" * 64))
    session.apply(SetCtx(1024))
    session.apply(OpenModel(llama8b, "e" * 64))
    assert heard == [("view", demo), ("model", demo), ("view", demo), ("view", llama8b), ("model", llama8b)]
