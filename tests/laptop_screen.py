"""Every dock and view state of the real window on a 1280 × 720 screen (issue 36, items 4–5), run by
tests/test_gui_laptop_screen.py in a process of its own whose offscreen platform has that one screen
(`QT_QPA_PLATFORM=offscreen:configfile=tests/data/screen-1280x720.json`; the offscreen plugin draws a
2-pixel frame around every window). The window opens as the app opens it, not resized by a test.

For each state it lists, as JSON on stdout, what a person at that screen could not see: a window whose
frame leaves the available area; a visible widget outside the screen; a text clipped, or elided without its
tooltip; a side column wider than its view; chart labels cut or overlapping (the layout matrix's checks);
and Quants or Library showing fewer than MIN_ROWS rows.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gguf_factory import MIXTRAL_8X7B, ArchDesc, write_gguf  # noqa: E402
from gui_support import assumed_bandwidths, small_machine  # noqa: E402
from PySide6.QtCore import QEventLoop, QRect, QSettings  # noqa: E402
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QDockWidget, QTableView, QTabBar, QWidget  # noqa: E402
from test_gui_layout_matrix import chart_problems, clipped_texts, sideways_problems  # noqa: E402

from gguf_budget.core.explorer.goal import GOAL_CHOICES  # noqa: E402
from gguf_budget.core.explorer.tune import Goal  # noqa: E402
from gguf_budget.core.library.config import add_folder  # noqa: E402
from gguf_budget.core.model.catalogue import catalogue_path, find_entry  # noqa: E402
from gguf_budget.core.quant.ladder import price_types  # noqa: E402
from gguf_budget.gui.qt.addons import Explorer  # noqa: E402
from gguf_budget.gui.qt.app import application, compose  # noqa: E402
from gguf_budget.resources import demo_model_path  # noqa: E402

MIN_ROWS = 12
WAIT_S = 120


def wait(done, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not done():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        QApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
        time.sleep(0.01)


def settle() -> None:
    for _ in range(5):
        QApplication.processEvents()
        time.sleep(0.02)


def global_rect(widget: QWidget) -> QRect:
    return QRect(widget.mapToGlobal(widget.rect().topLeft()), widget.size())


def inside_scroll_area(widget: QWidget) -> bool:
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractScrollArea):
            return True
        parent = parent.parentWidget()
    return False


def stale_tab_bar(top: QWidget, widget: QWidget) -> bool:
    """The tab bar Qt keeps for a group of docks that are all hidden: placed outside the window, drawn nowhere."""
    return isinstance(widget, QTabBar) and not global_rect(widget).intersects(global_rect(top))


def off_screen(window: QWidget) -> list[str]:
    """Windows whose frame leaves the available area, and visible widgets outside the screen."""
    available = window.screen().availableGeometry()
    tops = [window, *(d for d in window.findChildren(QDockWidget) if d.isVisible() and d.isFloating())]
    found = [f"{top.objectName()}: frame {top.frameGeometry().getRect()} leaves {available.getRect()}"
             for top in tops if not available.contains(top.frameGeometry())]
    for top in tops:
        for widget in top.findChildren(QWidget):
            if stale_tab_bar(top, widget):
                continue
            if (widget.isVisible() and widget.width() > 0 and not inside_scroll_area(widget)
                    and not widget.objectName().startswith("qt_") and not available.contains(global_rect(widget))):
                found.append(f"{widget.objectName() or type(widget).__name__}: {global_rect(widget).getRect()} off screen")
    return found


def rows_shown(table: QTableView) -> int:
    room = table.viewport().rect()
    model = table.model()
    return sum(1 for r in range(model.rowCount()) if room.contains(table.visualRect(model.index(r, 0))))


def few_rows(window: QWidget, name: str) -> list[str]:
    table = window.findChild(QTableView, name)
    shown = rows_shown(table)
    return [] if shown >= MIN_ROWS else [f"{name}: {shown} rows visible (fewer than {MIN_ROWS})"]


def problems(explorer: Explorer, table: str | None) -> list[str]:
    window = explorer.window
    settle()
    window.grab()  # pyqtgraph places an anchored text when it paints it
    found = off_screen(window) + clipped_texts(window) + sideways_problems(window) + chart_problems(window)
    return found + (few_rows(window, table) if table else [])


def open_path(explorer: Explorer, path: str) -> None:
    window = explorer.window
    before = window.session.state.model
    window.open_path(path)
    wait(lambda: window.session.state.model is not None and window.session.state.model is not before, f"opening {path}")
    wait(lambda: not window.plan_pending() and not window.run_it.ladder_pending(), "the plan")


def show_only(explorer: Explorer, dock: QDockWidget | None) -> None:
    for each in explorer.window.findChildren(QDockWidget):
        each.hide()
    if dock is not None:
        dock.show()
        dock.raise_()


def main() -> None:
    app = application()
    scratch = Path(tempfile.mkdtemp())
    store = QSettings(str(scratch / "s.ini"), QSettings.Format.IniFormat)
    explorer = compose(store, probe_backend=small_machine, bandwidth_backend=assumed_bandwidths, log_folder=scratch,
                       open_url=lambda url: False, library_home=scratch / "home", library_config=scratch / "lib.json",
                       header_cache=scratch / "headers", reprobe_s=None)
    window = explorer.window
    window.show()
    wait(lambda: window.session.state.machine is not None, "the machine")
    report: dict[str, list[str]] = {}
    eight_b = str(catalogue_path(find_entry("llama-3.1-8b-instruct")))
    mixtral = str(write_gguf(scratch / "mixtral-8x7b-instruct-v0.1.Q4_K_M.gguf", MIXTRAL_8X7B, "header_only")[0])

    open_path(explorer, str(demo_model_path()))
    show_only(explorer, None)
    report["demo, no dock"] = problems(explorer, None)

    goal = window.body.goal
    goal.goal.setCurrentIndex(GOAL_CHOICES.index(Goal.MAX_CTX))
    goal.min_tok_s.setValue(20.0)
    goal.apply.click()
    wait(lambda: window.session.state.goal is not None and not window.goal.worker.busy, "the goal's answer")
    report["demo, goal applied"] = problems(explorer, None)

    open_path(explorer, eight_b)
    show_only(explorer, explorer.whatif.sweep_dock)
    wait(lambda: explorer.whatif.sweep.result() is not None and not explorer.whatif.sweep.worker.busy, "the sweep")
    report["8B, sweep"] = problems(explorer, None)

    show_only(explorer, explorer.whatif.compare_dock)
    compare = explorer.whatif.compare
    loaded: list[bool] = []
    compare.secondLoaded.connect(lambda: loaded.append(True))
    compare.open_second(str(catalogue_path(find_entry("qwen3-8b"))))
    wait(lambda: bool(loaded), "the compared model")
    report["8B, compare"] = problems(explorer, None)

    open_path(explorer, str(catalogue_path(find_entry("llama-3.1-70b-instruct"))))
    show_only(explorer, explorer.quants.dock)
    follower = explorer.quants.follower
    wait(lambda: follower.ladder() is not None and not follower.busy(), "the quant ladder")
    report["70B, quants"] = problems(explorer, "quantsTable")

    window.body.hardware.editor.set_preset("RTX 4090")
    open_path(explorer, mixtral)
    folder = scratch / "library-folder"
    folder.mkdir()
    for i in range(MIN_ROWS + 2):
        write_gguf(folder / f"model-{i:02}.gguf", ArchDesc(n_layer=2, name=f"model {i}"), "header_only")
    add_folder(folder, scratch / "lib.json")
    show_only(explorer, explorer.library.dock)
    explorer.library.library_action.trigger()
    table = window.findChild(QTableView, "libraryTable")
    wait(lambda: table.model().rowCount() >= MIN_ROWS + 2 and not explorer.library.view.worker.busy, "the library")
    report["Mixtral on RTX 4090, library"] = problems(explorer, "libraryTable")

    source = window.session.state.model
    priced = next(m for m in price_types(source).models if m.priced_type == "Q3_K_M")
    show_only(explorer, None)
    window.show_model(priced)
    wait(lambda: not window.plan_pending() and not window.run_it.ladder_pending(), "the priced plan")
    report["Mixtral Q3_K_M priced, no dock"] = problems(explorer, None)

    print(json.dumps(report, indent=1))
    window.close()
    app.processEvents()


if __name__ == "__main__":
    main()
