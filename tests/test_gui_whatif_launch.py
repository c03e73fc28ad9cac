"""`--screenshot --view sweep|compare|quants [--compare FILE2] [--preset NAME]`, FILE a path or a URL: the docks
as PNGs, on a hypothetical machine too; bad combinations exit 2.

The real command is run for the exit codes and the file; what the picture shows is checked
in-process, where `shoot` (the command's own code) leaves the window to look at.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from gguf.constants import GGMLQuantizationType as T
from gui_support import WIDE
from http_models import Served
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QWidget

from gguf_budget.core import load_model
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.gui.cli import main
from gguf_budget.gui.cli.launch import parse_launch_args
from gguf_budget.gui.qt.addons import Explorer
from gguf_budget.gui.qt.screenshot import SCREENSHOT_SIZE
from gguf_budget.gui.qt.screenshot import shoot as shoot_window
from gguf_budget.core.views.compare_view import column_title
from gguf_budget.gui.qt.whatif.wiring import shows

CLI = Path(sys.executable).with_name("gguf-budget")


def shoot(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(cwd), "XDG_CONFIG_HOME": str(cwd / "config")}
    return subprocess.run([str(CLI), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("view", ["sweep", "compare"])
def test_a_view_screenshot_is_written(tmp_path, write_model, view):  # noqa: F811
    first = write_model()
    extra = ["--compare", str(write_model(replace(WIDE, weight_type=T.Q4_K), name="q4.gguf"))] if view == "compare" else []
    out = tmp_path / f"{view}.png"
    done = shoot(tmp_path, str(first), "--budget", "64M", "--screenshot", str(out), "--view", view, *extra)
    assert (done.returncode, done.stderr) == (0, "")
    image = QImage(str(out))
    assert image.width() == 1440 and image.height() >= 900


@pytest.fixture
def shot(make_explorer, tmp_path):
    """Run the screenshot code in-process on a composed window; returns the window's parts and the PNG."""

    def take(*args: str) -> tuple[Explorer, QImage]:
        explorer = make_explorer()
        explorer.window.resize(*SCREENSHOT_SIZE)
        out = tmp_path / "shot.png"
        assert shoot_window(explorer, parse_launch_args([*args, "--screenshot", str(out)])) is None
        return explorer, QImage(str(out))

    return take


def colours_in(image: QImage, window: QWidget, widget: QWidget) -> int:
    """How many colours the PNG has where `widget` sits (every 4th pixel): a drawn view has many."""
    area = QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())
    return len({image.pixel(x, y) for x in range(area.left(), area.right(), 4)
                for y in range(area.top(), area.bottom(), 4)})


def test_a_sweep_screenshot_shows_the_sweep_of_the_plan(shot, write_model):
    explorer, image = shot(str(write_model()), "--budget", "64M", "--ctx", "512", "--view", "sweep")
    whatif, window = explorer.whatif, explorer.window
    assert shows(whatif.sweep_dock) and not shows(whatif.compare_dock)
    rows = whatif.sweep.result().rows
    budgets, totals = whatif.sweep.chart.curves["total"].getData()
    assert len(rows) > 10 and {row.ctx for row in rows} == {512}
    assert list(budgets) == [row.budget for row in rows] and list(totals) == [row.total for row in rows]
    assert colours_in(image, window, whatif.sweep.chart) > 20


def test_a_compare_screenshot_shows_both_models(shot, write_model):
    first, second = write_model(), write_model(replace(WIDE, weight_type=T.Q4_K), name="q4.gguf")
    explorer, image = shot(str(first), "--budget", "64M", "--view", "compare", "--compare", str(second))
    whatif, window = explorer.whatif, explorer.window
    assert shows(whatif.compare_dock) and not shows(whatif.sweep_dock)
    table = whatif.compare.model
    headers = [table.headerData(c, Qt.Orientation.Horizontal) for c in (1, 2)]
    assert headers == [column_title(load_model(first)), column_title(load_model(second))] == ["wide.gguf", "q4.gguf"]
    assert table.rowCount() > 5 and table.rows()[-1].first == window.session.view.plan.total
    assert colours_in(image, window, whatif.compare) > 20


def test_a_quants_screenshot_shows_the_ladder_judged_on_the_preset(shot):
    eight_b = str(catalogue_path(find_entry("llama-3.1-8b-instruct")))
    explorer, image = shot(eight_b, "--view", "quants", "--preset", "RTX 4090")
    window, quants = explorer.window, explorer.quants
    assert shows(quants.dock) and not shows(explorer.whatif.sweep_dock)
    assert [gpu.name for gpu in window.session.state.machine.gpus] == ["RTX 4090"]
    ladder = quants.follower.ladder()
    assert ladder is not None and ladder.snapshot == window.session.state.machine and ladder.recommended.name == "Q8_0"
    assert colours_in(image, window, quants.view) > 20


def test_a_screenshot_of_a_url_opens_the_model_over_http(shot, httpserver):
    skeleton = catalogue_path(find_entry("llama-3.1-8b-instruct"))
    served = Served(skeleton)
    httpserver.expect_request("/m/8b.gguf").respond_with_handler(served.handler)
    explorer, _ = shot(httpserver.url_for("/m/8b.gguf"))
    assert explorer.window.session.state.model.n_layer == load_model(str(skeleton)).n_layer
    assert served.sent > 0 and explorer.window.session.view.plan is not None


def test_a_url_that_cannot_be_read_is_one_line(make_explorer, tmp_path, httpserver):
    httpserver.expect_request("/missing.gguf").respond_with_data("no", status=404)
    explorer = make_explorer()
    error = shoot_window(explorer, parse_launch_args([httpserver.url_for("/missing.gguf"), "--screenshot",
                                                      str(tmp_path / "x.png")]))
    assert error is not None and error.startswith("cannot open the URL: ") and "\n" not in error
    assert not (tmp_path / "x.png").exists()


def test_a_second_model_that_cannot_load_exits_2(tmp_path, write_model):  # noqa: F811
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF but not really")
    done = shoot(tmp_path, str(write_model()), "--screenshot", str(tmp_path / "x.png"), "--view", "compare",
                 "--compare", str(bad))
    assert done.returncode == 2
    assert done.stderr.startswith("gguf-budget: the second model cannot be compared: ") and done.stderr.count("\n") == 1
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("args, message", [
    (["--view", "sweep"], "--view, --compare, --size, --preset and --priced need --screenshot"),
    (["--preset", "RTX 4090"], "--view, --compare, --size, --preset and --priced need --screenshot"),
    (["--priced", "Q4_K_S"], "--view, --compare, --size, --preset and --priced need --screenshot"),
    (["--screenshot", "x.png", "--preset", "RTX 9999"], "argument --preset: no preset 'RTX 9999'; choose one of: "),
    (["--screenshot", "x.png", "--view", "compare"], "--view compare and --compare FILE2 go together"),
    (["--screenshot", "x.png", "--compare", __file__], "--view compare and --compare FILE2 go together"),
    (["--screenshot", "x.png", "--view", "compare", "--compare", "missing.gguf"], "no such file: missing.gguf"),
    (["--screenshot", "x.png", "--view", "table"], "argument --view: invalid choice: 'table'"),
])
def test_bad_view_arguments_exit_2_with_one_line(capsys, args, message):
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
