"""Measure with llama.cpp… in the window, on real widgets and a real llama.cpp (see llama_support).

The run happens off the GUI thread with a progress dialog; its evidence fills the Measured bar
and the claim, and is kept for the next time the model is opened. Cancel stops it.
"""

from __future__ import annotations

from pathlib import Path

from gui_support import child, open_model
from PySide6.QtCore import Qt
from llama_support import llama_engine, printed_buffers
from runnable_model import write_runnable_model

from gguf_budget.core.measure.engine import EngineKind
from gguf_budget.core.measure.record import Origin
from gguf_budget.core.views.evidence_view import evidence_claim, measured_column, measured_items


def test_measure_runs_off_the_gui_thread_and_its_evidence_is_shown_and_kept(qtbot, make_explorer, tmp_path: Path,
                                                                            settings_store):
    engine = llama_engine()
    path = write_runnable_model(tmp_path / "tiny.gguf")
    window_app = make_explorer()
    window = window_app.window
    open_model(qtbot, window, path)
    qtbot.waitUntil(lambda: window.session.view.fit is not None and not window_app.evidence.busy())
    link = window_app.evidence
    link.update_actions()
    assert link.measure_action.isEnabled() and engine.label in link.measure_action.toolTip()
    settings = link.settings_now(window.session.state.model)
    assert settings.ctx == window.session.view.fit.kv.ctx and settings.gpu_layers == window.session.view.fit.gpu_layers
    with qtbot.assertNotEmitted(link.measureFailed), qtbot.waitSignal(link.evidenceChanged, timeout=120000):
        link.measure_action.trigger()
        assert link.dialog.isVisible() and not link.measure_action.isEnabled()
    assert not link.dialog.isVisible() and link.measure_action.isEnabled()
    # the dialog showed the runner's progress reports while llama.cpp ran
    assert link.dialog.bar.value() >= 5 and link.dialog.detail.text().startswith("llama.cpp RSS now ")
    evidence = link.evidence()
    assert evidence.record.origin is Origin.MEASURED and evidence.record.settings == settings
    raw = link.store.log(evidence.record)
    assert sorted((b.kind.value, b.device, b.mib) for b in evidence.log.run.buffers) == printed_buffers(raw)
    assert child(window, "claimRuntime").text() == evidence_claim(evidence) and "measured here" in evidence_claim(evidence)
    assert window.body.plan.chart._columns[2] == (measured_column(evidence), measured_items(evidence))
    window.close()
    again_app = make_explorer(settings_store)
    again = again_app.window
    with qtbot.waitSignal(again_app.evidence.evidenceChanged, timeout=10000):
        open_model(qtbot, again, path)
    assert again_app.evidence.evidence().record == evidence.record


def test_cancel_stops_the_measurement_and_changes_nothing(qtbot, make_explorer, tmp_path: Path):
    server = llama_engine(EngineKind.SERVER)  # runs until stopped, so Cancel always finds it running
    window_app = make_explorer()
    window = window_app.window
    window_app.evidence.set_llama_location(server.executable)
    open_model(qtbot, window, write_runnable_model(tmp_path / "tiny.gguf"))
    qtbot.waitUntil(lambda: not window_app.evidence.busy())
    link = window_app.evidence
    assert link.engine() == server
    with qtbot.waitSignal(link.measureFailed, timeout=60000) as failed:
        link.measure()
        qtbot.mouseClick(child(link.dialog, "measureCancel"), Qt.MouseButton.LeftButton)
    assert failed.args == ["the measurement was cancelled"]
    assert link.evidence() is None and child(window, "claimRuntime").text().startswith("none")
    assert not link.dialog.isVisible() and link.measure_action.isEnabled()


def test_closing_the_window_cancels_a_running_measurement(qtbot, make_explorer, tmp_path: Path):
    server = llama_engine(EngineKind.SERVER)
    window_app = make_explorer()
    window = window_app.window
    window_app.evidence.set_llama_location(server.executable)
    open_model(qtbot, window, write_runnable_model(tmp_path / "tiny.gguf"))
    qtbot.waitUntil(lambda: not window_app.evidence.busy())
    with qtbot.waitSignal(window_app.evidence.measureFailed, timeout=60000) as failed:
        window_app.evidence.measure()
        window.close()
    assert failed.args == ["the measurement was cancelled"]


def test_a_measurement_past_its_timeout_is_stopped_and_says_so(qtbot, make_explorer, tmp_path: Path):
    server = llama_engine(EngineKind.SERVER)
    window_app = make_explorer()
    window = window_app.window
    window_app.evidence.set_llama_location(server.executable)
    window_app.evidence.timeout_s = 0
    open_model(qtbot, window, write_runnable_model(tmp_path / "tiny.gguf"))
    qtbot.waitUntil(lambda: not window_app.evidence.busy())
    with qtbot.waitSignal(window_app.evidence.measureFailed, timeout=60000) as failed:
        window_app.evidence.measure()
    assert failed.args == ["the measurement timed out after 0 s"]
    assert window_app.evidence.message.text() == "The measurement did not complete: the measurement timed out after 0 s"
