"""The headless subcommands; each module has HELP, `add_arguments(parser)` and `run(args) -> int`."""

from __future__ import annotations

from types import ModuleType

from gguf_budget.gui.cli.commands import (
    evidence_cmd, fit_cmd, hw_cmd, inspect_cmd, library_cmd, measure_cmd, plan_cmd, quants_cmd, sweep_cmd,
)
from gguf_budget.gui.cli.commands.common import CommandError

COMMANDS: dict[str, ModuleType] = {
    "inspect": inspect_cmd,
    "plan": plan_cmd,
    "sweep": sweep_cmd,
    "fit": fit_cmd,
    "hw": hw_cmd,
    "quants": quants_cmd,
    "library": library_cmd,
    "evidence": evidence_cmd,
    "measure": measure_cmd,
}

__all__ = ["COMMANDS", "CommandError"]
