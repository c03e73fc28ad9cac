"""Launch → first plan drawn, and quitting: the real app, as a whole process, offscreen.

Each run starts `gguf-budget` (no arguments: the bundled demo model) in a fresh process with
settings, cache, data and log folders of its own (scratch ones, shared by the runs: the warm-up
run measures this machine's bandwidths once and keeps them, as a person's first launch does), and
reports (`--fresh`: new folders for every run, so each is a first launch that measures the
bandwidths while the window comes up):

- launch → first plan drawn: from starting the process to the end of the event-loop turn in which
  the window announced its first model (`modelLoaded`), its plan painted. Budget ≤ 600 ms. With it, the
  CPU time the process had used by then (every thread), which a loaded machine inflates less than the wall.
- quit: from `close()` on the window to the process's end (the window's own teardown, the workers
  it waits for, the interpreter's exit). Budget ≤ 100 ms. Four moments: at the first plan drawn
  (the hardware probe and the bandwidth measurement may still run); just after it (the close is due
  JUST_AFTER_MS after the plan was drawn, one of them a run, while the add-ons install and the sweep
  chart is built: measured from when it was due, so a GUI thread busy at that moment counts); after
  an idle wait; and, given `--llama-bin` (a llama-server) and `--model` (a GGUF it can run: the demo
  is headers only), during a measurement of that model (the close comes with its first progress report).
  A quit must exit 0 with nothing on stderr (no "Signal source has been deleted", no traceback).

`--compare PYTHON` runs every row with another installed app (that interpreter's `gguf_budget`, e.g. the
old code's venv) too, alternately with this one, run by run, so both are measured in the same minutes.

The runs load compiled bytecode, as an installed app does: PYTHONDONTWRITEBYTECODE (set in some build and
CI shells, where every launch would compile the app's ~240 modules again, ~200 ms) is dropped for them, so
the warm-up run writes the cache the others read.

Medians of `--runs` runs; the load average is printed: on a busy machine these are upper figures.
Run: `python benchmarks/bench_launch.py [--runs N] [--idle SECONDS] [--fresh] [--llama-bin PATH --model GGUF]
[--compare PYTHON]`.
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

TESTS = Path(__file__).resolve().parent.parent / "tests"
"""Where the child finds `launch_watch` (it imports nothing of the app, so the launch order holds)."""

OFFSCREEN_NOTICE = "does not support propagateSizeHints"
"""Qt's offscreen platform says this when a window is shown; it is not an error of the app."""

JUST_AFTER_MS = (150, 400, 800, 1500)
"""When a "just after" close is due, after the first plan: the runs take them in turn."""

CHILD = r"""
import resource, sys, time
from launch_watch import watch_open_window

idle_ms, measuring = int(sys.argv[1]), sys.argv[2] == "measure"
closed = []


def keep(original):  # `open_window` as the launcher imports the app (tests/launch_watch.py)
    global opened
    opened = original
    return watched


watch_open_window(keep)
from gguf_budget.gui.cli import main

def watched(options, *args, composed, **kwargs):
    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtWidgets import QApplication

    def close(due):
        closed.append(due)
        print(f"closing {due:.6f}", flush=True)
        window.close()

    def drawn():
        window.modelLoaded.disconnect(drawn)
        QApplication.processEvents()
        now = time.time()
        used = resource.getrusage(resource.RUSAGE_SELF)
        print(f"drawn {now:.6f}", flush=True)
        print(f"cpu {used.ru_utime + used.ru_stime:.6f}", flush=True)
        if not measuring:
            timer = QTimer(window, singleShot=True, interval=idle_ms, timerType=Qt.TimerType.PreciseTimer)
            timer.timeout.connect(lambda: close(now + idle_ms / 1000))
            timer.start()

    def installed(explorer):
        composed(explorer)
        if measuring:
            explorer.evidence.job.progressed.connect(lambda _report: closed or close(time.time()))
            explorer.evidence.measure()

    window = opened(options, *args, composed=installed, **kwargs)
    window.modelLoaded.connect(drawn)
    return window

sys.argv[1:] = sys.argv[3:]  # the launcher as the program itself (`main()`: `cli` Rule 8)
sys.exit(main())
"""


