"""`gguf-budget fit FILE …`: would the model fit this machine's RAM and VRAM, and how split?

The machine is probed unless the flags describe it (`machine_args` Rule 1: `--host-available`,
the GPU flags, `--preset`, `--no-gpu`).
Without `--ctx` the ctx is what llama.cpp's own default `--fit` chooses (`fit.ctx.auto_ctx`): the
trained context, shrunk to the largest that fits, never below 4096 before GPU layers are given
up; the output says which ctx and why. `--print-command` prints only the llama-server command
that runs the fit, and only when it fits (else one line on stderr and exit 3).
Exit codes: 0 the estimate admits the model, 2 bad input, 3 it does not fit or cannot be told.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from gguf_budget.core.explorer.ctx_tiers import ctx_tiers, tiers_dicts, tiers_text
from gguf_budget.core.explorer.full_load import FullLoad, full_load
from gguf_budget.core.explorer.llama_question import ask, program_for, question_dict
from gguf_budget.core.explorer.headline import fix_dict, max_ctx_text, tier_lines
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.speed.estimate import experts_on_cpu_speed
from gguf_budget.core.speed.server_speed import server_speed, server_speed_dict
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.core.views.command_view import program_command
from gguf_budget.core.views.fit_report import ctx_choice_text, fit_dict, fit_text, verdict_text
from gguf_budget.core.views.speed_view import prefill_keys, speed_dict, speed_text
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.ranges import GPU_LAYERS

from gguf_budget.gui.cli.commands.ctx_args import add_ctx_arguments
from gguf_budget.gui.cli.commands.common import add_model_arguments, emit_json, listed_catalogue
from gguf_budget.gui.cli.args import EXIT_IMPOSSIBLE, complain, ranged, say
from gguf_budget.gui.cli.commands.llama_args import add_llama_arguments, llama_command, model_for
from gguf_budget.gui.cli.commands.runtime_args import add_runtime_argument, asked_runtime, runtime_from
from gguf_budget.gui.cli.commands.server_args import add_server_arguments, server_settings_from
from gguf_budget.gui.cli.commands.speed_args import add_bandwidth_arguments, add_prompt_argument, bandwidths_from
from gguf_budget.gui.cli.commands.machine_args import add_machine_arguments, machine
from gguf_budget.gui.cli.gpu_args import tensor_split_arg

FIT_TIERS = ("ram", "vram")
NO_SPEED = "no estimate — the full load does not fit (or its KV cache is unknown)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p)
    add_ctx_arguments(p)
    p.add_argument("--gpu-layers", type=ranged(GPU_LAYERS),
                   help=f"layers to offload, as llama.cpp -ngl, {GPU_LAYERS.text} (default: the most that fit)")
    add_machine_arguments(p)
    p.add_argument("-ts", "--tensor-split", type=tensor_split_arg, metavar="A,B,…",
                   help="share of the layers per GPU, as llama.cpp -ts (default: by free memory)")
    add_bandwidth_arguments(p, FIT_TIERS, host_available=False)
    add_prompt_argument(p)
    add_runtime_argument(p)
    add_server_arguments(p)
    add_llama_arguments(p)
    p.add_argument("--tiers", action="store_true",
                   help="also the full load at 4k, 8k, 16k, 32k, 64k and 128k tokens (up to the trained context) and at "
                        "the largest that fits: memory, GPU layers, speed (JSON: always, as `tiers`)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON instead of text")
    out.add_argument("--print-command", action="store_true",
                     help="print only the command that runs this fit for --runtime's program (shell-quoted; "
                          "llama-cpp-python: a Llama(...) call); nothing, and exit 3, when nothing fits")


def run(args: argparse.Namespace) -> int:
    if listed_catalogue(args):
        return 0
    command = llama_command(args, program_for(asked_runtime(args)))
    model = model_for(args, command)
    snapshot = machine(args)
    reserves = Reserves(args.host_reserve, args.gpu_reserve, args.gpu_reserves or ())
    state = ExplorerState(model=model, ctx_cap=args.ctx_cap, kv_type=args.kv_type, machine=snapshot,
                          reserves=reserves, gpu_layers=args.gpu_layers, tensor_split=args.tensor_split,
                          prompt_tokens=args.prompt_tokens, runtime=runtime_from(args),
                          server=server_settings_from(args, model), ctx=args.ctx)
    question = None if command is None else ask(command, state, model, asked_runtime(args))
    if question is not None:
        state = question.state
    state.fit_request(None)  # a bad split or reserve is the one-line RequestError before anything is measured
    bandwidths, notes = bandwidths_from(args, model, FIT_TIERS if snapshot.gpus else ("ram",))
    state = replace(state, bandwidths=bandwidths)
    result = full_load(model, state, TokenPrices.of(model))
    assert result is not None  # the state has a machine
    estimate = result.fit
    served = server_speed(result.speed, estimate, args.draft_accept)
    offload = estimate.moe_offload
    experts = None if offload is None or not offload.n_cpu_moe else experts_on_cpu_speed(
        TokenPrices.of(model), estimate, offload.n_cpu_moe, bandwidths, args.prompt_tokens)
    if args.print_command:
        _print_command(result, model, state)
    elif args.json:
        emit_json({**fit_dict(estimate), "ctx": result.ctx, "ctx_reason": result.choice.reason.value,
                   "ctx_image_tokens": result.choice.image_room, "ctx_ceiling": result.choice.ceiling, "ctx_cap": args.ctx_cap, "max_ctx": result.max_ctx,
                   "tok_s_estimate": speed_dict(result.speed), **prefill_keys(result.speed),
                   "server_tok_s_estimate": server_speed_dict(served), "moe_n_cpu_tok_s_estimate": speed_dict(experts),
                   "bandwidth_notes": list(notes), "llama_command": question_dict(question),
                   "tiers": tiers_dicts(ctx_tiers(model, state, result)), "fix": fix_dict(model, state, result)})
    else:
        say("\n".join([*(question.lines if question is not None else ()), fit_text(estimate, result.choice), f"Largest ctx that fits  {max_ctx_text(result.fit, result.max_ctx)}",
                       *tier_lines(model, state, result), "",
                       speed_text("Speed estimate (full load)", result.speed, NO_SPEED),
                       *(f"  {line}" for line in (served.lines if served is not None else ())),
                       *([] if experts is None or offload is None else
                         ["", speed_text(f"Speed estimate (--n-cpu-moe {offload.n_cpu_moe}: experts of "
                                         f"{offload.n_cpu_moe} blocks in RAM)", experts, NO_SPEED)]), *notes,
                       *(["", tiers_text(ctx_tiers(model, state, result))] if args.tiers else [])]))
    return 0 if estimate.verdict.admitted else EXIT_IMPOSSIBLE


def _print_command(load: FullLoad, model: ModelSpec, state: ExplorerState) -> None:
    """One runnable line on stdout — only for a load that fits; else why not and what would fit on stderr (exit 3),
    in the words of the window's "Run it" line (`views.run_it`, imported here: only this answer needs it)."""
    from gguf_budget.core.quant.ladder import LadderRequest
    from gguf_budget.core.quant.would_fit import smaller_quant, wants_smaller_quant
    from gguf_budget.core.views.run_it import QUANTS_IN_CLI, full_load_run

    smaller, priced = None, wants_smaller_quant(load.choice, load.max_ctx)
    if priced:
        assert state.machine is not None
        smaller = smaller_quant(model, state.machine, LadderRequest(ctx_cap=state.ctx_cap, kv_type=state.kv_type,
                                                                     reserves=state.reserves))
    run = full_load_run(load.choice, load.max_ctx, smaller, priced, QUANTS_IN_CLI)
    recommended = load.fit.recommended
    if run.command is not None and recommended is not None:
        say(program_command(recommended, state.runtime).text, wrap=False)
    else:
        complain(f"gguf-budget fit: no command to print — {verdict_text(load.fit)} at {ctx_choice_text(load.choice)}; "
                 f"{run.would_fit}")
