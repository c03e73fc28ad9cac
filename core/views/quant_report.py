"""What `quants` prints and the Quants dock shows: one column table, one dict for JSON, one text.

Rule 1: `COLUMNS` is the ladder's table — header, the cell a person reads, and the value it
        sorts by — so the CLI table and the window's sortable table are the same cells; the CLI
        prints each column's short header, leaves out a column with no figure in any row (First
        token with layers on a GPU), prints the Budget plan column as a table of its own and a
        row's marks on a line under it when the row would be wider than 100 columns.
Rule 2: every row says it is priced, not downloaded; the size is the file llama-quantize would
        write (the source's header plus aligned tensor data), never a measured file.
Rule 3: a verdict is the full-load admission estimate at the ladder's ctx; a plan is the budget
        plan at the request's budget; neither is runtime evidence.
Rule 4: the Decode column is the full load's decode estimate at the start of a conversation
        (its header says so) and the plan cell carries the plan's; the First token column is the
        full load's time to the first token for the request's prompt length; all in the words
        and JSON of `speed_view` (as `fit` and `plan` print them); the text says they are
        calibrated estimates and which figures they rest on.
Rule 5: the recommended type (`quant_ladder` Rule 8) is marked beside the best fit and said
        with its reason — the step that admitted it and the higher types passed over, each with
        its slowdown — and `RECOMMENDED_RULE` says the rule in words; rows below 3 bits per
        weight carry HEAVY_LOSS_MARK.
Rule 6: rows are listed highest bits per weight first, so a table sorted on screen starts
        sorted by `SORTED_BY` descending.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from gguf_budget.core.model.context import DEFAULT_CTX
from gguf_budget.core.views.fit_report import ctx_choice_text
from gguf_budget.core.llama_cpp import QUANT_RULES_SOURCE
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.fit_report import VERDICT_WORDS, snapshot_dict, snapshot_text
from gguf_budget.core.quant.ladder import (
    BPW_DECIMALS, DECODE_ESTIMATE, HEAVY_LOSS_BPW, SLOWDOWN_LIMIT, QuantLadder, QuantRow, Recommendation, Step,
)
from gguf_budget.core.views.table import WIDTH, aligned_lines
from gguf_budget.core.quant.priced import PRICED_LABEL
from gguf_budget.core.machine.bandwidth import for_machine
from gguf_budget.core.speed.estimate import SpeedEstimate
from gguf_budget.core.views.speed_view import START_WORDS, decode_cell, prefill_keys, seconds_text, speed_dict

BEST_MARK = "◀ best fit"
RECOMMENDED_MARK = "★ recommended"
HEAVY_LOSS_MARK = "heavy quality loss"
SORTED_BY = "bpw"
PLAN_KEY = "plan"
NO_FIGURE = "—"
"""A cell with nothing to show; a CLI column of nothing else is left out (Rule 1)."""
RECOMMENDED_RULE = (
    f"How the recommended type is chosen: the highest-precision type that runs fully on the fastest tier (GPU, else RAM) and "
    f"decodes at most {SLOWDOWN_LIMIT:g}× slower than the next smaller type that runs there; "
    f"below {HEAVY_LOSS_BPW:g} bits per weight, {HEAVY_LOSS_MARK}.")


def _gpu_layers(row: QuantRow) -> str:
    return f"{row.fit.gpu_layers}/{row.fit.n_slots}"


def _decode_cell(speed: SpeedEstimate | None) -> str:
    return NO_FIGURE if speed is None else decode_cell(speed)


def _ttft_cell(speed: SpeedEstimate | None) -> str:
    return NO_FIGURE if speed is None or speed.prefill is None else f"≈ {seconds_text(speed.prefill.ttft_s)}"


def _ttft_sort(speed: SpeedEstimate | None) -> float:
    return float("inf") if speed is None or speed.prefill is None else speed.prefill.ttft_s


def _plan_cell(row: QuantRow) -> str:
    if row.plan is None:
        return row.plan_error or NO_FIGURE
    if not row.plan.feasible:
        return "impossible"
    speed = "" if row.plan_speed is None else f", {decode_cell(row.plan_speed)}"
    return f"ctx {row.plan.ctx:,}, {row.plan.n_pinned}/{row.plan.n_layer} pinned{speed}"


def _ctx_cell(row: QuantRow) -> str:
    return "none" if row.largest_ctx is None else f"{row.largest_ctx:,}"


def judged_at(ladder: QuantLadder) -> str:
    """The one ctx every full load was judged at, or the one rule that chose each row's (`quant_ladder` Rule 6)."""
    if ladder.ctx is not None:
        return f"at ctx {ladder.ctx:,} (as asked)"
    return (f"at the ctx llama.cpp's own fit chooses for each type (the Ctx column: the trained "
            f"{ladder.source.context_length or DEFAULT_CTX:,} or the cap, shrunk to fit, not below {DEFAULT_CTX:,})")