def run_once(python: str, idle_ms: int, scratch: Path, measure: tuple[str, str] | None = None) -> dict[str, float | str | int]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(scratch / "config"),
           "XDG_STATE_HOME": str(scratch / "state"), "XDG_CACHE_HOME": str(scratch / "cache"),
           "XDG_DATA_HOME": str(scratch / "data"), "GGUF_BUDGET_CONFIG_DIR": str(scratch / "app-config"),
           "GGUF_BUDGET_CACHE_DIR": str(scratch / "app-cache"), "GGUF_BUDGET_DATA_DIR": str(scratch / "app-data")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if measure:
        env["GGUF_BUDGET_LLAMA_BIN"] = measure[0]
    start = time.time()
    child = subprocess.Popen([python, "-c", f"import sys; sys.path.append({str(TESTS)!r})\n{CHILD}", str(idle_ms), *(("measure", measure[1]) if measure else ("close",))],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out, err = child.communicate(timeout=120)
    ended = time.time()
    marks = dict(line.split() for line in out.splitlines() if line.startswith(("drawn ", "closing ", "cpu ")))
    if "drawn" not in marks or "closing" not in marks:
        raise SystemExit(f"the window did not come up or was not closed: exit {child.returncode}\n{err[-2000:]}")
    return {"launch": (float(marks["drawn"]) - start) * 1000, "cpu": float(marks["cpu"]) * 1000, "quit": (ended - float(marks["closing"])) * 1000,
            "after": idle_ms, "code": child.returncode, "stderr": "\n".join(line for line in err.splitlines() if OFFSCREEN_NOTICE not in line)}


def report(name: str, rows: dict[str, list[dict[str, float | str | int]]]) -> None:
    launches = [float(r["launch"]) for label, rs in rows.items() if label != "during a measurement" for r in rs]
    cpus = [float(r["cpu"]) for label, rs in rows.items() if label != "during a measurement" for r in rs]
    print(f"{name}:")
    print(f"  launch → first plan drawn  {statistics.median(launches):7.0f} ms  "
          f"({statistics.median(launches) / 600:.2f}× the 600 ms budget; min {min(launches):.0f}, max {max(launches):.0f}); "
          f"CPU of the process by then {statistics.median(cpus):.0f} ms (min {min(cpus):.0f})")
    for label, rs in rows.items():
        quits = [float(r["quit"]) for r in rs]
        bad = [r for r in rs if r["code"] != 0 or r["stderr"]]
        print(f"  quit {label:<21} {statistics.median(quits):7.0f} ms  ({statistics.median(quits) / 100:.2f}× the "
              f"100 ms budget; min {min(quits):.0f}, max {max(quits):.0f}); "
              f"{len(rs) - len(bad)}/{len(rs)} exited 0 with an empty stderr")
        if label == "just after first plan":
            print("      due → quit: " + ", ".join(f"{r['after']} ms → {float(r['quit']):.0f} ms" for r in rs))
        for r in bad[:2]:
            print(f"      exit {r['code']}: {str(r['stderr'])[-600:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--idle", type=float, default=4.0, help="seconds to wait before the idle quit (default 4)")
    parser.add_argument("--fresh", action="store_true", help="new app folders for every run (each a first launch)")
    parser.add_argument("--llama-bin", help="a llama-server: adds the quit during a measurement (of --model)")
    parser.add_argument("--model", help="a GGUF llama.cpp can run, for the measurement (the demo is headers only)")
    parser.add_argument("--compare", metavar="PYTHON", help="another interpreter's installed app, run alternately")
    args = parser.parse_args()
    apps = {"this": sys.executable, **({"compared": args.compare} if args.compare else {})}
    moments = [("at first plan", lambda n: 0, None), ("just after first plan", lambda n: JUST_AFTER_MS[n % 4], None),
               ("after idle", lambda n: int(args.idle * 1000), None)]
    if args.llama_bin and args.model:
        moments.append(("during a measurement", lambda n: 0, (args.llama_bin, args.model)))
    load_before = os.getloadavg()
    results = {name: {label: [] for label, _, _ in moments} for name in apps}
    with tempfile.TemporaryDirectory() as scratch:
        for name, python in apps.items():
            run_once(python, int(args.idle * 1000), Path(scratch) / name)  # measures the bandwidths, compiles
        for n in range(args.runs):
            for label, delay, llama in moments:
                order = list(apps.items()) if n % 2 == 0 else list(reversed(apps.items()))
                for name, python in order:
                    folders = Path(scratch) / name / (f"{label}-{n}" if args.fresh else "")
                    results[name][label].append(run_once(python, delay(n), folders, llama))
    print(f"gguf-budget window, offscreen, median of {args.runs} runs per row; {os.cpu_count()} CPUs; load average "
          f"{' '.join(f'{x:.2f}' for x in load_before)} before, {' '.join(f'{x:.2f}' for x in os.getloadavg())} after")
    for name, python in apps.items():
        report(f"{name} ({python})", results[name])


if __name__ == "__main__":
    main()
