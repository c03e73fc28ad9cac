"""What a speed estimate says: one line for a screen, report rows, and the JSON payload.

Every screen and command takes its speed words from here, so the banner, the pinned caption,
the side panel, the sweep, the Quants column, `evidence` and the CLI say the same thing.

Rule 1: every tokens/s figure is an estimate and says so, with what it is calibrated on:
        "decode ≈ 9.1 tok/s at the start, ≈ 6.0 tok/s at a full 32,768-token context (estimate,
        calibrated on 3 runs on this machine)". "≈" marks an estimate; "≤" is kept for a figure
        that really is an upper bound, and none of these is. Bytes per token are exact and say so.
Rule 2: tokens/s keep two significant figures (≥ 100 as whole numbers), seconds two as well:
        the bandwidths are rarely known better than that.
Rule 3: every bandwidth shows its source (measured with its date, reported, cited, typed,
        assumed) and detail; MoE plans say at which fraction routed experts were counted.
Rule 4: a table cell (`decode_cell`) gives the start of a conversation, the position the sweep
        and the Quants column plot, and their headers say so (`START_WORDS`).
Rule 5: under one token a second a speed reads as seconds per token ("≈ 4.2 s/token"): "≈ 0.24 tok/s"
        makes a person divide.
"""

from __future__ import annotations

from typing import Any

from gguf_budget.core.machine.bandwidth import Bandwidth, Bandwidths, ComputeRate, measured_date
from gguf_budget.core.plan.types import MemoryPlan
from gguf_budget.core.speed.estimate import NO_GPU_PREFILL, STREAM_WORDS, PrefillEstimate, SpeedEstimate, StreamSource
from gguf_budget.core.units import human_bytes, significant
from gguf_budget.core.views.plan_report import plan_dict
from gguf_budget.core.views.table import aligned_lines

START_WORDS = "at the start of a conversation"


def approx_tok_s(tok_s: float) -> str:
    """Rule 5: '≈ 3.4 tok/s', or under one token a second '≈ 4.2 s/token'."""
    if 0 < tok_s < 1:
        return f"≈ {significant(1 / tok_s)} s/token"
    return f"≈ {significant(tok_s)} tok/s"


def decode_cell(speed: SpeedEstimate) -> str:
    """Rule 4: '≈ 3.4 tok/s', the start of a conversation, for a cell whose header says it is an estimate."""
    return approx_tok_s(speed.tok_s)


def estimate_label(speed: SpeedEstimate) -> str:
    """'estimate, calibrated on 3 runs on this machine'."""
    return f"estimate, {speed.calibration.text}"


def decode_text(speed: SpeedEstimate) -> str:
    """Rule 1: 'decode ≈ 9.1 tok/s at the start, ≈ 6.0 tok/s at a full 32,768-token context (estimate, …)'."""
    ends = f"{approx_tok_s(speed.tok_s)} at the start"
    if speed.full != speed.start:
        ends += f", {approx_tok_s(speed.tok_s_full)} at a full {speed.ctx:,}-token context"
    return f"decode {ends} ({estimate_label(speed)})"


def decode_brief(speed: SpeedEstimate) -> str:
    """Rule 1 in a caption's room: 'decode ≈ 9.1 tok/s, ≈ 6.0 tok/s at a full context (estimate)'."""
    full = f", {approx_tok_s(speed.tok_s_full)} at a full context" if speed.full != speed.start else ""
    return f"decode {approx_tok_s(speed.tok_s)}{full} (estimate)"


def seconds_text(seconds: float) -> str:
    """'4.2 s', '0.35 s', '1,234 s'."""
    return f"{significant(seconds)} s"


def prefill_text(speed: SpeedEstimate) -> str:
    """'first token after ≈ 4.2 s for a 1,000-token prompt (prefill ≈ 240 tok/s, estimate)', or why there is none."""
    p = speed.prefill
    if p is None:
        return NO_GPU_PREFILL
    return (f"first token after ≈ {seconds_text(p.ttft_s)} for a {p.prompt_tokens:,}-token prompt "
            f"(prefill {approx_tok_s(p.tok_s)}, estimate)")


