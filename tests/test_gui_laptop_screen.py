"""Nothing off-screen at 1280 × 720 (issue 36, items 4–5): the real window, as the app opens it, on an offscreen
screen of exactly 1280 × 720 (a process of its own: `tests/laptop_screen.py`), in every dock and view state —
no dock, a goal applied, sweep, compare, Quants, Library, a priced quantization. It fails when a window's frame leaves the
available area, a widget lies off screen, a text is clipped or elided without its tooltip, or Quants or
Library shows fewer than 12 rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCREEN = HERE / "data" / "screen-1280x720.json"


def test_every_dock_and_view_state_fits_a_1280_by_720_screen(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={SCREEN}", "HOME": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = subprocess.run([sys.executable, str(HERE / "laptop_screen.py")], env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert len(report) == 7
    problems = {state: found for state, found in report.items() if found}
    assert problems == {}, json.dumps(problems, indent=1)
