"""The headline ends in an action (issue 25, item 1): "Run it:" under the banner shows the Budget plan's
runtime flags and the full load's llama-server line, each with Copy, and no command for what does not fit."""

from __future__ import annotations

from gui_support import LLAMA70B, child, open_model, settle
from PySide6.QtGui import QGuiApplication

from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.views.run_it import budget_plan_run

GIB = 1 << 30


def test_run_it_shows_and_copies_both_commands(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model())
    window.apply_request(budget=Budget.of(64 << 20))
    plan, fit = window.session.view.plan, window.session.view.fit
    assert fit.recommended is not None and not plan.impossible
    budget_text, load_text = child(window, "runItBudgetPlan"), child(window, "runItFullLoad")
    assert budget_text.text() == budget_plan_run(plan).command == f"--ram-budget 64M --ctx {plan.ctx}"
    assert load_text.text() == fit.recommended.shell
    line = child(window, "runItLine")
    assert line.y() > child(window, "banner").y()  # under the headline
    for button, expected in (("copyRunItBudgetPlan", budget_text.text()), ("copyRunItFullLoad", fit.recommended.shell)):
        QGuiApplication.clipboard().clear()
        with qtbot.waitSignal(line.copied):
            child(window, button).click()
        assert QGuiApplication.clipboard().text() == expected


def test_nothing_that_does_not_fit_can_be_copied_and_the_line_says_what_would(qtbot, make_window, write_model):
    window = make_window(probe_backend=lambda: hypothetical_machine(host_available=30 * GIB, host_total=32 * GIB))
    open_model(qtbot, window, write_model(LLAMA70B, name="seventy.gguf"))
    window.apply_request(budget=Budget.of(64 << 20), ctx=8192)
    settle(qtbot, window)
    assert window.session.view.plan.impossible and not window.session.view.fit.verdict.admitted
    assert not child(window, "copyRunItBudgetPlan").isEnabled()
    assert child(window, "runItBudgetPlan").text().startswith("no command — a budget of at least")
    line = child(window, "runItLine")
    qtbot.waitUntil(lambda: not line.ladder_pending(), timeout=20000)
    load_text = child(window, "runItFullLoad").text()
    assert load_text.startswith("no command — ") and "of this model would fit" in load_text
    assert not child(window, "copyRunItFullLoad").isEnabled()
    assert "llama-server" not in load_text
