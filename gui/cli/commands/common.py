"""What every subcommand shares: loading a model, parsing sizes, printing JSON, failing cleanly."""

from __future__ import annotations

import json
import sys
from typing import Any

from gguf_budget.core import ModelLoadError, ModelSpec, load_model


class CommandError(Exception):
    """Bad input to a subcommand: printed as one line, exit code 2."""


def load(path: str) -> ModelSpec:
    try:
        return load_model(path)
    except ModelLoadError as e:
        raise CommandError(str(e)) from None



def emit_json(payload: Any) -> None:
    json.dump(payload, sys.stdout, indent=2)
    sys.stdout.write("\n")
