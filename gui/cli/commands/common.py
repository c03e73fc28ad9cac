"""What every subcommand shares: loading a model (a file, or a URL read header-only), printing JSON.

Rule 1: FILE may be a local path or what `core.remote.refs` reads as remote (a URL, `hf://…`,
        `owner/repo:QUANT`); an existing local file always wins. A remote read says on stderr what
        it cost, so stdout stays the command's own output (and valid JSON with --json).
Rule 2: the remote limits (`--max-header`) are set once per process by `main`, like the log level.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from gguf_budget.core import BudgetError, ModelSpec, load_model
from gguf_budget.core.remote.fetch import FetchLimits
from gguf_budget.core.remote.open import RemoteSource, open_remote
from gguf_budget.core.remote.refs import parse_ref
from gguf_budget.core.safe_text import safe_text


class CommandError(BudgetError):
    """Arguments that do not go together, or an output file that cannot be written (exit 2).

    The core's own errors (a model that does not load, a request out of bounds, a plan it
    refuses) reach `main` as they are: it reports every `BudgetError` the same way.
    """


class RemoteOptions:
    """Rule 2: how remote headers are read in this process."""

    limits = FetchLimits()


def load(path: str) -> ModelSpec:
    return load_with_source(path)[0]


def load_with_source(path: str) -> tuple[ModelSpec, RemoteSource | None]:
    """The model at `path` (Rule 1), and where its header came from when it was remote."""
    ref = parse_ref(path, local_exists=os.path.exists(path))
    if ref is None:
        return load_model(path), None
    spec, source = open_remote(ref, limits=RemoteOptions.limits)
    print(f"gguf-budget: {safe_text(source.summary())}", file=sys.stderr)
    return spec, source


def emit_json(payload: Any) -> None:
    json.dump(payload, sys.stdout, indent=2)
    sys.stdout.write("\n")
