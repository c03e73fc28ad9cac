"""Export options the plan and sweep commands share: `plan --format text|md|json`, `sweep --csv FILE`.

`--format json` prints exactly what `--json` prints; giving `--json` with another format is
bad input. The CSV goes to FILE (the usual table or JSON still goes to stdout); a FILE that
cannot be written is bad input (exit 2), one line on stderr.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from gguf_budget.core.errors import CommandError
from gguf_budget.core import MemoryPlan, ModelSpec, SweepResult, plan_text
from gguf_budget.core.speed.estimate import SpeedEstimate
from gguf_budget.core.views.export import EXPORT_FORMATS, plan_markdown, sweep_csv
from gguf_budget.core.views.speed_view import plan_payload, plan_report_with_speed

from gguf_budget.gui.cli.args import say
from gguf_budget.gui.cli.commands.common import emit_json


def add_format_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=EXPORT_FORMATS,
                   help="text (default), md (a Markdown report) or json (the same as --json)")


def chosen_format(args: argparse.Namespace) -> str:
    if args.json and args.format not in (None, "json"):
        raise CommandError(f"--json and --format {args.format} disagree; give one of them")
    return "json" if args.json else args.format or "text"


def emit_plan(args: argparse.Namespace, plan: MemoryPlan, model: ModelSpec, speed: SpeedEstimate | None,
              notes: tuple[str, ...], beside: tuple[str, dict[str, Any]] | None = None) -> None:
    """The plan with its decode estimate; `notes` say which bandwidths could not be measured; `beside` is
    what runs next to the plan outside its budget (a projector): a line for the reports, a JSON value."""
    fmt = chosen_format(args)
    line = [beside[0]] if beside else []
    if fmt == "json":
        emit_json({**plan_payload(plan, speed, notes), **({"projector": beside[1]} if beside else {})})
    elif fmt == "md":
        say("".join(f"{x}\n\n" for x in line) + plan_markdown(plan, model), end="", wrap=False)
    else:
        say("\n".join([*line, plan_report_with_speed(plan_text(plan), speed), *notes]))


def add_csv_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--csv", metavar="FILE", help="also write the sweep to FILE as CSV, one row per budget")


def write_csv(path: str, result: SweepResult) -> None:
    try:
        Path(path).write_text(sweep_csv(result), encoding="utf-8")
    except OSError as e:
        raise CommandError(f"cannot write {path}: {e.strerror or e}") from None
