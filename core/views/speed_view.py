"""What a speed estimate says: one line for a screen, report rows, and the JSON payload.

Rule 1: every text that shows a tokens/s figure says it is an estimate: "decode ≤ ~N tok/s
        (memory-bandwidth bound, not measured)"; bytes per token are exact and say so.
Rule 2: tokens/s keep two significant figures (≥ 100 as whole numbers): the bandwidths are
        rarely known better than that.
Rule 3: every bandwidth shows its source (measured, typed, assumed) and detail; MoE plans say
        at which fraction routed experts were counted.
"""

from __future__ import annotations

from typing import Any

from gguf_budget.core.machine.bandwidth import Bandwidth, Bandwidths, ComputeRate, measured_date
from gguf_budget.core.plan.types import MemoryPlan
from gguf_budget.core.speed.estimate import ESTIMATE_LABEL, STREAM_WORDS, SpeedEstimate, StreamSource
from gguf_budget.core.units import human_bytes, significant
from gguf_budget.core.views.plan_report import plan_dict
from gguf_budget.core.views.table import aligned_lines


def bound_text(speed: SpeedEstimate) -> str:
    """'≤ ~3.4 tok/s': the bound alone, for a table cell whose header or footnote says it is an estimate."""
    return f"≤ ~{significant(speed.tok_s)} tok/s"


def decode_text(speed: SpeedEstimate) -> str:
    """'decode ≤ ~3.4 tok/s (memory-bandwidth bound, not measured)'."""
    return f"decode {bound_text(speed)} ({ESTIMATE_LABEL})"


def streamed_text(speed: SpeedEstimate) -> str:
    """'each token streams 27.30 GiB from disk' or 'nothing streams'."""
    if speed.bytes.stream == 0:
        return "nothing streams"
    return f"each token streams {human_bytes(speed.bytes.stream)} {STREAM_WORDS[speed.stream_from]}"


def _tier_rows(speed: SpeedEstimate) -> list[tuple[str, str]]:
    b = speed.bytes
    rows = [("RAM", f"{human_bytes(b.ram)} per token at {speed.ram.text}")]
    if speed.stream is not None:
        rows.append((f"Stream ({STREAM_WORDS[speed.stream_from]})",
                     f"{human_bytes(b.stream)} per token at {speed.stream.text}"))
    if speed.vram is not None:
        rows.append(("VRAM", f"{human_bytes(b.vram)} per token at {speed.vram.text}"))
    return rows


def speed_rows(speed: SpeedEstimate) -> list[tuple[str, str]]:
    """Report rows: bytes per tier with their bandwidths, the total, MoE, the bound."""
    rows = _tier_rows(speed) + [("Per token", f"{human_bytes(speed.bytes.total)} read in all (exact bytes)")]
    if speed.moe is not None:
        rows.append(("MoE", speed.moe.text))
    return rows + [("Decode", decode_text(speed))]


def speed_text(title: str, speed: SpeedEstimate | None, missing: str) -> str:
    """A titled block of `speed_rows`, or the title and why there is no estimate."""
    if speed is None:
        return f"{title}: {missing}"
    return "\n".join([title, *aligned_lines(speed_rows(speed), indent="  ")])


NO_PLAN_SPEED = "no estimate — no plan fits the budget"


def plan_report_with_speed(report: str, speed: SpeedEstimate | None) -> str:
    """The plan's report, then its decode estimate: what the CLI prints and the window's report shows."""
    return f"{report}\n\n{speed_text('Decode estimate', speed, NO_PLAN_SPEED)}"


def _bandwidth_dict(bw: Bandwidth | None) -> dict[str, Any] | None:
    if bw is None:
        return None
    return {"bytes_per_s": bw.bytes_per_s, "source": bw.source.value, "detail": bw.detail,
            "measured_at": bw.measured_at, "date": measured_date(bw.measured_at)}


def _compute_dict(rate: ComputeRate) -> dict[str, Any]:
    return {"flops_per_s": rate.flops_per_s, "source": rate.source.value, "detail": rate.detail,
            "measured_at": rate.measured_at, "date": measured_date(rate.measured_at)}


def machine_speed_rows(figures: Bandwidths) -> list[tuple[str, str]]:
    """`hw`'s rows: the machine's speed figures, each with its source and date."""
    return [("RAM bandwidth", figures.ram.text), ("Compute", figures.compute.text)]


def machine_speed_dict(figures: Bandwidths, record: str, notes: tuple[str, ...]) -> dict[str, Any]:
    """`hw --json`'s `speed`: the RAM bandwidth and compute rate the estimates use, where they are kept."""
    return {"ram_bandwidth": _bandwidth_dict(figures.ram), "compute": _compute_dict(figures.compute),
            "record": record, "notes": list(notes)}


def speed_dict(speed: SpeedEstimate | None) -> dict[str, Any] | None:
    """The `tok_s_estimate` payload: the bound, its bytes and every assumption it rests on."""
    if speed is None:
        return None
    b = speed.bytes
    return {
        "tok_s": speed.tok_s,
        "seconds_per_token": speed.seconds_per_token,
        "bound": ESTIMATE_LABEL,
        "measured": False,
        "bytes_per_token": {"ram": b.ram, "stream": b.stream, "vram": b.vram, "total": b.total},
        "stream_from": speed.stream_from.value if speed.stream_from is not StreamSource.NONE else None,
        "bandwidths": {"ram": _bandwidth_dict(speed.ram), "stream": _bandwidth_dict(speed.stream),
                       "vram": _bandwidth_dict(speed.vram)},
        "moe": speed.moe.text if speed.moe is not None else None,
        "text": decode_text(speed),
    }


def plan_speed_keys(speed: SpeedEstimate | None) -> dict[str, Any]:
    """What `plan --json` adds: bytes per token by tier and the estimate (null when refused)."""
    return {
        "ram_bytes_per_token": None if speed is None else speed.bytes.ram,
        "stream_bytes_per_token": None if speed is None else speed.bytes.stream,
        "tok_s_estimate": speed_dict(speed),
    }


def plan_payload(plan: MemoryPlan, speed: SpeedEstimate | None, notes: tuple[str, ...] = ()) -> dict[str, Any]:
    """`plan --json` and the window's JSON export: the plan, its speed keys, and why a bandwidth was not measured."""
    return {**plan_dict(plan), **plan_speed_keys(speed), "bandwidth_notes": list(notes)}
