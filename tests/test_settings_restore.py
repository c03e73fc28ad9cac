"""Settings never stop start-up: every value restored is validated and an invalid one falls back
to its default with a log line; a settings file that is a FIFO is set aside, not read; a budget
beyond the slider's range is clamped on the slider only (typed ones: `test_gui_hostile`)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from gui_support import GIB, child, open_model, settle, type_into
from hostile_support import HANG_LIMIT_S, make_fifo
from PySide6.QtCore import QSettings, Qt

from gguf_budget.core.explorer.state import TypedBandwidths
from gguf_budget.core.machine.backend import Backend
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.explorer.session import ModelChoice
from gguf_budget.gui.qt.settings import ExplorerSettings, load_memory, load_settings, user_settings

BAD_VALUES = {
    "n_buffers": "9",  # the core's ring depth is 1 … 8
    "prefer": "both",
    "slow_below_tok_s": "-1",
    "ram_bw": "0",
    "head_mode": "sometimes",
    "kv_type": "q3_k",
    "force": "2",
    "backend": "OpenCL",  # not one of llama.cpp's GPU backends
    "gpu_flops": "1000",  # 1 kFLOP/s: below GPU_TFLOPS's 0.01 TFLOPS
    "cpu_flops": "fast",
}
MODEL = "ab" * 32
BAD_MODEL_ROWS = {
    "budget": "2251799813685248",  # 2 PiB: the slider's 32-bit MiB would overflow
    "ctx": "4294967296",
    "ctx_cap": "0",
}


def _ini(tmp_path: Path, body: str) -> QSettings:
    path = tmp_path / "settings.ini"
    path.write_text(textwrap.dedent(body))
    return QSettings(str(path), QSettings.Format.IniFormat)


@pytest.mark.parametrize("key", sorted(BAD_VALUES))
def test_each_invalid_value_falls_back_with_a_log_line(tmp_path, caplog, key):
    store = _ini(tmp_path, f"[explorer]\n{key}={BAD_VALUES[key]}\n")
    with caplog.at_level(logging.WARNING, logger="gguf_budget.gui.qt.settings"):
        assert load_settings(store) == ExplorerSettings()
    assert [r.getMessage() for r in caplog.records] == [
        f"settings: explorer/{key}='{BAD_VALUES[key]}' is not valid; using {getattr(ExplorerSettings(), key)!r} instead"]


@pytest.mark.parametrize("field", sorted(BAD_MODEL_ROWS))
def test_an_invalid_remembered_model_row_is_dropped_with_a_log_line(tmp_path, caplog, field):
    store = _ini(tmp_path, f"[models]\n{MODEL}.{field}={BAD_MODEL_ROWS[field]}\n{'cd' * 32}.ctx=8192\n")
    with caplog.at_level(logging.WARNING, logger="gguf_budget.gui.qt.settings"):
        memory = load_memory(store)
    assert memory.rows() == {"cd" * 32: ModelChoice(None, 8192, None)}
    assert [r.getMessage() for r in caplog.records] == [
        f"settings: models/{MODEL}={{'{field}': '{BAD_MODEL_ROWS[field]}'}} is not valid; using "
        "'nothing remembered for that model' instead"]


def test_recent_entries_that_are_not_paths_are_dropped(tmp_path, caplog):
    store = _ini(tmp_path, f"[explorer]\nrecent=/a.gguf, /{'x' * 5000}.gguf\n")
    with caplog.at_level(logging.WARNING):
        assert load_settings(store).recent == ()
    assert "settings: explorer/recent=" in caplog.text


def test_a_window_starts_on_poisoned_settings_and_saves_sane_ones(qtbot, make_window, write_model, tmp_path, caplog):
    store = _ini(tmp_path, f"""\
        [explorer]
        n_buffers={BAD_VALUES['n_buffers']}
        recent=/a.gguf
        [models]
        {MODEL}.budget={BAD_MODEL_ROWS['budget']}
        {MODEL}.ctx={BAD_MODEL_ROWS['ctx']}
        [window]
        geometry=hello
        """)
    with caplog.at_level(logging.WARNING):
        window = make_window(store)
    assert "settings: window/geometry='hello' is not valid" in caplog.text
    assert "settings: explorer/n_buffers=" in caplog.text and f"settings: models/{MODEL}=" in caplog.text
    open_model(qtbot, window, write_model())
    window.apply_request(budget=Budget.of(GIB))
    window.save_settings()
    again = QSettings(store.fileName(), QSettings.Format.IniFormat)
    assert load_settings(again).n_buffers == ExplorerSettings().n_buffers
    (row,) = load_memory(again).rows().values()
    assert row == ModelChoice(Budget.of(GIB), None, None)


def _one_gpu():
    return hypothetical_machine(32 * GIB, gpu_count=1, gpu_total=24 * GIB)


def test_the_typed_backend_and_compute_rates_are_remembered_with_the_bandwidths(qtbot, make_window, write_model, tmp_path):
    """The machine editor's backend, GPU TFLOPS and CPU GFLOPS are saved and come back as the typed bandwidths do:
    in the fields, in the session's typed figures, and in the estimates."""
    store = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = make_window(store, probe_backend=_one_gpu)
    type_into(qtbot, window, "bwRam", "20G")
    type_into(qtbot, window, "typedGpuTflops", "82.6")
    type_into(qtbot, window, "typedCpuGflops", "250")
    box = child(window, "typedBackend")
    box.setFocus()
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), "vulkan")
    qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Return)
    settle(qtbot, window)
    typed = window.session.state.typed_bandwidths
    assert (typed.backend, typed.gpu_flops, typed.cpu_flops) == (Backend.VULKAN, int(82.6e12), 250 * 10**9)
    window.save_settings()
    again = make_window(QSettings(store.fileName(), QSettings.Format.IniFormat), probe_backend=_one_gpu)
    assert again.session.state.typed_bandwidths == typed and typed.ram == 20 << 30
    assert [child(again, name).text() for name in ("typedGpuTflops", "typedCpuGflops")] == ["82.6", "250"]
    assert child(again, "typedBackend").currentText() == "Vulkan"
    assert again.body.hardware.editor.typed_compute() == (Backend.VULKAN, int(82.6e12), 250 * 10**9)
    open_model(qtbot, again, write_model())
    speed = again.session.view.full_load.speed
    assert speed.gpu is not None and speed.gpu.speed.backend is Backend.VULKAN
    assert speed.gpu.compute is not None and speed.gpu.compute.flops_per_s == int(82.6e12)
    type_into(qtbot, again, "bwRam", "")  # typing another figure keeps what was restored
    assert again.session.state.typed_bandwidths == TypedBandwidths(backend=Backend.VULKAN, gpu_flops=int(82.6e12),
                                                                   cpu_flops=250 * 10**9)


