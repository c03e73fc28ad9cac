"""File ▸ Export: every file round-trips — the JSON and Markdown are the CLI's, the CSV has a row per budget."""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from gguf_factory import write_gguf
from gui_support import MIB, WIDE
from PySide6.QtCore import QThreadPool
from PySide6.QtGui import QImage

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, LEDGER_LINES, load_model, plan_memory
from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.core.speed.estimate import plan_speed
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.core.views.speed_view import plan_payload
from gguf_budget.core.views.export import EXPORT_SCALE, chart_title
from gguf_budget.core.units import human_bytes
from gguf_budget.gui.cli import main
from gguf_budget.gui.qt.menus.export_files import ExportError, write_file
from gguf_budget.gui.qt.menus.export_menu import EXPORTS, ExportMenu, ExportSources
from gguf_budget.gui.qt.plan.ledger_chart import LedgerChart
from gguf_budget.gui.qt.theme import ledger_colour
from gguf_budget.gui.qt.whatif.sweep_view import SweepView
from gguf_budget.gui.qt.whatif.sweep_worker import SweepSpeed

BUDGET = 64 * MIB


@pytest.fixture(scope="module")
def model_path(tmp_path_factory) -> Path:
    return write_gguf(tmp_path_factory.mktemp("export") / "wide.gguf", WIDE, "header_only")[0]


class Screen:
    """What the window would hold: a model, its plan, the ledger chart and a sweep view."""

    def __init__(self, qtbot, path: Path, planned: bool = True):
        self.model = load_model(path)
        self.plan = plan_memory(self.model, BudgetRequest(budget=Budget.of(BUDGET))) if planned else None
        self.chart = LedgerChart(LEDGER_LINES)
        self.sweep = SweepView()
        for w in (self.chart, self.sweep):
            qtbot.addWidget(w)
            w.resize(900, 400)
            w.show()
        if self.plan:
            self.chart.show_ledgers([("This plan", self.plan.ledger.items())], BUDGET, self.plan.minimum_required)
        self.speed = plan_speed(TokenPrices.of(self.model), self.plan, Bandwidths(), None) if planned else None
        self.sweep.set_speed(SweepSpeed(Bandwidths(), None))
        self.menu = ExportMenu(ExportSources(lambda: self.plan, lambda: self.model, lambda: self.chart,
                                             self.sweep.result, lambda: self.sweep.chart, lambda: self.speed,
                                             lambda: None if self.sweep.result() else "No sweep yet"))
        qtbot.addWidget(self.menu)

    def run_sweep(self, qtbot) -> None:
        with qtbot.waitSignal(self.sweep.sweepFinished, timeout=10000):
            self.sweep.set_model(self.model, BudgetRequest(budget=Budget.of(BUDGET)))


@pytest.fixture
def screen(qtbot, model_path):
    s = Screen(qtbot, model_path)
    yield s
    QThreadPool.globalInstance().waitForDone(5000)


def exported(qtbot, menu: ExportMenu, kind: str, path: Path) -> None:
    with qtbot.assertNotEmitted(menu.exportFailed), qtbot.waitSignal(menu.exported) as done:
        assert menu.export(kind, str(path))
    assert done.args == [str(path)]


def test_json_is_exactly_the_cli_json(qtbot, screen, model_path, tmp_path, capsys):
    exported(qtbot, screen.menu, "json", tmp_path / "plan.json")
    assert main(["plan", str(model_path), "--budget", str(BUDGET), "--json", "--no-measure"]) == 0
    cli = capsys.readouterr().out
    text = (tmp_path / "plan.json").read_text(encoding="utf-8")
    assert text == cli
    assert json.loads(text) == plan_payload(screen.plan, screen.speed)
    assert json.loads(text)["tok_s_estimate"]["tok_s"] == screen.speed.tok_s


def test_markdown_is_the_cli_report(qtbot, screen, model_path, tmp_path, capsys):
    exported(qtbot, screen.menu, "markdown", tmp_path / "plan.md")
    assert main(["plan", str(model_path), "--budget", str(BUDGET), "--format", "md"]) == 0
    text = (tmp_path / "plan.md").read_text(encoding="utf-8")
    assert text == capsys.readouterr().out
    assert f"| **Total** | **{screen.plan.total:,}** |" in text


