"""The headless subcommands; each module has HELP, `add_arguments(parser)` and `run(args) -> int`."""

from __future__ import annotations

from types import ModuleType

from . import inspect_cmd
from .common import CommandError

COMMANDS: dict[str, ModuleType] = {
    "inspect": inspect_cmd,
}

__all__ = ["COMMANDS", "CommandError"]
