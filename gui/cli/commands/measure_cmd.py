"""`gguf-budget measure FILE …`: run the model in a real llama.cpp for a few tokens and keep what it reports.

The run uses the full-load settings: the ctx given (default: the trained context, at most
4096), the GPU layers the fit estimate picks for this machine unless `--gpu-layers` says,
the KV type, and llama.cpp's own engine options given as llama.cpp spells them (or after `--`),
which the run passes to llama.cpp as given. The log is stored as the model's runtime evidence (the window shows it when
the model is opened) and summarised: llama.cpp's buffers per component and the peak RSS.
Exit codes: 0 measured, 2 bad input, no llama.cpp, or the run failed (one line).
"""

from __future__ import annotations

import argparse
import sys

from gguf_budget.core.model.context import DEFAULT_CTX
from gguf_budget.core.errors import CommandError
from gguf_budget.core.explorer.llama_question import ask
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.machine.probe import probe_hardware
from gguf_budget.core.measure.command import default_measure_ctx, settings_from_fit
from gguf_budget.core.measure.engine import find_engine
from gguf_budget.core.measure.progress import Progress
from gguf_budget.core.measure.runner import DEFAULT_TIMEOUT_S
from gguf_budget.core.measure.session import measure_model
from gguf_budget.core.measure.store import EvidenceStore
from gguf_budget.core.model.kv import DEFAULT_KV_TYPE, KV_TYPES
from gguf_budget.core.views.evidence_view import evidence_dict, evidence_text

from gguf_budget.core.ranges import CONTEXT, GPU_LAYERS
from gguf_budget.gui.cli.args import ranged, say
from gguf_budget.gui.cli.commands.common import emit_json, load
from gguf_budget.gui.cli.commands.llama_args import add_llama_arguments, llama_command



def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= 86400:
        raise argparse.ArgumentTypeError("must be between 0 and 86400 seconds")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="a .gguf file with its weights (any shard of a split model)")
    p.add_argument("--ctx", type=ranged(CONTEXT), help=f"context tokens (default: the trained context, at most {DEFAULT_CTX})")
    p.add_argument("--gpu-layers", type=ranged(GPU_LAYERS), help="layers to offload, as llama.cpp -ngl "
                                                         "(default: what the fit estimate picks for this machine)")
    p.add_argument("--kv-type", choices=[t.value for t in KV_TYPES], default=DEFAULT_KV_TYPE.value,
                   help="KV cache type (default f16)")
    p.add_argument("--llama", metavar="PATH", help="a llama-cli, llama-completion or llama-server binary, "
                                                   "or a folder holding one (default: $GGUF_BUDGET_LLAMA_BIN, PATH)")
    p.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT_S, metavar="SECONDS",
                   help=f"stop llama.cpp after this long (default {DEFAULT_TIMEOUT_S:g})")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    add_llama_arguments(p)


def _say(report: Progress) -> None:
    sys.stderr.write(f"\r{report.stage} · {report.elapsed_s:.1f} s\x1b[K")


def run(args: argparse.Namespace) -> int:
    model = load(args.file)
    if model.header_only:
        raise CommandError(f"{args.file} has no weights (header only): llama.cpp needs the complete file")
    engine = find_engine(args.llama)
    ctx = args.ctx or default_measure_ctx(model.context_length)
    state = ExplorerState(model=model, machine=probe_hardware(), ctx=ctx, gpu_layers=args.gpu_layers,
                          kv_type=args.kv_type)
    command = llama_command(args)
    if command is not None:
        if command.model_source is not None:
            raise CommandError("measure runs FILE: give the llama.cpp options without -m/-mu/-hf")
        state = ask(command, state, model).state
    assert state.machine is not None
    fit = estimate_fit(model, state.machine, state.fit_request(state.ctx or ctx))
    store = EvidenceStore()
    try:
        evidence = measure_model(model.path, settings_from_fit(fit), engine, store, timeout_s=args.timeout,
                                 progress=_say if sys.stderr.isatty() else None)
    finally:
        if sys.stderr.isatty():
            sys.stderr.write("\r\x1b[K")
    log_path = str(store.log_path(evidence.record))
    if args.json:
        emit_json(evidence_dict(evidence, log_path))
    else:
        say(evidence_text(evidence, log_path))
    return 0
