"""`gguf-budget fit FILE …`: would the model fit this machine's RAM and VRAM, and how split?

The machine is probed unless the flags describe it: `--host-available` and the GPU flags
(or `--preset`) replace the probed figures (a hypothetical machine); with both given nothing
is probed. `--no-gpu` alone leaves the GPUs out of the probed machine, which stays probed.
Without `--ctx` the ctx is what llama.cpp's own default `--fit` chooses (`fit.auto_ctx`): the
trained context, shrunk to the largest that fits, never below 4096 before GPU layers are given
up; the output says which ctx and why. `--print-command` prints only the llama-server command
that runs the fit, and only when it fits (else one line on stderr and exit 3).
Exit codes: 0 the estimate admits the model, 2 bad input, 3 it does not fit or cannot be told.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

from gguf_budget.core.errors import CommandError
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
from gguf_budget.core.quant.ladder import LadderRequest
from gguf_budget.core.views.run_it import QUANTS_IN_CLI, full_load_run, smaller_quant, wants_smaller_quant
from gguf_budget.core.views.speed_view import prefill_keys, speed_dict, speed_text
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.machine.usable import DEFAULT_GPU_RESERVE, DEFAULT_HOST_RESERVE
from gguf_budget.core.units import human_bytes
from gguf_budget.core.machine.snapshot import (
    GpuInfo, HardwareSnapshot, hypothetical_gpus, hypothetical_machine, sized_gpus, what_if, without_gpus,
)
from gguf_budget.core.machine.cpu_features import LLAMA_CPP_NAMES, read_cpu_features
from gguf_budget.core.machine.probe import probe_hardware
from gguf_budget.core.ranges import GPU_COUNT, GPU_LAYERS, MEMORY
from gguf_budget.core.model.kv import DEFAULT_KV_TYPE, KV_TYPES

from gguf_budget.gui.cli.commands.ctx_args import add_ctx_arguments
from gguf_budget.gui.cli.commands.common import add_model_arguments, emit_json, listed_catalogue
from gguf_budget.gui.cli.args import EXIT_IMPOSSIBLE, complain, ranged, say
from gguf_budget.gui.cli.commands.llama_args import add_llama_arguments, llama_command, model_for
from gguf_budget.gui.cli.commands.runtime_args import add_runtime_argument, asked_runtime, runtime_from
from gguf_budget.gui.cli.commands.server_args import add_server_arguments, server_settings_from
from gguf_budget.gui.cli.commands.speed_args import add_bandwidth_arguments, add_prompt_argument, bandwidths_from
from gguf_budget.gui.cli.gpu_args import preset_snapshot, sizes_arg, tensor_split_arg

FIT_TIERS = ("ram", "vram")
NO_SPEED = "no estimate — the full load does not fit (or its KV cache is unknown)"


NO_GPU_REASON = "left out by --no-gpu"


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


def add_machine_arguments(p: argparse.ArgumentParser) -> None:
    """The KV type, the hypothetical machine and the reserves: what `fit` and `quants` share."""
    p.add_argument("--kv-type", choices=[t.value for t in KV_TYPES], default=DEFAULT_KV_TYPE.value,
                   help="KV cache type (default f16)")
    memory = ranged(MEMORY)
    p.add_argument("--host-available", type=memory, metavar="SIZE", help=f"hypothetical free host RAM, {MEMORY.text}")
    p.add_argument("--gpu-total", type=sizes_arg, metavar="SIZE[,SIZE…]",
                   help="hypothetical GPU memory: one size for --gpu-count GPUs, or one size a GPU (24G,32G)")
    p.add_argument("--gpu-free", type=sizes_arg, metavar="SIZE[,SIZE…]",
                   help="hypothetical free GPU memory: one for every GPU, or one a GPU (default: all free)")
    p.add_argument("--gpu-count", type=ranged(GPU_COUNT), metavar="N",
                   help=f"hypothetical GPUs of that size, {GPU_COUNT.text} (default 1)")
    p.add_argument("--no-gpu", action="store_true", help="plan for the host only")
    p.add_argument("--cpu-features", metavar="LIST|none",
                   help=f"a typed machine's CPU features in llama.cpp's names ({', '.join(sorted(LLAMA_CPP_NAMES))}), "
                        "which decide the CPU's repacked weight copies (default: this machine's)")
    p.add_argument("--host-reserve", type=memory, default=DEFAULT_HOST_RESERVE, metavar="SIZE",
                   help=f"host RAM kept back (default {human_bytes(DEFAULT_HOST_RESERVE)})")
    p.add_argument("--gpu-reserve", type=memory, default=DEFAULT_GPU_RESERVE, metavar="SIZE",
                   help=f"memory kept back on the first GPU (default {human_bytes(DEFAULT_GPU_RESERVE)})")
    p.add_argument("--gpu-reserves", type=sizes_arg, metavar="SIZE,SIZE,…",
                   help="memory kept back on GPU 0, 1, … (replaces --gpu-reserve for the GPUs it names)")
    p.add_argument("--preset", metavar="NAME[,NAME…]",
                   help="a hypothetical machine from the preset table: GPUs such as 'RTX 4090' (several: "
                        "'RTX 3090,RTX 3060'), or a whole machine such as 'M2 Max 96GB' (`hw --presets` lists them)")


def _typed_gpus(args: argparse.Namespace) -> tuple[GpuInfo, ...] | None:
    """The GPUs the flags describe; None when they describe none (keep the probed ones)."""
    sized = args.gpu_total is not None or args.gpu_free is not None
    if args.no_gpu and (sized or args.gpu_count is not None):
        raise CommandError("--no-gpu cannot be combined with --gpu-total/--gpu-free/--gpu-count")
    if args.no_gpu:
        return ()
    if not sized:
        if args.gpu_count is not None:
            raise CommandError("--gpu-count needs --gpu-total or --gpu-free")
        return None
    totals = args.gpu_total if args.gpu_total is not None else args.gpu_free
    if len(totals) > 1 or args.gpu_free is not None and len(args.gpu_free) > 1:
        if args.gpu_count is not None and args.gpu_count != max(len(totals), len(args.gpu_free or ())):
            raise CommandError(f"--gpu-count {args.gpu_count} but {len(totals)} GPU sizes: give one or the other")
        if len(totals) == 1:
            totals = totals * len(args.gpu_free)
        return sized_gpus(totals, args.gpu_free)
    free = None if args.gpu_free is None else args.gpu_free[0]
    return hypothetical_gpus(args.gpu_count or 1, totals[0], free)


def _cpu_features(args: argparse.Namespace) -> frozenset[str] | None:
    """A typed machine's CPU: `--cpu-features`, else this machine's (its repacked copies are priced as here)."""
    typed = getattr(args, "cpu_features", None)  # commands that share the machine flags but not this one
    if typed is None:
        return read_cpu_features()
    words = {w.strip().upper() for w in typed.split(",") if w.strip()}
    if words == {"NONE"}:
        return frozenset()
    unknown = words - LLAMA_CPP_NAMES
    if unknown:
        raise CommandError(f"--cpu-features: {', '.join(sorted(unknown))} is not one of {', '.join(sorted(LLAMA_CPP_NAMES))} "
                           "(or none)")
    return frozenset(words)


def machine(args: argparse.Namespace) -> HardwareSnapshot:
    if args.preset is not None:
        return preset_snapshot(args, probe_hardware)
    gpus = _typed_gpus(args)
    if args.host_available is not None and gpus is not None:
        typed = replace(hypothetical_machine(args.host_available, captured_at=time.time()), cpu_features=_cpu_features(args))
        return what_if(typed, gpus=gpus)
    if args.no_gpu:
        return without_gpus(probe_hardware(), NO_GPU_REASON)
    return what_if(probe_hardware(), args.host_available, gpus)


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
    in the words of the window's "Run it" line (`views.run_it`)."""
    smaller, priced = None, wants_smaller_quant(load.choice, load.max_ctx)
    if priced:
        assert state.machine is not None
        smaller = smaller_quant(model, state.machine, LadderRequest(ctx_cap=state.ctx_cap, kv_type=state.kv_type,
                                                                     reserves=state.reserves))
    run = full_load_run(load.choice, load.max_ctx, smaller, priced, QUANTS_IN_CLI)
    recommended = load.fit.recommended
    if run.command is not None and recommended is not None:
        say(program_command(recommended, state.runtime).text)
    else:
        complain(f"gguf-budget fit: no command to print — {verdict_text(load.fit)} at {ctx_choice_text(load.choice)}; "
                 f"{run.would_fit}")
