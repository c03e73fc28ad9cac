"""The goal line (`core/explorer/goal.py`) and the session's `ApplyGoal`: a goal's words name its floors; an applied
answer is the session's next state and the line says met with the figure the screen's own full load shows; a goal
nothing meets changes nothing but the line; a knob set afterwards leaves the goal "last applied"; a state that moved
while the search ran refuses the answer; "none" and another model forget the goal."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_budget.core import load_model
from gguf_budget.core.errors import RequestError
from gguf_budget.core.explorer.goal import ctx_floor_label, goal_line, goal_phrase
from gguf_budget.core.explorer.session import (
    ApplyGoal, ClearGoal, OpenModel, Session, SetBudget, SetCtx, SetMachine,
)
from gguf_budget.core.explorer.state import AppliedGoal
from gguf_budget.core.explorer.tune import Constraints, Goal, tune
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.units import human_bytes

GiB = 1 << 30


@cache
def _model(name: str):
    return load_model(catalogue_path(find_entry(name)))


def _session(name: str = "qwen3-8b", gpu: int = 8) -> Session:
    session = Session()
    machine = hypothetical_machine(16 * GiB, gpu_count=1 if gpu else 0, gpu_total=gpu * GiB)
    session.apply(SetMachine(replace(machine, cpu_features=frozenset()), Reserves(), None, None))
    session.apply(OpenModel(_model(name), name))
    return session


def _apply(session: Session, goal: Goal, **floors: object) -> None:
    answer = tune(session.state.model, session.state, goal, Constraints(**floors))  # type: ignore[arg-type]
    session.apply(ApplyGoal(answer, session.state))


@pytest.mark.parametrize(("goal", "floors", "words"), [
    (Goal.MAX_CTX, Constraints(min_tok_s=20), "longest context at ≥ 20 tok/s"),
    (Goal.MAX_CTX, Constraints(), "longest context"),  # no speed floor; the ctx floor is where its search starts
    (Goal.MAX_SPEED, Constraints(min_ctx=32768), "fastest decode at ≥ 32,768 tokens"),
    (Goal.MAX_SLOTS, Constraints(min_ctx=8192, min_tok_s=10), "most server slots of ≥ 8,192 tokens each and ≥ 10 tok/s"),
    (Goal.LEAST_MEMORY, Constraints(min_tok_s=2.5), "least memory at ≥ 4,096 tokens and ≥ 2.5 tok/s"),
])
def test_a_goals_words_name_the_floors_that_shape_it(goal, floors, words):
    assert goal_phrase(goal, floors) == words


def test_the_context_floor_is_per_slot_only_for_max_slots():
    assert ctx_floor_label(Goal.MAX_SLOTS) == "Context per slot at least"
    assert {ctx_floor_label(g) for g in (None, Goal.MAX_CTX, Goal.MAX_SPEED, Goal.LEAST_MEMORY)} == {"Context at least"}


def test_no_goal_applied_is_no_line():
    assert goal_line(None, True) == "" and _session().view.headline.goal == ""


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(tuple(Goal)), st.sampled_from((0.0, 5.0, 20.0)), st.sampled_from((0, 8)))
def test_an_applied_answer_is_the_state_and_the_line_says_the_screens_own_figure(goal, floor, gpu):
    session = _session(gpu=gpu)
    before = session.state
    answer = tune(before.model, before, goal, Constraints(min_tok_s=floor))  # type: ignore[arg-type]
    session.apply(ApplyGoal(answer, before))
    line, load = session.view.headline.goal, session.view.full_load
    assert line.startswith(f"Goal: {goal_phrase(goal, answer.constraints)} — ")
    if answer.best is None:  # no knob moved: only the goal is new
        assert replace(session.state, goal=None) == before and line.endswith(f"not met; {answer.binding}")
        return
    assert replace(session.state, goal=None) == replace(answer.best.state, goal=None)
    assert load is not None and (load.ctx, load.fit.gpu_layers) == (answer.best.ctx, answer.best.load.fit.gpu_layers)
    shown = {Goal.MAX_CTX: f"{load.ctx:,} tokens at ≈ {load.speed.tok_s:.1f} tok/s",
             Goal.MAX_SPEED: f"≈ {load.speed.tok_s:.1f} tok/s at {load.ctx:,} tokens",
             Goal.MAX_SLOTS: f"{session.state.server.n_parallel} slot", Goal.LEAST_MEMORY: human_bytes(answer.best.memory)}
    assert " — met: " in line and shown[goal] in line


def test_a_knob_set_afterwards_leaves_the_goal_last_applied_and_the_budget_does_not():
    session = _session()
    _apply(session, Goal.MAX_CTX, min_tok_s=5.0)
    met = session.view.headline.goal
    assert " — met: " in met
    session.apply(SetBudget(Budget.of(3 * GiB)))  # the Budget plan's knob: the full load the goal set is the same
    assert session.view.headline.goal == met
    session.apply(SetCtx(8192))
    stale = session.view.headline.goal
    assert stale.startswith("Goal: longest context at ≥ 5 tok/s — last applied (met: ") and "changed since" in stale
    session.apply(SetCtx(session.state.goal.settings.ctx))  # set back by hand: the answer's settings again
    assert session.view.headline.goal == met


def test_an_answer_for_a_state_that_moved_is_refused_and_nothing_changes():
    session = _session()
    searched = session.state
    answer = tune(searched.model, searched, Goal.MAX_SPEED, Constraints())  # type: ignore[arg-type]
    session.apply(SetCtx(12288))  # the person typed a ctx while the search ran
    state, view = session.state, session.view
    with pytest.raises(RequestError, match="changed while the goal was searched"):
        session.apply(ApplyGoal(answer, searched))
    assert (session.state, session.view) == (state, view) and session.state.ctx == 12288


def test_none_and_another_model_forget_the_goal_and_keep_the_knobs():
    session = _session()
    _apply(session, Goal.LEAST_MEMORY)
    applied = session.state
    assert isinstance(applied.goal, AppliedGoal)
    session.apply(ClearGoal())
    assert session.state == replace(applied, goal=None) and session.view.headline.goal == ""
    _apply(session, Goal.MAX_SPEED)
    session.apply(OpenModel(_model("llama-3.2-1b-instruct"), "other"))
    assert session.state.goal is None and session.view.headline.goal == ""