def test_a_bad_stored_compute_rate_is_one_line_and_nothing_else_is_lost(qtbot, make_window, tmp_path, caplog):
    store = _ini(tmp_path, """\
        [explorer]
        ram_bw=21474836480
        backend=ROCm
        gpu_flops=-5
        cpu_flops=250000000000
        """)
    with caplog.at_level(logging.WARNING, logger="gguf_budget.gui.qt.settings"):
        window = make_window(store, probe_backend=_one_gpu)
    assert [r.getMessage() for r in caplog.records] == [
        "settings: explorer/gpu_flops='-5' is not valid; using None instead"]
    assert window.session.state.typed_bandwidths == TypedBandwidths(ram=20 << 30, backend=Backend.ROCM,
                                                                    cpu_flops=250 * 10**9)
    assert child(window, "typedGpuTflops").text() == "" and child(window, "typedCpuGflops").text() == "250"
    assert child(window, "typedBackend").currentText() == "ROCm"


def test_the_largest_budget_is_shown_on_a_clamped_slider(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model())
    window.apply_request(budget=Budget.of(1 << 50))
    assert window.session.state.request().budget == Budget.of(1 << 50)
    assert child(window, "budgetSlider").value() == child(window, "budgetSlider").maximum()


def test_a_settings_file_that_is_a_fifo_is_set_aside(tmp_path, caplog):
    fifo = make_fifo(tmp_path / "gguf-budget.conf")
    with caplog.at_level(logging.WARNING):
        store = user_settings(fifo)
    assert Path(store.fileName()) != fifo and store.value("explorer/n_buffers") is None
    assert f"settings: {fifo} cannot be used (it is not a regular file)" in caplog.text


START_WINDOW = """
from PySide6.QtWidgets import QApplication
from gguf_budget.gui.qt.main_window import MainWindow
app = QApplication([])
window = MainWindow(probe_backend=lambda: None)
print(window.windowTitle())
"""


def test_start_up_with_a_fifo_as_the_users_settings_file_does_not_hang(tmp_path):
    make_fifo(Path(tmp_path / "gguf-budget").mkdir() or tmp_path / "gguf-budget" / "gguf-budget.conf")
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path), "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run([sys.executable, "-c", START_WINDOW], env=env, capture_output=True, text=True,
                            timeout=HANG_LIMIT_S)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "GGUF Budget Explorer"
