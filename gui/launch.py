"""`gguf-budget [FILE]` without a subcommand. Until the window lands this inspects the model."""

from __future__ import annotations

import sys
from typing import Sequence

from gguf_budget.resources import demo_model_path

from .commands import COMMANDS, CommandError


def launch(args: Sequence[str]) -> int:
    path = args[0] if args else str(demo_model_path())
    parsed = type("Args", (), {"file": path, "json": False})()
    try:
        return COMMANDS["inspect"].run(parsed)
    except CommandError as e:
        print(f"gguf-budget: {e}", file=sys.stderr)
        return 2
