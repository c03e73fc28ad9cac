"""The Library dock with 50,000 rows: what the GUI thread spends to show, sort and filter them.

The rows are made in memory (no files): one LibraryEntry per model, judged. The table's rows are laid
out first, as the scan's worker thread does (`table_rows`, off the GUI thread); then the GUI thread
shows them, paints the first screen, sorts by Size, and filters. The load average is printed: on a
busy machine these are upper figures.

Budget: each GUI-thread step ≤ 0.25 s (a QSortFilterProxyModel took 4.9 s to sort and 1.9 s to filter
50,000 rows, asking `data()` once per comparison).

Run: `QT_QPA_PLATFORM=offscreen python benchmarks/bench_library_table.py [--rows N]`.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from gguf_budget.core.library.assess import Assessment
from gguf_budget.core.library.scan import LibraryEntry, Scan
from gguf_budget.core.library.stores import StoreKind, StoreRoot
from gguf_budget.gui.qt.library.dock import LibraryView
from gguf_budget.gui.qt.library.table import table_rows

BUDGET_S = 0.25


def entries(n: int) -> tuple[LibraryEntry[Assessment], ...]:
    judged = Assessment(n_layer=32, fit_verdict="cpu_only", gpu_layers=0, fit_ctx=4096, max_ctx=4096,
                        plan_outcome="feasible", plan_ctx=4096, pinned=32, error=None)
    return tuple(LibraryEntry(kind=StoreKind.USER, name=f"model-{i:06d}-Q4_K_M.gguf", path=f"/models/m{i}.gguf",
                              shards=1, size_bytes=4_000_000_000 + (i * 7919) % 100_000, error=None,
                              architecture="llama", file_type="Q4_K_M", n_params=8_000_000_000, assessment=judged)
                 for i in range(n))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    args = parser.parse_args()
    app = QApplication([])
    view = LibraryView(lambda: None)
    view.resize(1200, 400)
    view.show()
    app.processEvents()
    made = entries(args.rows)
    start = time.perf_counter()
    rows = table_rows(made)
    worker = time.perf_counter() - start
    steps = {}

    def step(name: str, action) -> None:
        t = time.perf_counter()
        action()
        app.processEvents()
        steps[name] = time.perf_counter() - t

    step("show", lambda: view._scanned((Scan(made, (StoreRoot(StoreKind.USER, Path("/models")),), True), rows)))
    step("sort by size", lambda: view.view.sortByColumn(3, Qt.SortOrder.DescendingOrder))
    step("filter", lambda: view.filter.setText("model-0421"))
    step("clear filter", lambda: view.filter.setText(""))
    print(f"{args.rows:,} rows; load average {os.getloadavg()[0]:.2f}")
    print(f"  laid out on the worker thread: {worker * 1000:7.0f} ms (not the GUI thread)")
    for name, seconds in steps.items():
        verdict = "ok" if seconds <= BUDGET_S else f"OVER {BUDGET_S:g} s"
        print(f"  GUI thread, {name:<13} {seconds * 1000:7.0f} ms  {verdict}")


if __name__ == "__main__":
    main()
