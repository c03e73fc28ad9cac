"""`gguf-budget tune FILE --goal GOAL …`: which llama.cpp settings meet a goal on this machine (or a hypothetical one).

The machine flags are `fit`'s. The search is `core.explorer.tune`; this module only prints its answer: the command,
the memory per device and the speed, two runners-up and what each trades, or the constraint that binds.
Exit codes: 0 an answer, 2 bad input, 3 nothing meets the goal.
"""

from __future__ import annotations

import argparse

from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.explorer.tune import Candidate, Constraints, Goal, TuneAnswer, tune
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.model.context import DEFAULT_CTX
from gguf_budget.core.ranges import CONTEXT
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.machine_view import held_words
from gguf_budget.core.views.remote_command import no_command_reason, runnable
from gguf_budget.gui.cli.args import EXIT_IMPOSSIBLE, ranged, say
from gguf_budget.gui.cli.commands.common import add_model_arguments, chosen_model, emit_json, listed_catalogue
from gguf_budget.gui.cli.commands.fit_cmd import FIT_TIERS
from gguf_budget.gui.cli.commands.machine_args import add_machine_arguments, machine
from gguf_budget.gui.cli.commands.speed_args import add_bandwidth_arguments, bandwidths_from


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_model_arguments(p)
    add_machine_arguments(p)
    add_bandwidth_arguments(p, FIT_TIERS, host_available=False)
    p.add_argument("--goal", required=True, choices=[g.value for g in Goal],
                   help="max-ctx: the longest context; max-speed: the fastest at --min-ctx; max-slots: the most "
                        "server slots of --min-ctx each; least-memory: the least memory at --min-ctx")
    p.add_argument("--min-tok-s", type=float, default=0.0, metavar="X", help="decode speed floor, tokens/s: one stream, an empty cache, as fit's estimate (default 0)")
    p.add_argument("--min-ctx", type=ranged(CONTEXT), default=DEFAULT_CTX, metavar="N",
                   help=f"context floor (per slot for max-slots), {CONTEXT.text} (default {DEFAULT_CTX})")
    p.add_argument("--allow-q4-kv", action="store_true", help="let the search choose a q4_0 KV cache (costs quality)")
    p.add_argument("--allow-heavy-quant", action="store_true",
                   help="when the model's Hub repository is known, let the search choose a quantization below 3 bits "
                        "per weight (heavy quality loss)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def _candidate_dict(c: Candidate) -> dict[str, object]:
    command = runnable(c.load.fit.command)
    return {"ctx": c.ctx, "slots": c.slots, "settings": list(c.knobs.words()), "tok_s": c.tok_s,
            "memory": c.memory, "needs": dict(c.needs), "verdict": c.load.fit.verdict.value,
            "gpu_layers": c.load.fit.gpu_layers, "command": None if command is None else list(command.argv)}


def answer_dict(a: TuneAnswer) -> dict[str, object]:
    return {"goal": a.goal.value, "min_tok_s": a.constraints.min_tok_s, "min_ctx": a.constraints.min_ctx,
            "allow_q4_kv": a.constraints.allow_q4_kv, "allow_heavy_quant": a.constraints.allow_heavy_quant,
            "quants_searched": list(a.quants), "priced": a.priced,
            "best": None if a.best is None else _candidate_dict(a.best),
            "runners_up": [{**_candidate_dict(u.candidate), "trades": u.trades} for u in a.runners_up],
            "binding": a.binding, "notes": list(a.notes)}


def answer_text(a: TuneAnswer) -> str:
    head = f"Goal {a.goal.value} (≥ {a.constraints.min_tok_s:g} tok/s, ≥ {a.constraints.min_ctx:,} ctx)"
    if a.best is None:
        return f"{head}: nothing meets it — {a.binding}"
    b = a.best
    command = runnable(b.load.fit.command)
    needs = ", ".join(f"{name} {human_bytes(n) if n is not None else '—'}" for name, n in b.needs)
    priced = b.load.fit.command
    run_it = command.shell if command is not None else "—" if priced is None else f"— {no_command_reason(priced)}"
    rows = [f"{head}: met", f"  Run it   {run_it}",
            f"  ctx {b.ctx:,}, {b.slots} slot{'s' if b.slots > 1 else ''}, {b.load.fit.gpu_layers} GPU layers, "
            f"≈ {b.tok_s:.1f} tok/s", f"  memory   {needs}",
            *(f"  {d.name:<8} of it {' + '.join(held)}" for d in b.load.fit.devices if (held := held_words(d))),
            *(f"  runner-up: {u.trades}" for u in a.runners_up), *(f"  note: {n}" for n in a.notes),
            f"  ({a.priced} full loads priced)"]
    return "\n".join(rows)


def run(args: argparse.Namespace) -> int:
    if listed_catalogue(args):
        return 0
    model = chosen_model(args).spec
    reserves = Reserves(args.host_reserve, args.gpu_reserve, args.gpu_reserves or ())
    snapshot = machine(args)
    bandwidths, _ = bandwidths_from(args, model, FIT_TIERS if snapshot.gpus else ("ram",))
    state = ExplorerState(model=model, machine=snapshot, reserves=reserves, bandwidths=bandwidths)
    constraints = Constraints(min_tok_s=args.min_tok_s, min_ctx=args.min_ctx, allow_q4_kv=args.allow_q4_kv,
                              allow_heavy_quant=args.allow_heavy_quant)
    answer = tune(model, state, Goal(args.goal), constraints)
    if args.json:
        emit_json(answer_dict(answer))
    else:
        say(answer_text(answer))
    return 0 if answer.best is not None else EXIT_IMPOSSIBLE
