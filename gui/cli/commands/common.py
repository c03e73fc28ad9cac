"""What every subcommand shares: loading a model, parsing sizes, printing JSON, failing cleanly."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from gguf_budget.core import ModelLoadError, ModelSpec, load_model
from gguf_budget.gui.cli.args import size_arg


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