def test_csv_has_one_row_per_budget_and_matches_the_cli(qtbot, screen, model_path, tmp_path, capsys):
    screen.run_sweep(qtbot)
    exported(qtbot, screen.menu, "sweep-csv", tmp_path / "gui.csv")
    with (tmp_path / "gui.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    result = screen.sweep.result()
    assert [int(r["budget"]) for r in rows] == [row.budget for row in result.rows]
    assert [int(r["total"]) for r in rows] == [row.total for row in result.rows]
    assert main(["sweep", str(model_path), "--budgets", screen.sweep.range_edit.text(),
                 "--csv", str(tmp_path / "cli.csv"), "--no-measure"]) == 0
    capsys.readouterr()
    assert (tmp_path / "gui.csv").read_bytes() == (tmp_path / "cli.csv").read_bytes()


@pytest.mark.parametrize("kind", ["ledger-png", "sweep-png"])
def test_png_is_an_image_of_the_chart(qtbot, screen, tmp_path, kind):
    screen.run_sweep(qtbot)
    exported(qtbot, screen.menu, kind, tmp_path / "chart.png")
    image = QImage(str(tmp_path / "chart.png"))
    chart = screen.chart if kind == "ledger-png" else screen.sweep.chart
    assert not image.isNull()
    if kind == "ledger-png":
        width, height = chart.width(), chart.height()  # the legend, a Qt list beside the chart on screen, is drawn to its right, whole
        beside, tall = chart.legend.whole_size()
        band = 2 * chart.fontMetrics().height()  # the title above it: model, budget, ctx and peak
        assert (image.width(), image.height()) == (EXPORT_SCALE * (width + beside), EXPORT_SCALE * (max(height, tall) + band))
        legend_pixels = {image.pixel(x, y) for x in range(EXPORT_SCALE * width, image.width())
                         for y in range(0, image.height(), 2)}
        assert {ledger_colour(line).rgb() for line in LEDGER_LINES} <= legend_pixels
        title_pixels = {image.pixel(x, y) for x in range(0, image.width() // 2) for y in range(EXPORT_SCALE * band)}
        assert len(title_pixels) > 2  # words drawn in the band, not an empty strip
        assert chart_title(screen.plan, screen.model) == (
            f"{screen.model.name} — Budget plan under {screen.plan.budget}: peak {human_bytes(screen.plan.total)} "
            f"at ctx {screen.plan.ctx:,}")
    else:
        assert (image.width(), image.height()) == (round(chart.ci.width()), round(chart.ci.height()))
    assert len({image.pixel(x, image.height() // 2) for x in range(0, image.width(), 4)}) > 2


@pytest.mark.parametrize("kind, text", [("ledger-svg", "This plan"), ("sweep-svg", "first feasible")])
def test_svg_is_a_document_with_the_chart_text(qtbot, screen, tmp_path, kind, text):
    screen.run_sweep(qtbot)
    exported(qtbot, screen.menu, kind, tmp_path / "chart.svg")
    root = ET.parse(tmp_path / "chart.svg").getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert text in "".join(root.itertext())


def test_actions_wait_for_something_to_export(qtbot, model_path):
    screen = Screen(qtbot, model_path, planned=False)
    screen.menu.update_enabled()
    assert [k for k, a in screen.menu.actions_by_kind.items() if a.isEnabled()] == ["sweep-csv"]  # made when written
    assert screen.menu.actions_by_kind["sweep-png"].toolTip() == "No sweep yet"
    screen.plan = plan_memory(screen.model, BudgetRequest(budget=Budget.of(BUDGET)))
    screen.menu.update_enabled()
    assert {k for k, a in screen.menu.actions_by_kind.items() if a.isEnabled()} == \
        {k for k, spec in EXPORTS.items() if spec.needs == "plan"} | {"sweep-csv"}
    screen.run_sweep(qtbot)
    screen.menu.update_enabled()
    assert all(a.isEnabled() for a in screen.menu.actions_by_kind.values())
    assert screen.menu.suggested_path("sweep-csv") == "wide-sweep.csv"


def test_nothing_to_export_is_a_message(qtbot, screen, tmp_path):
    with qtbot.waitSignal(screen.menu.exportFailed) as failed:
        assert not screen.menu.export("sweep-png", str(tmp_path / "s.png"))
    assert failed.args == ["nothing to export: no sweep yet"]
    assert not (tmp_path / "s.png").exists()


@pytest.mark.parametrize("where", ["missing folder", "parent is a file", "target is a folder"])
def test_a_failed_write_says_why_and_changes_nothing(qtbot, screen, tmp_path, where):
    (tmp_path / "file").write_text("keep me")
    (tmp_path / "folder").mkdir()
    target = {"missing folder": tmp_path / "nope" / "plan.json", "parent is a file": tmp_path / "file" / "plan.json",
              "target is a folder": tmp_path / "folder"}[where]
    with qtbot.assertNotEmitted(screen.menu.exported), qtbot.waitSignal(screen.menu.exportFailed) as failed:
        assert not screen.menu.export("json", str(target))
    assert failed.args[0].startswith(f"cannot write {target}: ")
    assert screen.menu.message.text() == failed.args[0] and screen.menu.message.isVisible()
    screen.menu.message.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "folder"]
    assert (tmp_path / "file").read_text() == "keep me" and not any((tmp_path / "folder").iterdir())


def test_write_file_replaces_a_file_whole(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    write_file(target, b"new contents")
    assert target.read_bytes() == b"new contents" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]
    with pytest.raises(ExportError, match="^cannot write .*: "):
        write_file(tmp_path / "missing" / "x", b"")
