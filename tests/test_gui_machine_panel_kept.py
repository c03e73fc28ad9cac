"""The machine panel finds its words once a full load (`machine_panel` Rule 1, `command_box` Rule 1): a drag back over
a ctx met before hands the panel the full load it had, and it shows the same rows without asking the core's views
again, but the claims (their snapshot's age moves on). What it shows is what a fresh panel shows for that load."""

from __future__ import annotations

from collections import Counter

from gui_support import LLAMA70B, open_model, settle, small_machine
from PySide6.QtWidgets import QLabel

from gguf_budget.gui.qt.machine import command_box, machine_panel
from gguf_budget.gui.qt.machine.machine_panel import HardwarePanel

VIEWS = ("server_rows", "pool_bars", "band_rows", "kv_rows", "verdict_text", "session_chart", "speed_summary")


def _shown(panel: HardwarePanel) -> dict[str, object]:
    """Every named label's text, the bars' pools and the command, as the panel shows them."""
    shown: dict[str, object] = {label.objectName(): label.text() for label in panel.findChildren(QLabel)
                                if label.objectName()}
    shown["bars"] = [panel.host_bar.pool(), *(bar.pool() for bar in panel.gpu_bars)]
    shown["command"] = panel.command.text.toPlainText()
    return shown


def test_a_full_load_met_again_is_drawn_from_what_was_found(qtbot, make_window, write_model, monkeypatch):
    window = make_window(probe_backend=small_machine)
    open_model(qtbot, window, write_model(LLAMA70B, name="70b.gguf"))
    calls = Counter[str]()
    for name in (*VIEWS, "claim_rows"):
        real = getattr(machine_panel, name)
        monkeypatch.setattr(machine_panel, name, lambda *a, _real=real, _name=name: (calls.update([_name]), _real(*a))[1])
    real_text = command_box.program_text
    monkeypatch.setattr(command_box, "program_text", lambda *a: (calls.update(["program_text"]), real_text(*a))[1])
    panel = window.body.hardware
    loads, shown = [], []
    for ctx in (8192, 16384, 8192, 16384):
        window.apply_request(ctx=ctx)
        settle(qtbot, window)
        loads.append(window.session.view.full_load)
        shown.append(_shown(panel))
    assert loads[2] is loads[0] and loads[3] is loads[1]  # the explorer keeps the full loads of ctxs met before
    assert all(0 < calls[name] <= 2 for name in (*VIEWS, "program_text")), calls  # once a load (old: each draw)
    assert calls["claim_rows"] == 4
    assert shown[2] == shown[0] and shown[3] == shown[1] and shown[0] != shown[1]
    fresh = HardwarePanel()
    qtbot.addWidget(fresh)
    fresh.show_snapshot(loads[1].fit.snapshot)
    fresh.show_full_load(loads[1])
    assert _shown(fresh) == shown[3]
