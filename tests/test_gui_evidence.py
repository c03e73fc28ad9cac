"""Runtime evidence in the window, on real widgets: import a recorded llama.cpp log, see the Measured
bar, the measured row and the filled claim; reopen the model and the evidence is back.

The logs are real llama.cpp runs (tests/data/llamacpp-logs); the model is a header-only file
of the shape they print, so the import's match check passes for it and fails for the other model.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from recorded_models import LOGS, SMOLLM2
from gui_support import child, open_model

from gguf_budget.core.evidence.compare import compare
from gguf_budget.core.machine.bandwidth import DEFAULT_CALIBRATION
from gguf_budget.core.speed.machine_speed import speed_figures
from gguf_budget.core.views.calibration_view import HEADERS
from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.views.evidence_report import speed_beside
from gguf_budget.core.measure.engine import ENV_BIN, HOW_TO_GET_ONE
from gguf_budget.core.views.ledger_names import MEASURED_LINES
from gguf_budget.core.views.evidence_view import (
    evidence_claim, measured_column, measured_items, measured_summary,
)
from gguf_budget.gui.qt.machine.machine_panel import NOT_MEASURED

SMOLLM2_LOG = LOGS / "smollm2-135m-instruct-q4_1_ctx2048_f16.log"
SMOLLM2_Q8_LOG = LOGS / "smollm2-135m-instruct-q4_1_ctx512_q8_0.log"
GEMMA3_LOG = LOGS / "gemma3-270m-q4_k_m_ctx2048_f16.log"


def claim(window) -> str:
    return child(window, "claimRuntime").text()


def imported(qtbot, app, log: Path):
    link = app.evidence
    qtbot.waitUntil(lambda: not link.busy(), timeout=10000)
    with qtbot.assertNotEmitted(link.importFailed), qtbot.waitSignal(link.evidenceChanged, timeout=10000):
        link.import_path(str(log))
    assert link.evidence() is not None
    return link.evidence()


def opened_with_evidence(qtbot, app, path: Path):
    """Open and wait for the stored-evidence lookup (it answers after `modelLoaded`)."""
    with qtbot.waitSignals([app.window.modelLoaded, app.evidence.evidenceChanged], timeout=10000, order="strict"):
        app.window.open_path(str(path))
    qtbot.waitUntil(lambda: app.evidence.evidence() is not None, timeout=10000)
    return app.evidence.evidence()


def test_without_evidence_the_claim_says_none_and_there_is_no_measured_bar(qtbot, make_explorer, write_model):
    window_app = make_explorer()
    window = window_app.window
    open_model(qtbot, window, write_model(SMOLLM2, "smollm2.gguf"))
    qtbot.waitUntil(lambda: window.session.view.fit is not None)
    assert window_app.evidence.evidence() is None
    assert claim(window).startswith("none")
    assert child(window, "measuredRow").text() == NOT_MEASURED
    chart = window.body.plan.chart
    assert len(chart._columns) == 2 and not set(MEASURED_LINES) & set(chart.legend_lines())


def test_an_imported_log_fills_the_measured_bar_row_and_claim(qtbot, make_explorer, write_model):
    window_app = make_explorer()
    window = window_app.window
    open_model(qtbot, window, write_model(SMOLLM2, "smollm2.gguf"))
    qtbot.waitUntil(lambda: window.session.view.fit is not None)
    evidence = imported(qtbot, window_app, SMOLLM2_LOG)
    chart = window.body.plan.chart
    label, items = chart._columns[2]
    assert label == measured_column(evidence) and items == measured_items(evidence)
    # the bar stacks llama.cpp's own figures: 92.10 MiB mapped weights, KV, compute, output …
    log = parse_llamacpp_log(SMOLLM2_LOG.read_text())
    heights = {line: chart.segment(2, line)[1] for line in MEASURED_LINES}
    assert heights["Measured: weights"] == log.run.total(log.run.buffers[0].kind) == round(92.10 * 2**20)
    # … topped by the rest of the peak RSS /usr/bin/time recorded, so the column's top is the peak
    assert sum(heights.values()) == log.peak_rss
    # the legend lists what the Measured bar draws: Q4_1 is not repacked, so no repack entry
    assert {line for line, n in items if n} <= set(chart.legend_lines())
    assert heights["Measured: repacked weights"] == 0 and "Measured: repacked weights" not in chart.legend_lines()
    text = claim(window)
    assert text == evidence_claim(evidence) == window.session.view.fit.claims.runtime_evidence
    assert "imported from smollm2-135m-instruct-q4_1_ctx2048_f16.log" in text and "ctx 2,048" in text
    assert "llama.cpp b1-0c1e570" in text and "peak RSS" in text
    assert child(window, "measuredRow").text().startswith(measured_summary(evidence))
    assert child(window, "claimAdmission").text().startswith("admitted") or "estimate" in child(window, "claimAdmission").text()


def test_the_measured_row_sets_the_runs_timings_beside_the_estimates_at_its_settings(qtbot, make_explorer,
                                                                                     write_model):
    window_app = make_explorer()
    window = window_app.window
    open_model(qtbot, window, write_model(SMOLLM2, "smollm2.gguf"))
    qtbot.waitUntil(lambda: window.session.view.fit is not None)
    evidence = imported(qtbot, window_app, SMOLLM2_LOG)
    text = child(window, "measuredRow").text()
    beside = speed_beside(compare(evidence.log, window.session.state.model, window.session.state.bandwidths))
    assert text == f"{measured_summary(evidence)} — {beside}"
    assert "decode 94.0 tok/s" in text and "estimated at its settings: decode ≈ " in text
    assert "; prefill ≈ " in text and text.endswith("% of it")


def test_an_imported_run_calibrates_once_adopted_and_the_reset_goes_back_to_the_defaults(qtbot, make_explorer,
                                                                                      write_model):
    """View ▸ Speed calibration… lists the imported run as not this machine's; its "Imported runs ran here" adopts
    it (the estimates are calibrated at once); View ▸ Reset speed calibration goes back to the shipped defaults.
    The figures are the kept ones without measuring (the assumed RAM figure: this machine's own may be too slow for
    the recorded run, which the physical band then refuses)."""
    window_app = make_explorer(bandwidth_backend=lambda path: speed_figures(path, measure=False))
    window = window_app.window
    open_model(qtbot, window, write_model(SMOLLM2, "smollm2.gguf"))
    qtbot.waitUntil(window.bandwidths_measured, timeout=20000)
    with qtbot.waitSignal(window.bandwidthsMeasured, timeout=20000):
        imported(qtbot, window_app, SMOLLM2_LOG)
    assert window.session.view.plan_speed.calibration == DEFAULT_CALIBRATION  # an imported log's machine is not known
    child(window, "calibrationAction").trigger()
    dialog = child(window, "calibrationDialog")
    table = child(dialog, "calibrationTable")
    cells = [table.item(r, c).text() for r in range(table.rowCount()) for c in range(table.columnCount())]
    assert any(cell.startswith("imported, machine unknown") for cell in cells)
    assert [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())] == list(HEADERS)
    with qtbot.waitSignal(window.bandwidthsMeasured, timeout=20000):
        child(dialog, "adoptImported").click()
    assert window.session.view.plan_speed.calibration.runs == 1
    assert "calibrated on 1 run on this machine" in child(window, "banner").text()
    with qtbot.waitSignal(window.bandwidthsMeasured, timeout=20000):
        child(window, "resetCalibrationAction").trigger()
    assert window.session.view.plan_speed.calibration == DEFAULT_CALIBRATION
    assert not any("run (" in table.item(r, 1).text() for r in range(table.rowCount()))  # redrawn: no run kept
    dialog.close()


def test_reopening_the_model_brings_its_evidence_back_even_renamed(qtbot, make_explorer, write_model, settings_store):
    path = write_model(SMOLLM2, "smollm2.gguf")
    first_app = make_explorer()
    first = first_app.window
    open_model(qtbot, first, path)
    imported(qtbot, first_app, SMOLLM2_Q8_LOG)
    newest = imported(qtbot, first_app, SMOLLM2_LOG)
    first.close()
    renamed = path.with_name("renamed-copy.gguf")
    shutil.copy(path, renamed)
    second_app = make_explorer(settings_store)
    second = second_app.window
    evidence = opened_with_evidence(qtbot, second_app, renamed)
    assert evidence.record == newest.record
    assert claim(second) == evidence_claim(newest)
    assert second.body.plan.chart._columns[2][1] == measured_items(newest)


def test_opening_another_model_clears_the_evidence(qtbot, make_explorer, write_model):
    window_app = make_explorer()
    window = window_app.window
    open_model(qtbot, window, write_model(SMOLLM2, "smollm2.gguf"))
    imported(qtbot, window_app, SMOLLM2_LOG)
    with qtbot.waitSignal(window_app.evidence.evidenceChanged, timeout=10000):
        open_model(qtbot, window, write_model(name="other.gguf"))
    assert window_app.evidence.evidence() is None and claim(window).startswith("none")
    assert len(window.body.plan.chart._columns) == 2


def test_a_log_of_another_model_or_not_a_log_is_refused_and_nothing_changes(qtbot, make_explorer, write_model,
                                                                             tmp_path):
    window_app = make_explorer()
    window = window_app.window
    open_model(qtbot, window, write_model(SMOLLM2, "smollm2.gguf"))
    before = imported(qtbot, window_app, SMOLLM2_LOG)
    notes = tmp_path / "notes.txt"
    notes.write_text("shopping: bread, milk\n")
    for log, reason in ((GEMMA3_LOG, "the log loaded 236 tensors"),
                        (notes, "notes.txt: not a llama.cpp log"),
                        (tmp_path / "missing.log", "no such file")):
        with qtbot.waitSignal(window_app.evidence.importFailed, timeout=10000) as failed:
            window_app.evidence.import_path(str(log))
        assert reason in failed.args[0] and "\n" not in failed.args[0]
        assert window_app.evidence.evidence() is before and claim(window) == evidence_claim(before)
    assert window_app.evidence.message.text().startswith("Could not import the log")


def test_without_a_llama_cpp_measure_is_disabled_and_says_how_to_get_one(qtbot, make_explorer, write_model,
                                                                         monkeypatch, tmp_path):
    monkeypatch.delenv(ENV_BIN, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    window_app = make_explorer()
    window = window_app.window
    open_model(qtbot, window, write_model(SMOLLM2, "smollm2.gguf"))
    action = window_app.evidence.measure_action
    window_app.evidence.update_actions()
    assert window_app.evidence.engine() is None
    assert not action.isEnabled()
    assert action.toolTip() == HOW_TO_GET_ONE[0].upper() + HOW_TO_GET_ONE[1:]
    assert child(window, "importLogAction").isEnabled()


def test_file_menu_lists_the_evidence_actions(qtbot, make_explorer):
    window_app = make_explorer()
    window = window_app.window
    names = [a.objectName() for a in window.menuBar().actions()[0].menu().actions()]
    assert names.index("importLogAction") < names.index("measureAction") < names.index("llamaLocationAction")


def test_the_measured_bar_says_its_runs_ctx_beside_a_plan_at_another_ctx(qtbot, make_explorer, write_model):
    """A run measured at ctx 2,048 stands beside "This plan" at 8,192: the column's label says so, and so
    does the hover text of each of its segments."""
    window_app = make_explorer()
    window = window_app.window
    open_model(qtbot, window, write_model(SMOLLM2, "smollm2.gguf"))
    window.apply_request(ctx=8192)
    qtbot.waitUntil(lambda: window.session.view.plan is not None and window.session.view.plan.ctx == 8192)
    imported(qtbot, window_app, SMOLLM2_LOG)
    chart = window.body.plan.chart
    labels = [label for label, _ in chart._columns]
    assert labels[2] == "Measured (ctx 2,048)"
    assert chart._segment_text(2, "Measured: weights").startswith("Measured (ctx 2,048) · ")
    assert chart.column_labels()[2][1] == "Measured\n(ctx 2,048)"


def test_the_measure_dialog_shows_what_it_runs_on_separate_lines(qtbot):
    """The engine, the model and the settings arrive as lines: each is escaped, the breaks are not."""
    from gguf_budget.gui.qt.evidence.measure_dialog import MeasureDialog

    dialog = MeasureDialog()
    qtbot.addWidget(dialog)
    dialog.begin("llama-cli (PATH)\n/models/evil\x1b[2J.gguf\nctx 512, KV f16")
    assert dialog.what.text().split("\n") == ["llama-cli (PATH)", "/models/evil\\x1b[2J.gguf", "ctx 512, KV f16"]
    assert "\\x0a" not in dialog.what.text()
    dialog.finish()