@dataclass(frozen=True)
class Column:
    """One column of the ladder: its key (JSON-free), header, cell text, sort value and short CLI header."""

    key: str
    header: str
    cell: Callable[[QuantRow], str]
    sort: Callable[[QuantRow], float | str]
    short: str


COLUMNS: tuple[Column, ...] = (
    Column("type", "Type", lambda r: r.name, lambda r: r.name, "Type"),
    Column("size", "File size", lambda r: human_bytes(r.mix.file_bytes), lambda r: r.mix.file_bytes, "Size"),
    Column("bpw", "Bits/weight", lambda r: format(r.bits_per_weight, f".{BPW_DECIMALS}f"), lambda r: r.mix.bits_per_weight, "Bits"),
    Column("verdict", "Full load", lambda r: VERDICT_WORDS[r.fit.verdict],
           lambda r: r.load_rank, "Full load"),
    Column("gpu_layers", "GPU layers", _gpu_layers, lambda r: r.fit.gpu_layers, "GPU"),
    Column("ctx", "Ctx", lambda r: f"{r.ctx:,}", lambda r: r.ctx, "Ctx"),
    Column("largest_ctx", "Largest ctx", _ctx_cell, lambda r: r.largest_ctx or 0, "Max ctx"),
    Column("decode", "Decode at start", lambda r: _decode_cell(r.speed),
           lambda r: 0.0 if r.speed is None else r.speed.tok_s, "Decode"),
    Column("ttft", "First token", lambda r: _ttft_cell(r.speed), lambda r: -_ttft_sort(r.speed), "1st token"),
    Column(PLAN_KEY, "Budget plan", _plan_cell,
           lambda r: -1 if r.plan is None or not r.plan.feasible else r.plan.n_pinned, "Plan"),
)


def is_recommended(row: QuantRow, ladder: QuantLadder) -> bool:
    return ladder.recommended is not None and row.name == ladder.recommended.name


def mark_text(row: QuantRow, ladder: QuantLadder) -> str:
    """The mark column: the best fit, the recommended type, heavy quality loss, and the file's own type."""
    marks = [BEST_MARK] if row.name == ladder.best else []
    marks += [RECOMMENDED_MARK] if is_recommended(row, ladder) else []
    marks += [HEAVY_LOSS_MARK] if row.heavy_loss else []
    return "  ".join([*marks, *(["this file's type"] if row.is_source else [])])


def row_tooltip(row: QuantRow, ladder: QuantLadder) -> str:
    """What one row is, in words: priced size, tensor types, full load and plan."""
    types = ", ".join(f"{n} {name}" for name, n in sorted(row.mix.type_counts.items(), key=lambda kv: -kv[1]))
    fallback = f"; {row.mix.n_fallback} tensors fall back to a type their rows divide" if row.mix.n_fallback else ""
    return (f"{row.name}: {row.mix.file_bytes:,} B ({PRICED_LABEL}); tensors {types}{fallback}. "
            f"Full load at {ctx_choice_text(row.choice)}: {VERDICT_WORDS[row.fit.verdict]}, {_gpu_layers(row)} on GPU; "
            f"largest ctx that fits {_ctx_cell(row)}; decode {_decode_cell(row.speed)} {START_WORDS}, first token "
            f"{_ttft_cell(row.speed)} (estimates). "
            f"Budget plan: {_plan_cell(row)}.")


