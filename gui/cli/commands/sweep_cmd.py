"""`gguf-budget sweep FILE|--catalog NAME [--budgets FROM:TO:STEP] [...]`: the plan at each budget, and its thresholds.

Without `--budgets` the range is the window's automatic one (`core.plan.sweep.automatic_range`).

Exit codes: 0 (a sweep is a report, even when no budget is feasible); 2 bad input.
"""

from __future__ import annotations

import argparse

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import RequestError, automatic_range, budget_range, sweep_budgets, sweep_dict, sweep_text
from gguf_budget.core.speed.sweep import with_speeds

from gguf_budget.gui.cli.args import say
from gguf_budget.gui.cli.commands.common import chosen_model, emit_json, listed_catalogue
from gguf_budget.gui.cli.commands.exports import add_csv_argument, write_csv
from gguf_budget.gui.cli.commands.plan_cmd import PLAN_TIERS, add_request_arguments, request_from
from gguf_budget.gui.cli.commands.speed_args import bandwidths_from, host_available_from



def budgets_arg(text: str) -> tuple[int, ...]:
    """argparse type for FROM:TO:STEP, e.g. 128M:2G:64M."""
    try:
        return budget_range(text)
    except RequestError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_request_arguments(p)
    p.add_argument("--budgets", type=budgets_arg, metavar="FROM:TO:STEP",
                   help="budgets to plan, TO included, e.g. 128M:2G:64M (default: the window's automatic range)")
    add_csv_argument(p)


def run(args: argparse.Namespace) -> int:
    if listed_catalogue(args):
        return 0
    spec = chosen_model(args).spec
    request = request_from(args, budget=Budget.unlimited())
    budgets = args.budgets or budget_range(automatic_range(spec, request))
    result = sweep_budgets(spec, budgets, request)
    bandwidths, notes = bandwidths_from(args, spec, PLAN_TIERS)
    result = with_speeds(spec, result, request.kv_type, bandwidths, host_available_from(args))
    if args.csv:
        write_csv(args.csv, result)
    if args.json:
        emit_json(sweep_dict(result))
    else:
        say("\n".join([sweep_text(result), *notes]))
    return 0
