"""The desktop bundle's entry point: the same `main` the wheel's `gguf-budget` console script runs.

`freeze_support()` first: the library scan reads headers in worker processes (spawned), and in a
frozen bundle a worker starts this same executable, which must become the worker, not the app.
"""

import multiprocessing
import sys

from gguf_budget.gui.cli import main

if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(main())