def row_dict(row: QuantRow, ladder: QuantLadder) -> dict[str, Any]:
    plan = row.plan
    return {
        "file_type": row.name,
        "file_bytes": row.mix.file_bytes,
        "tensor_bytes": row.mix.tensor_bytes,
        "bits_per_weight": round(row.mix.bits_per_weight, 4),
        "tensor_types": row.mix.type_counts,
        "fallback_tensors": row.mix.n_fallback,
        "verdict": row.fit.verdict.value,
        "gpu_layers": row.fit.gpu_layers,
        "ctx": row.ctx,
        "ctx_reason": row.choice.reason.value,
        "fully_on_gpu": row.fully_on_gpu,
        "fits_in_ram": row.fits_in_ram,
        "largest_ctx": row.largest_ctx,
        "plan": None if plan is None else {"feasible": plan.feasible, "ctx": plan.ctx, "n_pinned": plan.n_pinned,
                                           "n_layer": plan.n_layer, "total": plan.total},
        "plan_error": row.plan_error,
        "best_fit": row.name == ladder.best,
        "recommended": is_recommended(row, ladder),
        "heavy_quality_loss": row.heavy_loss,
        "source": row.is_source,
        "tok_s_estimate": speed_dict(row.speed),
        **prefill_keys(row.speed),
        "plan_tok_s_estimate": speed_dict(row.plan_speed),
    }


def ladder_dict(ladder: QuantLadder) -> dict[str, Any]:
    """The `quants --json` payload (keys listed in README)."""
    budget = ladder.request.budget
    return {
        "model": ladder.source.name,
        "architecture": ladder.source.architecture,
        "source_file_type": ladder.source.file_type_name,
        "label": PRICED_LABEL,
        "rules": QUANT_RULES_SOURCE,
        "ctx": ladder.ctx,
        "ctx_cap": ladder.request.ctx_cap,
        "kv_type": ladder.request.kv_type.value,
        "imatrix": ladder.request.imatrix,
        "budget_bytes": None if budget is None else budget.budget.cli_bytes,
        "machine": snapshot_dict(ladder.snapshot),
        "best_fit": ladder.best,
        "best_fit_reason": ladder.best_reason,
        "recommended": None if ladder.recommended is None else ladder.recommended.name,
        "recommended_reason": recommended_text(ladder),
        "recommendation": recommendation_dict(ladder.recommended),
        "rows": [row_dict(r, ladder) for r in ladder.rows],
        "skipped": [{"file_type": name, "reason": reason} for name, reason in ladder.skipped],
    }


def _step_dict(step: Step) -> dict[str, Any]:
    return {"file_type": step.name, "next_smaller": step.smaller, "slowdown": round(step.slowdown, 4),
            "basis": step.basis}


def recommendation_dict(rec: Recommendation | None) -> dict[str, Any] | None:
    """Rule 5 as JSON: why this type — the step that admitted it, the types passed over, the rule."""
    if rec is None:
        return None
    return {
        "file_type": rec.name,
        "tier": rec.tier,
        "slowdown_limit": SLOWDOWN_LIMIT,
        "next_smaller": None if rec.step is None else _step_dict(rec.step),
        "passed_over": [_step_dict(s) for s in rec.passed_over],
        "heavy_quality_loss": rec.heavy_loss,
        "heavy_loss_below_bits_per_weight": HEAVY_LOSS_BPW,
        "rule": RECOMMENDED_RULE,
    }


def _slower(step: Step) -> str:
    basis = "" if step.basis == DECODE_ESTIMATE else f" by {step.basis}"
    return f"{step.slowdown:.2f}× slower than {step.smaller}{basis}"


