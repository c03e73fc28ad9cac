"""The window and its docks draw one session: budgets that answer "this machine", per-model memory, exports never stale."""

from __future__ import annotations

import ast
import csv
from importlib.resources import files
from pathlib import Path

from gui_support import child, open_model, settle, small_machine, type_into
from gguf_factory import ArchDesc

from gguf_budget.core.explorer.dock_inputs import sweep_inputs, sweep_of
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.machine.usable import usable_ram
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.units import human_bytes

MiB = 1 << 20
DEMO = Path(str(files("gguf_budget.resources") / "demo-tinyllama-1.1b-chat-q4_k_m.skeleton.gguf"))
LLAMA8B = catalogue_path(find_entry("llama-3.1-8b-instruct"))
USABLE = usable_ram(small_machine(), Reserves().host)
GUI = Path(__file__).resolve().parent.parent / "gui" / "qt"
WINDOW_GETTERS = {"current_model", "current_plan", "current_speed", "speed_inputs", "request", "snapshot", "reserves",
                  "state", "current_view", "current_fit", "apply_request", "settings"}


def test_an_8b_opened_after_the_demo_opens_at_this_machines_usable_ram(qtbot, make_window):
    """The issue's case: the demo's 384 MiB followed the person to an 8B ('FEASIBLE — SLOW … ctx 640')."""
    window = make_window()
    qtbot.waitUntil(lambda: window.session.state.machine is not None)
    open_model(qtbot, window, DEMO)
    window.apply_request(budget=Budget.of(384 * MiB))
    open_model(qtbot, window, LLAMA8B)
    assert window.session.view.plan.budget == Budget.of(USABLE)
    assert child(window, "budgetEdit").text() == human_bytes(USABLE)


def test_budget_and_cap_are_remembered_per_model_across_runs(qtbot, make_window, settings_store, write_model):
    first = make_window(settings_store)
    qtbot.waitUntil(lambda: first.session.state.machine is not None)
    open_model(qtbot, first, DEMO)
    first.apply_request(budget=Budget.of(384 * MiB))
    type_into(qtbot, first, "ctxCapEdit", "1024")
    settle(qtbot, first)
    assert first.session.state.request().ctx_cap == 1024
    other = write_model()
    open_model(qtbot, first, other)
    assert (first.session.state.request().ctx_cap, first.session.view.plan.budget) == (None, Budget.of(USABLE))
    assert child(first, "ctxCapEdit").text() == ""
    first.close()

    second = make_window(settings_store)
    qtbot.waitUntil(lambda: second.session.state.machine is not None)
    open_model(qtbot, second, DEMO)
    assert (second.session.view.plan.budget, second.session.state.request().ctx_cap) == (Budget.of(384 * MiB), 1024)
    assert child(second, "ctxCapEdit").text() == "1024"
    second.findChild(type(second.reset_action), "resetToMachineAction").trigger()
    assert (second.session.view.plan.budget, second.session.state.request().ctx_cap) == (Budget.of(USABLE), None)


def test_the_sweep_export_is_the_current_models_even_with_the_dock_hidden(qtbot, make_explorer, write_model, tmp_path):
    """Export ▸ Sweep with the dock hidden wrote the sweep of a model opened earlier under the current name."""
    explorer = make_explorer()
    window, whatif = explorer.window, explorer.whatif
    qtbot.waitUntil(lambda: window.session.state.machine is not None)
    whatif.sweep_dock.show()
    whatif.sweep_dock.raise_()
    with qtbot.waitSignal(whatif.sweep.sweepFinished, timeout=20000):
        open_model(qtbot, window, write_model())
    whatif.sweep_dock.hide()
    second = open_model(qtbot, window, write_model(ArchDesc(n_layer=12, n_embd=96), name="second.gguf"))
    export = whatif.export_menu
    export.update_enabled()
    assert not export.actions_by_kind["sweep-png"].isEnabled()
    assert "another model or request" in export.actions_by_kind["sweep-png"].toolTip()
    assert export.export("sweep-csv", str(tmp_path / "s.csv"))
    with open(tmp_path / "s.csv", newline="") as f:
        written = [(int(row["budget"]), int(row["n_layer"])) for row in csv.DictReader(f)]
    expected = sweep_of(sweep_inputs(window.session.state), mark=window.session.state.budget)
    assert written == [(r.budget, second.n_layer) for r in expected.rows] and second.n_layer == 12


def test_no_dock_or_menu_reads_the_windows_getters():
    """The docks read the session; the window's getters are for the launcher and tests only."""
    offenders = []
    for folder in ("whatif", "quants", "library", "evidence", "menus", "server"):
        for path in sorted((GUI / folder).glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Attribute) and node.attr in WINDOW_GETTERS:
                    owner = ast.unparse(node.value)
                    if owner.endswith(("host", "window")):
                        offenders.append(f"{path.relative_to(GUI)}:{node.lineno} {owner}.{node.attr}")
    assert offenders == []


def test_a_models_full_load_and_thresholds_are_made_on_the_loading_thread(qtbot, make_window, monkeypatch):
    """Opening a model is the heavy change (the full load's ctx search on an 8B: tens of ms, more on a hostile
    header): the GUI thread only applies what the loading thread prepared."""
    import threading

    from gguf_budget.core.explorer import derive as derive_module

    threads = []
    real = derive_module.full_load

    def recording(*args, **kw):
        threads.append(threading.current_thread() is threading.main_thread())
        return real(*args, **kw)

    monkeypatch.setattr(derive_module, "full_load", recording)
    window = make_window()
    qtbot.waitUntil(lambda: window.session.state.machine is not None)
    open_model(qtbot, window, LLAMA8B)
    assert threads == [False] and window.session.view.fit is not None
