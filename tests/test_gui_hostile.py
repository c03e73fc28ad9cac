"""The window and hostile files: a good model is on screen, a hostile one is opened.

A file that cannot be loaded or shown leaves the previous model, plan and title on screen, the
busy indicator gone and the reason shown. A file with huge but well-typed values is shown
whole: the sliders clamp what they cannot represent, and the model is never half-switched."""

from __future__ import annotations

import dataclasses
import struct
from pathlib import Path
from typing import Callable

import pytest
from gguf.constants import GGUFValueType as V
from gguf_factory import write_gguf
from gui_support import MIB, OTHER, child, open_model, settle
from hostile_headers import write_hostile
from hostile_support import make_fifo, make_symlink_loop
from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QApplication
from test_gui_loading import drop_events

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, load_model, plan_memory
from gguf_budget.core.ranges import CONTEXT
from gguf_budget.gui.qt.main_window import MainWindow
from gguf_budget.gui.qt.whatif.compare_view import CompareView


def screen_state(window: MainWindow) -> tuple:
    return (window.session.state.model, window.session.view.plan, child(window, "modelSummary").values(),
            window.session.state.request(), child(window, "banner").text(), window.windowTitle())


def _sparse_nested_arrays(folder: Path) -> Path:
    path = folder / "bomb.gguf"
    prefix = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1) + b"k" + struct.pack("<IIQ", V.ARRAY,
                                                                                                  V.ARRAY, 10**7)
    with open(path, "wb") as f:
        f.write(prefix)
        f.truncate(len(prefix) + 12 * 10**7)
    return path


