"""What the GUI tests share: isolated settings, a real window, a model with separated thresholds.

`conftest.py` loads this module as a pytest plugin, so its fixtures reach every test module
without an import. Every window is composed as the app composes it (`gui.qt.app.compose`: the
what-if add-on installed), with its own INI file and log folder, so no test reads the user's
settings or another test's, and none opens the user's file manager.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Callable

import pytest
from gguf.constants import GGMLQuantizationType as T
from gguf_factory import ArchDesc, write_gguf
from PySide6.QtCore import QObject, QSettings, Qt, QThreadPool

from gguf_budget.core import ModelSpec
from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.core.explorer.window_size import DESIGN_SIZE
from gguf_budget.core.machine.snapshot import HardwareSnapshot, hypothetical_machine
from gguf_budget.gui.qt.addons import Explorer
from gguf_budget.gui.qt.app import compose
from gguf_budget.gui.qt.main_window import MainWindow

MIB = 1 << 20
GIB = 1 << 30

# 8 blocks of ~3.2 MiB (Q8_0) and a 32k vocabulary: the minimum configuration (~32 MiB)
# and the all-pinned budget (~109 MiB at ctx 4096) lie many MiB apart on the slider.
WIDE = ArchDesc(name="wide-llama", n_layer=8, n_embd=512, n_ff=1536, n_head=8, n_head_kv=4,
                n_vocab=32000, context_length=4096)
OTHER = ArchDesc(name="other-llama", n_layer=4, n_embd=256, n_ff=768, n_head=4, n_head_kv=2,
                 n_vocab=8000, context_length=2048)

# A Llama-3-70B-shaped header (80 blocks of ~0.5 GiB Q4_K): a 24 GiB GPU holds only part of it.
LLAMA70B = ArchDesc(name="llama-3-70b-shape", n_layer=80, n_embd=8192, n_ff=28672, n_head=64, n_head_kv=8,
                    n_vocab=128256, context_length=131072, weight_type=T.Q4_K, output_type=T.Q6_K)


def assumed_bandwidths(path: str) -> tuple[Bandwidths, tuple[str, ...]]:
    """A bandwidth probe stand-in: the assumed figures, so every number a test reads is repeatable."""
    return Bandwidths(), ()


def small_machine() -> HardwareSnapshot:
    """A probe stand-in: 64 GiB host, no GPU (what a test injects instead of the real probe)."""
    return hypothetical_machine(host_available=48 * GIB, host_total=64 * GIB)


@pytest.fixture
def settings_store(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "gguf-budget.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def write_model(tmp_path: Path) -> Callable[..., Path]:
    def write(desc: ArchDesc = WIDE, name: str = "wide.gguf", **kw) -> Path:
        return write_gguf(tmp_path / name, desc, "header_only", **kw)[0]

    return write


@pytest.fixture
def make_explorer(qtbot, settings_store: QSettings, tmp_path: Path) -> Callable[..., Explorer]:
    """The composed app, shown: isolated settings and log folder, (by default) an injected probe."""

    def make(store: QSettings | None = None, **kw) -> Explorer:
        kw.setdefault("probe_backend", small_machine)
        kw.setdefault("bandwidth_backend", assumed_bandwidths)
        kw.setdefault("log_folder", tmp_path / "logs")
        kw.setdefault("open_url", lambda url: False)
        kw.setdefault("library_home", tmp_path / "library-home")
        kw.setdefault("library_config", tmp_path / "library.json")
        kw.setdefault("header_cache", tmp_path / "headers")
        kw.setdefault("reprobe_s", None)  # the machine holds still while a test looks at it
        explorer = compose(store or settings_store, **kw)
        explorer.window.resize(*DESIGN_SIZE)  # the offscreen screen is 800 × 800: every test lays out at the design size
        qtbot.addWidget(explorer.window)
        explorer.window.show()
        return explorer

    yield make
    QThreadPool.globalInstance().waitForDone(5000)


@pytest.fixture
def make_window(make_explorer: Callable[..., Explorer]) -> Callable[..., MainWindow]:
    """A shown MainWindow, composed with its add-ons (see `make_explorer`)."""

    def make(store: QSettings | None = None, **kw) -> MainWindow:
        return make_explorer(store, **kw).window

    return make


@pytest.fixture
def laptop(qtbot, make_explorer: Callable[..., Explorer], write_model: Callable[..., Path]) -> Explorer:
    """The composed app in a 1280 × 720 window with the budget sweep open, a model planned and swept."""
    explorer = make_explorer()
    window = explorer.window
    window.resize(1280, 720)
    explorer.whatif.sweep_dock.show()
    explorer.whatif.sweep_dock.raise_()
    open_model(qtbot, window, write_model())
    sweep = explorer.whatif.sweep
    qtbot.waitUntil(lambda: sweep.result() is not None and not sweep.worker.busy)
    settle(qtbot, window)
    return explorer


def window_on_typed_cpu(qtbot, make_window: Callable[..., MainWindow], path: Path, available: int) -> MainWindow:
    """A window probing a machine with `available` bytes free, no GPU and no CPU kernel features (what `fit`'s
    `--host-available N --no-gpu --cpu-features none` describes), showing the model at `path`."""
    def machine() -> HardwareSnapshot:
        return replace(hypothetical_machine(available), cpu_features=frozenset())

    w = make_window(probe_backend=machine)
    qtbot.waitUntil(lambda: w.session.state.machine is not None, timeout=5000)
    w.model_path = path
    open_model(qtbot, w, path)
    return w


def open_model(qtbot, window: MainWindow, path: Path | str) -> ModelSpec:
    """Open and wait for the plan to be on screen; fails if the load fails."""
    with qtbot.assertNotEmitted(window.loadFailed), qtbot.waitSignal(window.modelLoaded, timeout=10000):
        window.open_path(str(path))
    model = window.session.state.model
    assert model is not None
    return model


def child(window: MainWindow, name: str) -> QObject:
    """The widget with this objectName (fails loudly when it is missing)."""
    found = window.findChild(QObject, name)
    assert found is not None, f"no widget named {name!r}"
    return found


def settle(qtbot, window: MainWindow) -> None:
    """Let the coalescing timer fire: the plan on screen matches the controls again."""
    qtbot.waitUntil(lambda: not window.plan_pending(), timeout=5000)


def type_into(qtbot, window: MainWindow, name: str, text: str) -> None:
    """Replace a box's text as a person would (select all, type or delete, Return)."""
    edit = child(window, name)
    edit.setFocus()
    edit.selectAll()
    if text:
        qtbot.keyClicks(edit, text)
    else:
        qtbot.keyClick(edit, Qt.Key.Key_Delete)
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    settle(qtbot, window)
