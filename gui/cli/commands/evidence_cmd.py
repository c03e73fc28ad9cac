"""`gguf-budget evidence LOG [--model FILE] [bandwidth flags] [--json]`: what a real llama.cpp run held, beside our estimate.

The model is `--model FILE`, else the path the log loaded (as given, then beside the log).
The decode bound uses `fit`'s bandwidths: typed (`--ram-bw`, `--vram-bw`), else this machine's kept
figures (`speed_args`), `--no-measure` to measure nothing now.
Exit codes: 0 compared, 2 bad input (not a llama.cpp log, no such model, another model: a `BudgetError`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gguf_budget.core.errors import CommandError, LlamaCppLogError
from gguf_budget.core.evidence.compare import compare
from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.evidence.log_records import LlamaCppLog
from gguf_budget.core.regular_file import FileKind, is_regular_file, read_text
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.views.evidence_report import evidence_dict, evidence_text
from gguf_budget.gui.cli.args import say
from gguf_budget.gui.cli.commands.common import emit_json, load_local
from gguf_budget.gui.cli.commands.fit_cmd import FIT_TIERS
from gguf_budget.gui.cli.commands.speed_args import add_bandwidth_arguments, bandwidths_from



def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("log", help="a llama.cpp verbose log (llama-cli/-server/-completion -v, llama-cpp-python verbose)")
    p.add_argument("--model", metavar="FILE", help="the .gguf the log ran (default: the path the log names)")
    add_bandwidth_arguments(p, FIT_TIERS, host_available=False)
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def _read(path: str) -> LlamaCppLog:
    text = read_text(path, FileKind.LOG)
    try:
        return parse_llamacpp_log(text)
    except LlamaCppLogError as e:
        raise CommandError(f"{path}: {e}") from None


def _model_path(args: argparse.Namespace, log: LlamaCppLog) -> str:
    if args.model:
        return str(args.model)
    logged = log.run.model.path if log.run else None
    if not logged:
        raise CommandError("the log does not name its model: pass --model FILE")
    beside = Path(args.log).parent / logged
    for candidate in (Path(logged), beside, Path(args.log).parent / Path(logged).name):
        if is_regular_file(candidate):
            return str(candidate)
    raise CommandError(f"the log names {safe_text(logged, 200)}, which is not here: pass --model FILE")


def run(args: argparse.Namespace) -> int:
    log = _read(args.log)
    path = _model_path(args, log)
    model = load_local(path)
    offloaded = log.run is not None and log.run.offloaded is not None and log.run.offloaded[0] > 0
    bandwidths, notes = bandwidths_from(args, model, FIT_TIERS if offloaded else ("ram",))
    comparison = compare(log, model, bandwidths)
    name = Path(args.log).name
    if args.json:
        emit_json(evidence_dict(comparison, name, path, notes))
    else:
        say(evidence_text(comparison, name, path, notes))
    return 0
