"""`python -m gguf_budget.gui.cli`: the same entry point as the `gguf-budget` script."""

import sys

from gguf_budget.gui.cli import main

sys.exit(main())