def speed_summary(speed: SpeedEstimate) -> str:
    """Decode and the time to the first token in one text (the side panel's full-load line)."""
    return f"{decode_text(speed)}; {prefill_text(speed)}"


def streamed_text(speed: SpeedEstimate) -> str:
    """'each token streams 27.30 GiB from disk' or 'nothing streams'."""
    if speed.bytes.stream == 0:
        return "nothing streams"
    return f"each token streams {human_bytes(speed.bytes.stream)} {STREAM_WORDS[speed.stream_from]}"


def _tier_rows(speed: SpeedEstimate) -> list[tuple[str, str]]:
    b = speed.start
    rows = [("RAM", f"{human_bytes(b.ram)} per token at the start, at {speed.ram.text}")]
    if speed.stream is not None:
        rows.append((f"Stream ({STREAM_WORDS[speed.stream_from]})",
                     f"{human_bytes(b.stream)} per token at {speed.stream.text}"))
    if speed.vram is not None:
        rows.append(("VRAM", f"{human_bytes(b.vram)} per token at the start, at {speed.vram.text}"))
    return rows


def speed_rows(speed: SpeedEstimate) -> list[tuple[str, str]]:
    """Report rows: bytes per tier with their bandwidths, the totals, MoE, calibration, decode and prefill."""
    rows = _tier_rows(speed) + [
        ("Per token", f"{human_bytes(speed.start.total)} read at the start, {human_bytes(speed.full.total)} with "
                      f"{speed.ctx:,} tokens cached (exact bytes)"),
    ]
    if speed.moe is not None:
        rows.append(("MoE", speed.moe.text))
    c = speed.calibration
    rows.append(("Calibration", f"{c.decode:.2f} of the memory-bound rate in decode, {c.prefill:.2f} of the "
                                f"compute rate in prefill ({c.text})"))
    if speed.gpu is not None:
        rows.append(("GPU", speed.gpu.text))
    rows.append(("Decode", decode_text(speed)))
    prefill = speed.prefill
    rows.append(("Prefill", prefill_text(speed) if prefill is None else
                 f"{prefill_text(speed)}: {prefill.flops / 1e9:,.0f} GFLOP at {prefill.compute.text}"))
    return rows


def speed_text(title: str, speed: SpeedEstimate | None, missing: str) -> str:
    """A titled block of `speed_rows`, or the title and why there is no estimate."""
    if speed is None:
        return f"{title}: {missing}"
    return "\n".join([title, *aligned_lines(speed_rows(speed), indent="  ")])


NO_PLAN_SPEED = "no estimate — no plan fits the budget"


def plan_report_with_speed(report: str, speed: SpeedEstimate | None) -> str:
    """The plan's report, then its speed estimate: what the CLI prints and the window's report shows."""
    return f"{report}\n\n{speed_text('Speed estimate', speed, NO_PLAN_SPEED)}"


def _bandwidth_dict(bw: Bandwidth | None) -> dict[str, Any] | None:
    if bw is None:
        return None
    return {"bytes_per_s": bw.bytes_per_s, "source": bw.source.value, "detail": bw.detail,
            "measured_at": bw.measured_at, "date": measured_date(bw.measured_at)}


def _compute_dict(rate: ComputeRate) -> dict[str, Any]:
    return {"flops_per_s": rate.flops_per_s, "source": rate.source.value, "detail": rate.detail,
            "measured_at": rate.measured_at, "date": measured_date(rate.measured_at)}


def _bytes_dict(speed: SpeedEstimate, full: bool) -> dict[str, int]:
    b = speed.full if full else speed.start
    return {"ram": b.ram, "stream": b.stream, "vram": b.vram, "total": b.total}


def prefill_dict(p: PrefillEstimate | None) -> dict[str, Any] | None:
    if p is None:
        return None
    return {"prompt_tokens": p.prompt_tokens, "tok_s": p.tok_s, "ttft_s": p.ttft_s, "flops": p.flops,
            "compute_seconds": p.compute_seconds, "read_seconds": p.read_seconds, "compute": _compute_dict(p.compute)}


