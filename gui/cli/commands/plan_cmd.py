"""`gguf-budget plan FILE|--catalog NAME [--budget SIZE] [...]`: the RAM-budget contract for one model.

Without `--budget` the budget is this machine's usable RAM (available − the host reserve, as
`fit` reads it), and the output says so: the first line of the text or Markdown, stderr with JSON.
`--print-command` prints only the Budget plan's runtime flags (`views.run_it`), the words the window's "Run it"
line shows. Exit codes: 0 feasible, forced (`--force`) or unlimited (`--budget 0`); 3 impossible (the
report says why, on stdout, or the JSON with `feasible: false`); 2 bad input.
"""

from __future__ import annotations

import argparse

from gguf_budget.core.errors import CommandError
from gguf_budget.core.model.context import DEFAULT_CTX
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import HEAD_MODES, BudgetRequest, RequestError, plan_memory
from gguf_budget.core.model.kv import DEFAULT_KV_TYPE, KV_TYPES
from gguf_budget.core.machine.probe import probe_host
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.machine.usable import DEFAULT_HOST_RESERVE
from gguf_budget.core.ranges import BUDGET, BUFFERS, CONTEXT, MEMORY
from gguf_budget.core.plan.types import CtxPolicy, HeadMode
from gguf_budget.core.speed.estimate import plan_speed
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.core.units import human_bytes
from gguf_budget.core.machine.usable import machine_budget
from gguf_budget.core.views.machine_budget import machine_budget_text

from gguf_budget.gui.cli.commands.common import add_model_arguments, chosen_model, listed_catalogue
from gguf_budget.gui.cli.args import EXIT_IMPOSSIBLE, complain, ranged, say
from gguf_budget.gui.cli.commands.exports import add_format_argument, emit_plan
from gguf_budget.gui.cli.commands.projector_args import add_projector_arguments, projector_beside_plan
from gguf_budget.gui.cli.commands.speed_args import (
    add_bandwidth_arguments, add_prompt_argument, bandwidths_from, host_available_from,
)

PLAN_TIERS = ("ram", "disk")


def add_request_arguments(p: argparse.ArgumentParser) -> None:
    """The knobs `plan` and `sweep` share."""
    add_model_arguments(p)
    p.add_argument("-c", "--ctx-size", dest="ctx", type=ranged(CONTEXT), help="llama.cpp's spelling of --ctx")
    p.add_argument("--ctx", type=ranged(CONTEXT), help=f"context to honour exactly, {CONTEXT.text} "
                                                     "(default: chosen by --prefer)")
    p.add_argument("--ctx-cap", type=ranged(CONTEXT), metavar="N",
                   help=f"the most context an auto ctx may take, {CONTEXT.text} (default: the model's context length)")
    p.add_argument("--prefer", choices=[c.value for c in CtxPolicy], default=CtxPolicy.SPEED.value,
                   help=f"auto ctx: 'speed' (default) keeps ctx at {DEFAULT_CTX} unless every layer stays pinned "
                        "beyond it; 'context' takes the largest ctx that fits, pinning fewer layers")
    p.add_argument("--buffers", type=ranged(BUFFERS), default=2, help=f"ring depth, {BUFFERS.text} (default 2)")
    p.add_argument("--head", choices=[m.value for m in HEAD_MODES], default=HeadMode.AUTO.value,
                   help="LM head resident, streamed, or either")
    p.add_argument("--kv-type", choices=[t.value for t in KV_TYPES], default=DEFAULT_KV_TYPE.value,
                   help="KV cache type (the plan prices K and V alike)")
    p.add_argument("-ctk", "--cache-type-k", dest="kv_type", choices=[t.value for t in KV_TYPES],
                   help="llama.cpp's spelling of --kv-type")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    add_bandwidth_arguments(p, PLAN_TIERS, host_available=True)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_request_arguments(p)
    p.add_argument("--budget", type=ranged(BUDGET),
                   help=f"RAM budget: 512M, 1.5G, 2GiB, bytes, {BUDGET.text}; 0 = unlimited "
                        "(default: this machine's usable RAM)")
    p.add_argument("--force", action="store_true", help="run the minimum configuration even over budget")
    p.add_argument("--print-command", action="store_true",
                   help="print only the Budget plan's runtime flags (--ram-budget SIZE --ctx N); nothing, and exit 3, "
                        "when the plan is impossible")
    p.add_argument("--host-reserve", type=ranged(MEMORY), default=DEFAULT_HOST_RESERVE, metavar="SIZE",
                   help=f"host RAM kept back from the default budget (default {human_bytes(DEFAULT_HOST_RESERVE)})")
    add_prompt_argument(p)
    add_projector_arguments(p)
    add_format_argument(p)


def request_from(args: argparse.Namespace, budget: Budget, force: bool = False) -> BudgetRequest:
    """The request the flags describe (a RequestError when they are out of bounds)."""
    return BudgetRequest(budget=budget, ctx=args.ctx, ctx_cap=args.ctx_cap, n_buffers=args.buffers,
                         head_mode=args.head, kv_type=args.kv_type, force=force, prefer=CtxPolicy(args.prefer))


def _budget(args: argparse.Namespace) -> Budget:
    """The typed budget, or this machine's usable RAM, said where the output goes (the module's rule)."""
    if args.budget is not None:
        return Budget.from_cli(args.budget)
    snapshot = probe_host() if args.host_available is None else hypothetical_machine(args.host_available)
    try:
        usable = machine_budget(snapshot, args.host_reserve)
    except RequestError as e:
        raise CommandError(f"{e}; give --budget SIZE") from None
    if usable.budget == 0:
        raise CommandError(f"{machine_budget_text(usable)}: nothing left to plan with; give --budget SIZE")
    (complain if args.json or args.format == "json" or args.print_command else say)(machine_budget_text(usable))
    return Budget.of(usable.budget)


def run(args: argparse.Namespace) -> int:
    if listed_catalogue(args):
        return 0
    spec = chosen_model(args).spec
    budget, projector = projector_beside_plan(args, spec, _budget(args))
    request = request_from(args, budget, args.force)
    plan = plan_memory(spec, request)
    bandwidths, notes = bandwidths_from(args, spec, PLAN_TIERS)
    if args.print_command:
        from gguf_budget.core.views.run_it import budget_plan_run  # common.py Rule 4: only this branch prints it

        run = budget_plan_run(plan)
        if run.command is None:
            complain(f"gguf-budget plan: no command to print — {run.would_fit}")
        else:
            say(run.command, wrap=False)
        return EXIT_IMPOSSIBLE if plan.impossible else 0
    speed = plan_speed(TokenPrices.of(spec), plan, bandwidths, host_available_from(args), args.prompt_tokens)
    emit_plan(args, plan, spec, speed, notes, projector)
    return EXIT_IMPOSSIBLE if plan.impossible else 0
