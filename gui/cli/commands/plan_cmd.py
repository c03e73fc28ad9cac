"""`gguf-budget plan FILE --budget SIZE [...]`: the RAM-budget contract for one model.

Exit codes: 0 feasible, forced (`--force`) or unlimited (`--budget 0`); 3 impossible (the
report says why, on stdout, or the JSON with `feasible: false`); 2 bad input.
"""

from __future__ import annotations

import argparse

from gguf_budget.core import HEAD_MODES, MAX_BUFFERS, BudgetRequest, plan_memory
from gguf_budget.core.model.kv import DEFAULT_KV_TYPE, KV_TYPES
from gguf_budget.core.plan.types import HeadMode

from gguf_budget.gui.cli.commands.common import load
from gguf_budget.gui.cli.args import EXIT_IMPOSSIBLE, size_arg
from gguf_budget.gui.cli.commands.exports import add_format_argument, emit_plan

HELP = "plan a run under a RAM budget: an itemized ledger, or why it cannot fit"


def positive_int(text: str) -> int:
    """argparse type for ctx and ring depth."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_request_arguments(p: argparse.ArgumentParser) -> None:
    """The knobs `plan` and `sweep` share."""
    p.add_argument("file", help="a .gguf file, or any shard of a split model")
    p.add_argument("--ctx", type=positive_int, help="context length to honour (default: the largest that fits)")
    p.add_argument("--buffers", type=positive_int, default=2, help=f"ring depth, 1..{MAX_BUFFERS} (default 2)")
    p.add_argument("--head", choices=[m.value for m in HEAD_MODES], default=HeadMode.AUTO.value,
                   help="LM head resident, streamed, or either")
    p.add_argument("--kv-type", choices=[t.value for t in KV_TYPES], default=DEFAULT_KV_TYPE.value, help="KV cache type")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_request_arguments(p)
    p.add_argument("--budget", type=size_arg, required=True, help="RAM budget: 512M, 1.5G, 2GiB, bytes; 0 = unlimited")
    p.add_argument("--force", action="store_true", help="run the minimum configuration even over budget")
    add_format_argument(p)


def request_from(args: argparse.Namespace, budget: int, force: bool = False) -> BudgetRequest:
    """The request the flags describe (a RequestError when they are out of bounds)."""
    return BudgetRequest(budget_bytes=budget, ctx=args.ctx, n_buffers=args.buffers, head_mode=args.head,
                         kv_type=args.kv_type, force=force)


def run(args: argparse.Namespace) -> int:
    request = request_from(args, args.budget, args.force)
    spec = load(args.file)
    plan = plan_memory(spec, request)
    emit_plan(args, plan, spec)
    return EXIT_IMPOSSIBLE if plan.impossible else 0
