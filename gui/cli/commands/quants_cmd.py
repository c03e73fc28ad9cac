"""`gguf-budget quants FILE|--catalog NAME`: every llama.cpp quantization of one model, priced and judged.

Nothing is downloaded: each file type is priced from the model's tensor shapes as llama-quantize
would write it, then fitted on this machine (or the hypothetical one the flags describe) at the
ctx, and planned at `--budget` when given. The best fit and the recommended type (quality
weighed against speed, `quant_ladder` Rule 8) are marked, with why. Each row's decode estimate
uses the figures `fit` and `plan` use (typed, else this machine's kept ones; `--no-measure`: nothing
measured now): RAM always, VRAM when the machine has GPUs, disk when a budget plan may stream.
Exit codes: 0 a best fit exists, 2 bad input, 3 no file type runs fully on a GPU or in RAM.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.model.kv import KVType
from gguf_budget.core.explorer.llama_question import ask
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.quant.ladder import LadderRequest, quant_ladder
from gguf_budget.core.ranges import BUDGET
from gguf_budget.core.views.quant_report import ladder_dict, ladder_text

from gguf_budget.gui.cli.commands.ctx_args import add_ctx_arguments
from gguf_budget.gui.cli.args import EXIT_IMPOSSIBLE, ranged, say
from gguf_budget.gui.cli.commands.common import (
    add_model_arguments, emit_json, listed_catalogue,
)
from gguf_budget.gui.cli.commands.machine_args import add_machine_arguments, machine
from gguf_budget.gui.cli.commands.llama_args import add_llama_arguments, llama_command, model_for
from gguf_budget.gui.cli.commands.runtime_args import add_runtime_argument, asked_runtime, runtime_from
from gguf_budget.gui.cli.commands.server_args import add_server_arguments, server_settings_from
from gguf_budget.gui.cli.commands.speed_args import add_bandwidth_arguments, add_prompt_argument, bandwidths_from

QUANTS_TIERS = ("ram", "vram", "disk")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p)
    add_ctx_arguments(p)
    p.add_argument("--budget", type=ranged(BUDGET), metavar="SIZE",
                   help=f"also plan each type under this RAM budget, {BUDGET.text}")
    p.add_argument("--no-imatrix", action="store_true",
                   help="price files made without an importance matrix (publishers such as bartowski use one)")
    add_machine_arguments(p)
    add_bandwidth_arguments(p, QUANTS_TIERS, host_available=False)
    add_prompt_argument(p)
    add_server_arguments(p)
    add_runtime_argument(p)
    add_llama_arguments(p)
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def _request(args: argparse.Namespace) -> LadderRequest:
    budget = None if args.budget is None else BudgetRequest(
        budget=Budget.from_cli(args.budget), ctx=args.ctx, ctx_cap=args.ctx_cap, kv_type=KVType(args.kv_type))
    return LadderRequest(ctx=args.ctx, ctx_cap=args.ctx_cap, kv_type=KVType(args.kv_type),
                         reserves=Reserves(args.host_reserve, args.gpu_reserve, args.gpu_reserves or ()), budget=budget,
                         imatrix=not args.no_imatrix, prompt_tokens=args.prompt_tokens)


def _tiers(snapshot: HardwareSnapshot, request: LadderRequest) -> tuple[str, ...]:
    """The tiers a row's estimate reads: RAM, VRAM with GPUs, disk when a budget plan may stream."""
    wanted = {"ram": True, "vram": bool(snapshot.gpus), "disk": request.budget is not None}
    return tuple(tier for tier in QUANTS_TIERS if wanted[tier])


def run(args: argparse.Namespace) -> int:
    if listed_catalogue(args):
        return 0
    request = _request(args)
    command = llama_command(args)
    model, snapshot = model_for(args, command), machine(args)
    request = replace(request, server=server_settings_from(args, model))
    asked = ExplorerState(model=model, machine=snapshot, ctx=request.ctx, ctx_cap=request.ctx_cap,
                          kv_type=request.kv_type, reserves=request.reserves, server=request.server,
                          runtime=runtime_from(args))
    if command is not None:
        question = ask(command, asked, model, asked_runtime(args))
        asked = question.state
        if not args.json:
            say("\n".join(question.lines))
    request = replace(request, ctx=asked.ctx, kv_type=asked.kv_type, reserves=asked.reserves, server=asked.server,
                      like=asked.fit_request(asked.ctx))
    bandwidths, notes = bandwidths_from(args, model, _tiers(snapshot, request))
    ladder = quant_ladder(model, snapshot, replace(request, bandwidths=bandwidths))
    if args.json:
        emit_json({**ladder_dict(ladder), "bandwidth_notes": list(notes)})
    else:
        say("\n".join([ladder_text(ladder), *notes]))
    return 0 if ladder.best is not None else EXIT_IMPOSSIBLE
