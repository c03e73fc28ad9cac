"""Frame time of the real window (docs/performance.md): slider tick → derive + redraw done, ≤ 16 ms median.

Drives the composed window (`compose`: `MainWindow` with its what-if add-on) offscreen on a header-only Llama-3-70B shape (80 layers, 128256-token
vocabulary, 131072 context; auto ctx bisects 1,024 candidates) against a hypothetical
machine with one 24 GiB GPU, so every tick also re-estimates the GPU split. Each sample is
one `setValue` on a slider, then the event loop is drained until the coalescing timer has
fired and the repaint it queued has been painted. Each tick derives the whole view: the plan,
its decode estimate (the banner's speed line, the pinned caption), the full load and the largest
ctx it fits (reused when only the budget moved). Prints median and p95 per slider and
their ratio to one 60 Hz frame; exits 1 when a median exceeds it. The what-if docks are
measured hidden, then shown: the budget sweep (a budget tick moves its mark; a ctx tick only
defers its next sweep) and the compare view with a second model (every tick replans it).

Run: .venv/bin/python benchmarks/bench_frame.py [--ticks N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from bench_shapes import LLAMA3_70B, GiB  # noqa: E402
from gguf.constants import GGMLQuantizationType as T  # noqa: E402
from gguf_factory import write_gguf  # noqa: E402
from PySide6.QtCore import QEventLoop, QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication, QDockWidget, QSlider  # noqa: E402

from gguf_budget.core.machine.snapshot import hypothetical_machine  # noqa: E402
from gguf_budget.gui.qt.app import Explorer, compose  # noqa: E402
from gguf_budget.gui.qt.main_window import MainWindow  # noqa: E402
from gguf_budget.gui.qt.whatif.wiring import WhatIf  # noqa: E402

FRAME_S = 1 / 60


def machine():
    return hypothetical_machine(128 * GiB, gpu_count=1, gpu_total=24 * GiB)


def drain(app: QApplication, window: MainWindow) -> None:
    """Until the replan has run and the paints it queued are done."""
    while window.plan_pending():
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents)
    app.sendPostedEvents()
    app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents)


def open_window(app: QApplication, path: Path, settings: Path) -> Explorer:
    explorer = compose(QSettings(str(settings), QSettings.Format.IniFormat), probe_backend=machine,
                       log_folder=settings.parent)
    window = explorer.window
    window.resize(1440, 900)
    window.show()
    window.open_path(str(path))
    deadline = time.monotonic() + 60
    while (window.current_plan() is None or window.current_fit() is None) and time.monotonic() < deadline:
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)
    if window.current_fit() is None:
        raise SystemExit("the model did not load")
    while not window.bandwidths_measured() and time.monotonic() < deadline:
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)
    return explorer


def wait_until(app: QApplication, done) -> None:
    deadline = time.monotonic() + 60
    while not done() and time.monotonic() < deadline:
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)
    if not done():
        raise SystemExit("the what-if view did not answer")


def show_compare(app: QApplication, whatif: WhatIf, second: Path) -> None:
    """Raise the compare dock with a second model, so every tick also replans the second model."""
    compare = whatif.compare
    whatif.compare_dock.raise_()
    compare.open_second(str(second))
    wait_until(app, lambda: compare.second_plan() is not None)


def sweep_values(slider: QSlider, ticks: int) -> list[int]:
    """Back and forth across the whole range, so every regime (impossible … all pinned) is hit."""
    lo, hi = slider.minimum(), slider.maximum()
    half = max(ticks // 2, 1)
    up = [lo + (hi - lo) * i // half for i in range(half)]
    return up + up[::-1]


def time_ticks(app: QApplication, window: MainWindow, slider: QSlider, values: list[int]) -> list[float]:
    times = []
    before = window.recompute_count
    for v in values:
        start = time.perf_counter()
        slider.setValue(v)
        drain(app, window)
        times.append(time.perf_counter() - start)
    assert window.recompute_count - before >= len(set(values)) - 2, "ticks did not replan"
    return times


def report(name: str, times: list[float]) -> bool:
    med = statistics.median(times)
    p95 = statistics.quantiles(times, n=20)[-1]
    print(f"  {name:<28} median {med * 1e3:6.2f} ms   p95 {p95 * 1e3:6.2f} ms   "
          f"({med / FRAME_S:.2f}× of a 16.7 ms frame, {len(times)} ticks)")
    return med <= FRAME_S


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=400)
    ticks = parser.parse_args().ticks
    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        path = write_gguf(Path(tmp) / "llama-3-70b.gguf", LLAMA3_70B, "header_only")[0]
        explorer = open_window(app, path, Path(tmp) / "settings.ini")
        window, whatif = explorer.window, explorer.whatif
        budget = window.findChild(QSlider, "budgetSlider")
        ctx = window.findChild(QSlider, "ctxSlider")
        print(f"Frame time, 80-layer model, window {window.width()}×{window.height()} offscreen:")
        time_ticks(app, window, budget, sweep_values(budget, 40))
        for dock in window.findChildren(QDockWidget):  # every add-on's dock: sweep, compare, quants, library, …
            dock.hide()
        ok = report("budget, docks hidden", time_ticks(app, window, budget, sweep_values(budget, ticks)))
        whatif.compare_dock.show()
        whatif.sweep_dock.show()
        whatif.sweep_dock.raise_()
        wait_until(app, lambda: whatif.sweep.result() is not None and not whatif.sweep.worker.busy)
        ok &= report("budget, sweep dock shown", time_ticks(app, window, budget, sweep_values(budget, ticks)))
        budget.setValue((budget.minimum() + budget.maximum()) // 2)
        drain(app, window)
        ok &= report("ctx, sweep dock shown", time_ticks(app, window, ctx, sweep_values(ctx, ticks)))
        q8 = write_gguf(Path(tmp) / "llama-3-70b-q8.gguf", replace(LLAMA3_70B, weight_type=T.Q8_0), "header_only")[0]
        show_compare(app, whatif, q8)
        ok &= report("budget, compare dock shown", time_ticks(app, window, budget, sweep_values(budget, ticks)))
        window.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