def speed_dict(speed: SpeedEstimate | None) -> dict[str, Any] | None:
    """The `tok_s_estimate` payload: the estimate at both ends of a conversation and everything it rests on."""
    if speed is None:
        return None
    c = speed.calibration
    return {
        "tok_s": speed.tok_s,
        "tok_s_full_context": speed.tok_s_full,
        "ctx": speed.ctx,
        "seconds_per_token": 1 / speed.tok_s if speed.tok_s else None,
        "kind": "estimate",
        "measured": False,
        "calibration": {"decode_efficiency": c.decode, "prefill_efficiency": c.prefill, "runs": c.runs,
                        "text": c.text},
        "bytes_per_token": _bytes_dict(speed, full=False),
        "bytes_per_token_full_context": _bytes_dict(speed, full=True),
        "stream_from": speed.stream_from.value if speed.stream_from is not StreamSource.NONE else None,
        "bandwidths": {"ram": _bandwidth_dict(speed.ram), "stream": _bandwidth_dict(speed.stream),
                       "vram": _bandwidth_dict(speed.vram)},
        "moe": speed.moe.text if speed.moe is not None else None,
        "prefill": prefill_dict(speed.prefill),
        "gpu": None if speed.gpu is None else {
            "backend": speed.gpu.speed.backend.value, "decode_share": speed.gpu.decode_share,
            "decode_fixed_s": speed.gpu.decode_fixed_s, "prefill_share": speed.gpu.speed.prefill,
            "hbm": speed.gpu.hbm, "compute": None if speed.gpu.compute is None else _compute_dict(speed.gpu.compute),
            "own_runs": speed.gpu.own is not None, "text": speed.gpu.text},
        "text": decode_text(speed),
    }


def prefill_keys(speed: SpeedEstimate | None) -> dict[str, Any]:
    """The keys `plan`, `fit` and `quants` JSON share for the time to the first token (null without an estimate)."""
    p = None if speed is None else speed.prefill
    return {"prefill_tok_s_estimate": None if p is None else p.tok_s,
            "ttft_s_estimate": None if p is None else p.ttft_s,
            "prompt_tokens": None if p is None else p.prompt_tokens}


def plan_speed_keys(speed: SpeedEstimate | None) -> dict[str, Any]:
    """What `plan --json` adds: bytes per token by tier, the decode estimate and the prefill keys (null when refused)."""
    return {
        "ram_bytes_per_token": None if speed is None else speed.bytes.ram,
        "stream_bytes_per_token": None if speed is None else speed.bytes.stream,
        "tok_s_estimate": speed_dict(speed),
        **prefill_keys(speed),
    }


def plan_payload(plan: MemoryPlan, speed: SpeedEstimate | None, notes: tuple[str, ...] = ()) -> dict[str, Any]:
    """`plan --json` and the window's JSON export: the plan, its speed keys, and why a bandwidth was not measured."""
    return {**plan_dict(plan), **plan_speed_keys(speed), "bandwidth_notes": list(notes)}


def machine_speed_rows(figures: Bandwidths) -> list[tuple[str, str]]:
    """`hw`'s rows: the machine's speed figures, each with its source and date, and the calibration."""
    c = figures.calibration
    return [("RAM bandwidth", figures.ram.text), ("Compute", figures.compute.text),
            ("Calibration", f"decode {c.decode:.2f} of the memory-bound rate, prefill {c.prefill:.2f} of the compute "
                            f"rate ({c.text})")]


def machine_speed_dict(figures: Bandwidths, record: str, notes: tuple[str, ...]) -> dict[str, Any]:
    """`hw --json`'s `speed`: the RAM bandwidth, compute rate and calibration the estimates use, where they are kept."""
    c = figures.calibration
    return {"ram_bandwidth": _bandwidth_dict(figures.ram), "compute": _compute_dict(figures.compute),
            "calibration": {"decode_efficiency": c.decode, "prefill_efficiency": c.prefill, "runs": c.runs,
                            "text": c.text},
            "record": record, "notes": list(notes)}
