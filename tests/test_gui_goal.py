"""The Goal control in the real window: each goal sets the knobs `gguf-budget tune --json` answers for the same model
and machine, the headline says the goal met; a goal nothing meets names the binding constraint and changes no knob;
Cancel changes nothing; a knob set by hand afterwards leaves the goal as last applied, never searched again.

The window runs on a typed machine (6.4 GiB free, no GPU, no CPU kernel features; the default 6 GiB host reserve leaves
the model a few hundred MiB, so the context and the slots are bounded by memory) and `tune` is asked about the same
machine with the same flags.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from gguf_factory import ArchDesc
from gui_support import GIB, child, settle, window_on_typed_cpu, type_into
from PySide6.QtCore import Qt, QThreadPool

from gguf_budget.core.explorer.goal import CANCELLED, GOAL_CHOICES
from gguf_budget.core.explorer.tune import Goal
from gguf_budget.gui.cli import main

DESC = ArchDesc(name="goal-llama", n_layer=8, n_embd=1024, n_ff=2816, n_head=16, n_head_kv=4, n_vocab=16384,
                context_length=32768)
AVAILABLE = int(6.4 * GIB)
FLAGS = ["--host-available", str(AVAILABLE), "--no-gpu", "--cpu-features", "none", "--no-measure"]
FLOORS = {Goal.MAX_CTX: (5.0, 4096), Goal.MAX_SPEED: (0.0, 8192), Goal.MAX_SLOTS: (5.0, 2048),
          Goal.LEAST_MEMORY: (0.0, 4096)}


@pytest.fixture
def window(qtbot, make_window, write_model):
    w = window_on_typed_cpu(qtbot, make_window, write_model(DESC, "goal-llama.gguf"), AVAILABLE)
    qtbot.waitUntil(lambda: w.bandwidths_measured(), timeout=10000)
    settle(qtbot, w)
    return w


def tune_json(capsys, path, goal: Goal, min_tok_s: float, min_ctx: int) -> dict:
    code = main(["tune", str(path), *FLAGS, "--goal", goal.value, "--min-tok-s", str(min_tok_s),
                 "--min-ctx", str(min_ctx), "--json"])
    answer = json.loads(capsys.readouterr().out)
    assert code == (0 if answer["best"] is not None else 3)
    return answer


def choose(qtbot, window, goal: Goal | None, min_tok_s: float, min_ctx: int) -> None:
    """Type the floors and pick the goal in the box with the keyboard, as a person would; wait for the answer."""
    control = window.body.goal
    control.min_tok_s.setValue(min_tok_s)
    control.min_ctx.setValue(min_ctx)
    control.goal.setFocus()
    target = GOAL_CHOICES.index(goal)
    key = Qt.Key.Key_Down if target > control.goal.currentIndex() else Qt.Key.Key_Up
    while control.goal.currentIndex() != target:
        qtbot.keyClick(control.goal, key)  # each step is a choice: only the last search counts
    qtbot.waitUntil(lambda: not window.goal.worker.busy, timeout=30000)


def knob_words(window) -> dict[str, object]:
    """The knobs the answer sets, as the widgets show them and as `tune --json` words them."""
    hardware, state = window.body.hardware, window.session.state
    ub = hardware.engine.ubatch.value() or 512
    words = [f"-ctk/-ctv {window.body.knobs.kv_type.currentText()}", f"-ub {ub}"]
    moe = hardware.engine.n_cpu_moe.value()
    words += [f"--n-cpu-moe {moe}"] if moe >= 0 else []
    words += [f"--cache-ram {state.server.cache_ram_mib}"] if state.server.cache_ram_mib is not None else []
    return {"ctx": window.body.plan.context.requested_ctx(), "slots": hardware.server.parallel.value(),
            "settings": words, "gpu_layers": window.session.view.full_load.fit.gpu_layers,
            "command": list(window.session.view.full_load.fit.command.argv)}


@pytest.mark.parametrize("goal", tuple(Goal))
def test_each_goal_sets_the_knobs_tune_answers_and_the_headline_says_it_is_met(qtbot, capsys, window, goal):
    min_tok_s, min_ctx = FLOORS[goal]
    answer = tune_json(capsys, window.model_path, goal, min_tok_s, min_ctx)
    best = answer["best"]
    assert best is not None
    choose(qtbot, window, goal, min_tok_s, min_ctx)
    shown = knob_words(window)
    assert shown == {k: best[k] for k in shown}
    assert window.session.state.server.cache_ram_mib == (0 if "--cache-ram 0" in best["settings"] else None)
    line = child(window, "headlineGoal")
    assert line.isVisible() and line.text().startswith("Goal: ") and " — met: " in line.text()
    if goal is Goal.MAX_CTX:
        assert line.text() == (f"Goal: longest context at ≥ 5 tok/s — met: {best['ctx']:,} tokens at "
                               f"≈ {best['tok_s']:.1f} tok/s")
    assert window.messages.current() == line.text()


def test_a_knob_set_by_hand_leaves_the_goal_as_last_applied_and_searches_nothing(qtbot, capsys, window):
    choose(qtbot, window, Goal.MAX_CTX, 5.0, 4096)
    applied = window.session.state.goal
    type_into(qtbot, window, "ctxEdit", "8192")
    settle(qtbot, window)
    assert window.session.state.ctx == 8192 and window.session.state.goal is applied
    assert not window.goal.worker.busy
    text = child(window, "headlineGoal").text()
    assert text.startswith("Goal: longest context at ≥ 5 tok/s — last applied (met: ") and "changed since" in text
    assert window.body.goal.chosen() is Goal.MAX_CTX


def test_a_goal_nothing_meets_names_the_binding_constraint_and_changes_no_knob(qtbot, capsys, window):
    answer = tune_json(capsys, window.model_path, Goal.MAX_SPEED, 100_000.0, 4096)
    assert answer["best"] is None and answer["binding"].startswith("speed: ")
    before = window.session.state
    choose(qtbot, window, Goal.MAX_SPEED, 100_000.0, 4096)
    after = window.session.state
    assert after.goal is not None and replace(after, goal=None) == before
    text = child(window, "headlineGoal").text()
    assert text == f"Goal: fastest decode at ≥ 4,096 tokens and ≥ 100000 tok/s — not met; {answer['binding']}"


def test_cancel_leaves_the_state_and_the_box_as_they_were(qtbot, window):
    before = window.session.state
    control = window.body.goal
    control.goal.setCurrentIndex(GOAL_CHOICES.index(Goal.MAX_SLOTS))
    control.apply.click()
    assert window.goal.worker.busy and control.cancel.isEnabled()
    control.cancel.click()  # no event loop turn between: the search cannot have answered yet
    QThreadPool.globalInstance().waitForDone(30000)
    qtbot.wait(50)  # the dropped answer's queued signal is delivered, and ignored
    assert window.session.state == before and window.messages.current() == CANCELLED
    assert control.chosen() is None and not control.cancel.isEnabled()
    assert not child(window, "headlineGoal").isVisible()


def test_none_forgets_the_goal_and_keeps_the_knobs(qtbot, window):
    choose(qtbot, window, Goal.LEAST_MEMORY, 0.0, 4096)
    applied = window.session.state
    choose(qtbot, window, None, 0.0, 4096)
    assert window.session.state == replace(applied, goal=None)
    assert not child(window, "headlineGoal").isVisible()


def test_a_setting_typed_while_the_search_runs_is_kept_and_the_goal_searched_again_over_it(qtbot, window):
    control = window.body.goal
    control.goal.setCurrentIndex(GOAL_CHOICES.index(Goal.MAX_CTX))
    control.apply.click()
    window.body.knobs.prompt.setValue(3000)  # typed before the search can answer (no event loop turn yet)
    window.commit_controls()
    qtbot.waitUntil(lambda: window.session.state.goal is not None and not window.goal.worker.busy, timeout=30000)
    state = window.session.state
    assert state.prompt_tokens == 3000 and state.goal.settings.prompt_tokens == 3000
    assert " — met: " in child(window, "headlineGoal").text()
