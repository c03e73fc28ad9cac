"""Launch → first plan drawn, and quitting: the real app, as a whole process, offscreen.

Each run starts `gguf-budget` (no arguments: the bundled demo model) in a fresh process with
settings, cache, data and log folders of its own (scratch ones, shared by the runs: the warm-up
run measures this machine's bandwidths once and keeps them, as a person's first launch does), and
reports (`--fresh`: new folders for every run, so each is a first launch that measures the
bandwidths while the window comes up):

- launch → first plan drawn: from starting the process to the end of the event-loop turn in which
  the window announced its first model (`modelLoaded`), its plan painted. Budget ≤ 600 ms.
- quit: from `close()` on the window to the process's end (the window's own teardown, the workers
  it waits for, the interpreter's exit). Budget ≤ 100 ms. Two moments: at the first plan drawn
  (the hardware probe and the bandwidth measurement may still run) and after an idle wait.
  A quit must exit 0 with nothing on stderr (no "Signal source has been deleted", no traceback).

The runs load compiled bytecode, as an installed app does: PYTHONDONTWRITEBYTECODE (set in some build and
CI shells, where every launch would compile the app's ~240 modules again, ~200 ms) is dropped for them, so
the warm-up run writes the cache the others read.

Medians of `--runs` runs; the load average is printed: on a busy machine these are upper figures.
Run: `python benchmarks/bench_launch.py [--runs N] [--idle SECONDS] [--fresh]`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OFFSCREEN_NOTICE = "does not support propagateSizeHints"
"""Qt's offscreen platform says this when a window is shown; it is not an error of the app."""

CHILD = r"""
import sys, time
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
import gguf_budget.gui.qt.app as app_module
from gguf_budget.gui.cli import main

idle_ms = int(sys.argv[1])
opened = app_module.open_window

def watched(options, *args, **kwargs):
    window = opened(options, *args, **kwargs)

    def close():
        print(f"closing {time.time():.6f}", flush=True)
        window.close()

    def drawn():
        window.modelLoaded.disconnect(drawn)
        QApplication.processEvents()
        print(f"drawn {time.time():.6f}", flush=True)
        QTimer.singleShot(idle_ms, close)

    window.modelLoaded.connect(drawn)
    return window

app_module.open_window = watched
sys.exit(main([]))
"""


def run_once(idle_ms: int, scratch: Path) -> dict[str, float | str | int]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(scratch / "config"),
           "XDG_STATE_HOME": str(scratch / "state"), "XDG_CACHE_HOME": str(scratch / "cache"),
           "XDG_DATA_HOME": str(scratch / "data"), "GGUF_BUDGET_CONFIG_DIR": str(scratch / "app-config"),
           "GGUF_BUDGET_CACHE_DIR": str(scratch / "app-cache"), "GGUF_BUDGET_DATA_DIR": str(scratch / "app-data")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.time()
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(idle_ms)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    out, err = child.communicate(timeout=120)
    ended = time.time()
    marks = dict(line.split() for line in out.splitlines() if line.startswith(("drawn ", "closing ")))
    if "drawn" not in marks or "closing" not in marks:
        raise SystemExit(f"the window did not come up: exit {child.returncode}\n{err[-2000:]}")
    return {"launch": (float(marks["drawn"]) - start) * 1000, "quit": (ended - float(marks["closing"])) * 1000,
            "code": child.returncode, "stderr": "\n".join(line for line in err.splitlines() if OFFSCREEN_NOTICE not in line)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--idle", type=float, default=4.0, help="seconds to wait before the idle quit (default 4)")
    parser.add_argument("--fresh", action="store_true", help="new app folders for every run (each a first launch)")
    args = parser.parse_args()
    load_before = os.getloadavg()
    results: dict[str, list[dict[str, float | str | int]]] = {"at first plan": [], "after idle": []}
    with tempfile.TemporaryDirectory() as scratch:
        run_once(int(args.idle * 1000), Path(scratch))
        for n in range(args.runs):
            for label, idle_ms in (("at first plan", 0), ("after idle", int(args.idle * 1000))):
                folders = Path(scratch) / f"{label}-{n}" if args.fresh else Path(scratch)
                results[label].append(run_once(idle_ms, folders))
    launches = [float(r["launch"]) for rs in results.values() for r in rs]
    print(f"gguf-budget window, offscreen, median of {args.runs} runs per row; {os.cpu_count()} CPUs; load average "
          f"{' '.join(f'{x:.2f}' for x in load_before)} before, {' '.join(f'{x:.2f}' for x in os.getloadavg())} after")
    print(f"launch → first plan drawn  {statistics.median(launches):7.0f} ms  "
          f"({statistics.median(launches) / 600:.2f}× the 600 ms budget; min {min(launches):.0f}, max {max(launches):.0f})")
    for label, rs in results.items():
        quits = [float(r["quit"]) for r in rs]
        bad = [r for r in rs if r["code"] != 0 or r["stderr"]]
        print(f"quit {label:<21} {statistics.median(quits):7.0f} ms  ({statistics.median(quits) / 100:.2f}× the "
              f"100 ms budget; min {min(quits):.0f}, max {max(quits):.0f}); "
              f"{len(rs) - len(bad)}/{len(rs)} exited 0 with an empty stderr")
        for r in bad[:2]:
            print(f"    exit {r['code']}: {str(r['stderr'])[-600:]}")


if __name__ == "__main__":
    main()