def recommended_text(ladder: QuantLadder) -> str | None:
    """Rule 5: the recommended type and why, in one sentence (None without a best fit)."""
    rec = ladder.recommended
    if rec is None:
        return None
    why = ("the smallest type that runs there" if rec.step is None
           else f"{_slower(rec.step)}, the next smaller type that runs there")
    passed = "" if not rec.passed_over else "; passed over " + ", ".join(
        f"{s.name} ({_slower(s)})" for s in rec.passed_over)
    warn = f"; {HEAVY_LOSS_MARK} below {HEAVY_LOSS_BPW:g} bits per weight" if rec.heavy_loss else ""
    return f"Recommended: {rec.name} — runs {rec.tier} at ctx {ladder.row(rec.name).ctx:,}, {why}{passed}{warn}"


def best_text(ladder: QuantLadder) -> str:
    if ladder.best is None:
        return f"Best fit: none — no file type runs fully on a GPU or fully in RAM {judged_at(ladder)}"
    return (f"Best fit: {ladder.best} — the highest precision that runs {ladder.best_reason} at ctx "
            f"{ladder.row(ladder.best).ctx:,}")


def speed_footnote(ladder: QuantLadder) -> str:
    """Rule 4: what the Decode and First token figures are and the figures they rest on."""
    bw = for_machine(ladder.request.bandwidths, ladder.snapshot)
    tiers = [f"RAM {bw.ram.text}"]
    if ladder.snapshot.gpus:
        tiers.append(f"VRAM {bw.vram.text}")
    if ladder.request.budget is not None:
        tiers.append(f"disk {bw.disk.text}")
    plan = "" if ladder.request.budget is None else " and each budget plan's"
    return (f"Decode: each full load's{plan} tokens/s {START_WORDS} (estimates, {bw.calibration.text}) at "
            f"{'; '.join(tiers)}. First token: the full load's prefill of a {ladder.request.prompt_tokens:,}-token "
            f"prompt at {bw.compute.text} (none with layers on a GPU).")


def _marked_lines(marked: str, bare: str, row: list[str]) -> list[str]:
    """A row with its marks, or, when that is wider than a text view prints, its marks on a line under it (Rule 1)."""
    if len(marked) <= WIDTH or not row[-1]:
        return [marked]
    return [bare, " " * (len(bare) - len(bare.lstrip()) + 4) + row[-1]]


def ladder_text(ladder: QuantLadder) -> str:
    """A table of every row (Rule 1), the best fit, the recommended type and its rule, the skipped types,
    and what the numbers are."""
    shown = [c for c in COLUMNS if c.key != PLAN_KEY and any(c.cell(r) != NO_FIGURE for r in ladder.rows)]
    header = [*(c.short for c in shown), ""]
    rows = [[*(c.cell(r) for c in shown), mark_text(r, ladder)] for r in ladder.rows]
    table = [header, *rows]
    lines = [line for marked, bare, row in zip(aligned_lines(table), aligned_lines(r[:-1] for r in table), table, strict=True)
             for line in _marked_lines(marked.rstrip(), bare.rstrip(), row)]
    budget = ladder.request.budget
    if budget is not None:
        plan = next(c for c in COLUMNS if c.key == PLAN_KEY)
        lines += ["", f"{plan.header} at {budget.budget}:",
                  *aligned_lines([["Type", plan.short], *([r.name, plan.cell(r)] for r in ladder.rows)])]
    lines += [
        "",
        best_text(ladder),
        *([] if ladder.recommended is None else [recommended_text(ladder) or "", RECOMMENDED_RULE]),
        *(f"Skipped {name}: {reason}" for name, reason in ladder.skipped),
        f"Every row is {PRICED_LABEL}: its size is the file llama-quantize ({QUANT_RULES_SOURCE}) would write "
        f"from {ladder.source.file_type_name or 'this file'}'s tensor shapes; the full load is an admission "
        f"estimate {judged_at(ladder)}"
        + ("" if budget is None else f"; the budget plan is at {budget.budget}") + ".",
        speed_footnote(ladder),
        "",
        snapshot_text(ladder.snapshot),
    ]
    return "\n".join(lines)