def _truncated(folder: Path) -> Path:
    whole = write_gguf(folder / "whole.gguf", OTHER, "header_only")[0].read_bytes()
    path = folder / "cut.gguf"
    path.write_bytes(whole[: len(whole) // 3])
    return path


UNLOADABLE: dict[str, Callable[[Path], Path]] = {
    "fifo": lambda d: make_fifo(d / "pipe.gguf"),
    "folder": lambda d: (d / "dir.gguf").mkdir() or d / "dir.gguf",
    "symlink loop": make_symlink_loop,
    "head_count a 1 MiB string": lambda d: write_hostile(
        d, "str.gguf", {"{arch}.attention.head_count": (V.STRING, b"x" * ((1 << 20) + 1))}),
    "duplicate block_count": lambda d: write_hostile(d, "dup.gguf", {}, duplicate="{arch}.block_count"),
    "architecture an array": lambda d: write_hostile(
        d, "arch.gguf", {"general.architecture": (V.ARRAY, (V.UINT8, [1, 2]))}),
    "ten million nested arrays": _sparse_nested_arrays,
    "truncated header": _truncated,
    "control characters in a missing name": lambda d: d / "gone\x1b[2J\n\u202e.gguf",
}


@pytest.mark.parametrize("case", sorted(UNLOADABLE))
def test_a_hostile_file_leaves_the_previous_model_on_screen(qtbot, make_window, write_model, tmp_path, case):
    window = make_window()
    open_model(qtbot, window, write_model())
    window.apply_request(budget=Budget.of(70 * MIB), ctx=1024)
    before = screen_state(window)
    path = UNLOADABLE[case](tmp_path)
    with qtbot.assertNotEmitted(window.modelLoaded), qtbot.waitSignal(window.loadFailed, timeout=60_000) as failed:
        window.open_path(str(path))
    assert screen_state(window) == before
    assert not child(window, "busyIndicator").isVisible()
    error = child(window, "loadError")
    assert error.isVisible() and error.text().startswith("Could not open the model: ")
    assert "\n" not in error.text() and "\x1b" not in error.text()
    assert failed.args[0]


@pytest.mark.parametrize("field", ["n_params", "n_embd"])
def test_a_model_that_cannot_be_shown_is_never_half_committed(qtbot, make_window, write_model, field):
    """The load backend is the window's injection point: it hands over a spec whose numbers no float holds."""
    good, other = write_model(), write_model(OTHER, name="other.gguf")

    def backend(path: str):
        spec = load_model(path)
        return dataclasses.replace(spec, **{field: 2**1100}) if path == str(other) else spec

    window = make_window(load_backend=backend)
    open_model(qtbot, window, good)
    before = screen_state(window)
    with qtbot.assertNotEmitted(window.modelLoaded), qtbot.waitSignal(window.loadFailed) as failed:
        window.open_path(str(other))
    assert "cannot be shown: OverflowError" in failed.args[0]
    assert screen_state(window) == before and not child(window, "busyIndicator").isVisible()
    window.apply_request(budget=Budget.of(80 * MIB))
    assert window.session.view.plan == plan_memory(window.session.state.model, window.session.state.request())


HUGE = {
    "context_length 2^31": {"{arch}.context_length": (V.UINT32, 2**31)},
    "context_length 2^32-1": {"{arch}.context_length": (V.UINT64, 2**32 - 1)},
    "sliding_window 2^32-1": {"{arch}.attention.sliding_window": (V.UINT32, 2**32 - 1)},
    "vocab_size 2^32-1": {"{arch}.vocab_size": (V.UINT32, 2**32 - 1)},
}
"""The largest counts a header may hold (llama.cpp's are uint32); larger ones are refused on load."""


@pytest.mark.parametrize("case", sorted(HUGE))
def test_huge_values_are_shown_whole_with_clamped_sliders(qtbot, make_window, write_model, tmp_path, case):
    window = make_window()
    open_model(qtbot, window, write_model())
    path = write_hostile(tmp_path, "huge.gguf", HUGE[case])
    spec = open_model(qtbot, window, path)
    assert spec.path == str(path) and spec.name in window.windowTitle()
    assert window.session.view.plan in (None, plan_memory(spec, window.session.state.request()))
    assert child(window, "ctxSlider").maximum() <= CONTEXT.high
    slider = child(window, "budgetSlider")
    slider.setValue(slider.maximum())
    settle(qtbot, window)
    slider.setValue(slider.minimum())
    settle(qtbot, window)
    window.apply_request(budget=Budget.of(1 << 50), ctx=CONTEXT.high)
    assert window.session.state.request() == dataclasses.replace(window.session.state.request(), budget=Budget.of(1 << 50))
    assert window.session.view.plan in (None, plan_memory(spec, window.session.state.request()))


def test_a_budget_too_large_to_show_is_refused_and_the_plan_stays(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model())
    before = screen_state(window)
    edit = child(window, "budgetEdit")
    for text in ("2P", "1" + "0" * 400, "-5G"):
        edit.setText(text)
        edit.setModified(True)
        edit.editingFinished.emit()
        settle(qtbot, window)
        assert screen_state(window) == before and child(window, "budgetError").isVisible()
    assert window.session.state.request().budget == before[3].budget


def test_fifos_from_every_way_in_never_use_up_the_workers(qtbot, make_window, write_model, tmp_path):
    """Open, Recent and drop each refuse a FIFO at once: more FIFOs than the pool has threads, then a good model."""
    window = make_window()
    fifo = make_fifo(tmp_path / "pipe.gguf")
    window.file_menu.set_recent([str(fifo)])
    mime, enter, drop = drop_events(fifo)
    ways = [lambda: window.open_path(str(fifo)), child(window, "recentMenu").actions()[0].trigger,
            lambda: (QApplication.sendEvent(window, enter), QApplication.sendEvent(window, drop))]
    for i in range(QThreadPool.globalInstance().maxThreadCount() + 1):
        with qtbot.waitSignal(window.loadFailed, timeout=60_000) as failed:
            ways[i % len(ways)]()
        assert "FIFO" in failed.args[0] and not child(window, "busyIndicator").isVisible()
    open_model(qtbot, window, write_model())
    window.machine.refresh()
    qtbot.waitUntil(child(window, "refreshHardware").isEnabled, timeout=60_000)
    assert mime.hasUrls()  # the events borrow it: it lives until here


@pytest.mark.parametrize("second", ["fifo", "cannot be shown"])
def test_the_compare_dock_keeps_its_second_model(qtbot, write_model, tmp_path, second):
    good, other = write_model(), write_model(OTHER, name="other.gguf")
    bad = make_fifo(tmp_path / "pipe.gguf") if second == "fifo" else write_model(OTHER, name="huge.gguf")

    def backend(path: str):
        spec = load_model(path)
        return dataclasses.replace(spec, tensor_bytes=2**1100) if path == str(bad) else spec

    view = CompareView(load_backend=backend)
    qtbot.addWidget(view)
    view.show()
    first = load_model(good)
    view.set_first(first, BudgetRequest(), plan_memory(first, BudgetRequest()))
    with qtbot.waitSignal(view.secondLoaded, timeout=60_000):
        view.open_second(str(other))
    rows, label = view.model.rows(), view.second_label.text()
    with qtbot.assertNotEmitted(view.secondLoaded), qtbot.waitSignal(view.secondFailed, timeout=60_000):
        view.open_second(str(bad))
    assert view.second_model().path == str(other) and view.model.rows() == rows
    assert view.second_label.text() == label and view.error.isVisible() and view.open_button.isEnabled()
