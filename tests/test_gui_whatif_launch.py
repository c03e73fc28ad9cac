"""`--screenshot --view sweep|compare [--compare FILE2]`: the what-if views as PNGs, bad combinations exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from gguf.constants import GGMLQuantizationType as T
from gui_support import WIDE
from PySide6.QtGui import QImage

from gguf_budget.gui.cli import main

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


def test_a_second_model_that_cannot_load_exits_2(tmp_path, write_model):  # noqa: F811
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF but not really")
    done = shoot(tmp_path, str(write_model()), "--screenshot", str(tmp_path / "x.png"), "--view", "compare",
                 "--compare", str(bad))
    assert done.returncode == 2
    assert done.stderr.startswith("gguf-budget: the second model cannot be compared: ") and done.stderr.count("\n") == 1
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("args, message", [
    (["--view", "sweep"], "--view and --compare need --screenshot"),
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
