"""What the window says stays said (issue 36, item 5): a persistent message area with a short history instead of
five-second status tips; the side panel keeps its scroll position across actions, and a refused projector's
reason stays in it while the person goes on working."""

from __future__ import annotations

import ast
from pathlib import Path

from gui_support import child, open_model, settle
from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtWidgets import QApplication, QScrollArea
from test_gui_server_knobs import GEMMA, add, machine

from gguf_budget.core.explorer.messages import HISTORY, MessageKind, MessageLog
from gguf_budget.core.machine.probe import REPROBE_IDLE_S
from gguf_budget.core.plan.budget import Budget
from gguf_budget.gui.qt.layout import SideColumn

GUI = Path(__file__).resolve().parent.parent / "gui"
GIB = 1 << 30


@given(st.lists(st.sampled_from(["a", "b", "refused", "x" * 900, "bad\x1b[31m"]), max_size=60))
def test_the_log_keeps_the_newest_messages_one_line_each(texts):
    log = MessageLog()
    for i, text in enumerate(texts):
        log = log.said(text, MessageKind.INFO, at=float(i))
    assert len(log.messages) <= HISTORY
    if texts:
        assert log.latest is not None and log.latest.at == len(texts) - 1
    assert all("\x1b" not in m.text and len(m.text) <= 420 for m in log.messages)
    assert all(a.text != b.text for a, b in zip(log.messages, log.messages[1:], strict=False))  # a repeat: one entry


def test_no_gui_module_shows_a_status_tip_that_vanishes():
    """Every message goes through the message area: no `showMessage` call is left in the GUI."""
    calls = [f"{path.relative_to(GUI)}:{node.lineno}" for path in GUI.rglob("*.py")
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Attribute) and node.attr == "showMessage"]
    assert calls == []


def test_a_failed_load_stays_on_screen_and_in_the_history(qtbot, make_window, write_model, tmp_path):
    window = make_window()
    qtbot.waitUntil(lambda: window.session.state.machine is not None)
    with qtbot.waitSignal(window.loadFailed, timeout=10000):
        window.open_path(str(tmp_path / "missing.gguf"))
    assert window.messages.current() == "Load failed; no model is open"
    assert window.statusBar().currentMessage() == ""  # no tip over it, nothing timed to hide it
    open_model(qtbot, window, write_model())
    assert window.messages.current().startswith("Loaded ")
    history = [a.text().split("  ", 1)[1] for a in child(window, "messageHistoryMenu").actions()]
    assert history[0].startswith("Loaded ") and "Load failed; no model is open" in history
    assert child(window, "messageArea").isVisible() and child(window, "messageHistory").isEnabled()


def test_the_side_panel_keeps_its_place_and_a_refused_projector_its_reason(qtbot, make_window, monkeypatch, tmp_path):
    window = make_window(probe_backend=machine)
    window.resize(1280, 720)
    qtbot.waitUntil(lambda: window.session.state.machine is not None)
    gemma = tmp_path / "gemma.gguf"
    from gguf_factory import write_gguf

    write_gguf(gemma, GEMMA, "header_only")
    open_model(qtbot, window, gemma)
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a gguf at all" * 10)
    add(qtbot, monkeypatch, window, "addVisionProjectorAction", junk)
    reason = child(window, "serverFileMessage").text()
    assert reason.startswith("Not added: ")
    column = next(c for c in window.findChildren(SideColumn) if c.widget() is window.body.hardware)
    bar = column.verticalScrollBar()
    assert bar.maximum() > 0
    bar.setValue(bar.maximum() // 2)
    place = bar.value()
    for step in (lambda: window.apply_request(budget=Budget.of(3 * GIB)), lambda: window.apply_request(ctx=4096),
                 lambda: child(window, "machineEditor").set_preset("RTX 4090"),
                 lambda: window.apply_request(budget=Budget.of(5 * GIB), ctx=8192),
                 lambda: child(window, "runtimeCombo").setCurrentText("llama-cli"),
                 lambda: window.reset_action.trigger(),
                 lambda: window.show_model(window.session.state.model)):
        step()
        settle(qtbot, window)
        qtbot.wait(20)
        QApplication.processEvents()
        assert bar.value() == place
        assert child(window, "serverFileMessage").isVisible() and child(window, "serverFileMessage").text() == reason
    assert isinstance(column, QScrollArea)


def test_reset_to_this_machine_probes_the_machine_again(qtbot, make_window, write_model):
    calls: list[int] = []

    def probe():
        calls.append(1)
        return machine()

    window = make_window(probe_backend=probe, reprobe_s=REPROBE_IDLE_S)
    qtbot.waitUntil(lambda: window.session.state.machine is not None)
    open_model(qtbot, window, write_model())
    assert window._reprobe.isActive() and window._reprobe.interval() == REPROBE_IDLE_S * 1000
    before = len(calls)
    with qtbot.waitSignal(window.hardwareProbed, timeout=10000):
        window.reset_action.trigger()
    assert len(calls) == before + 1
    with qtbot.waitSignal(window.hardwareProbed, timeout=10000):
        window._reprobe.timeout.emit()  # the idle timer's tick, without waiting a minute for it
    assert len(calls) == before + 2 and window._reprobe.isActive()
