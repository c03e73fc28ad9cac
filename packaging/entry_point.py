"""The desktop bundle's entry point: the same `main` the wheel's `gguf-budget` console script runs."""

import sys

from gguf_budget.gui.cli import main

if __name__ == "__main__":
    sys.exit(main())
