"""Byte sizes for people: `human_bytes` to print, `parse_size` to read — the one pair CLI and GUI share.

Rule 1: one reading of sizes for the CLI and the window — binary units throughout: K/M/G/T,
        KiB/MiB/GiB/TiB and KB/MB/GB/TB all mean powers of 1024 (JEDEC's memory convention:
        a "16 GB" module holds 16 GiB, and llama.cpp prints MiB); plain digits are bytes.
Rule 2: a size written with a decimal-looking unit (KB, MB, GB, TB, PB) is read by Rule 1, and
        `binary_unit_note` says so in one line, so "5GB" is never silently 5·10^9 or 5·2^30.
Rule 3: `round_step` gives the round numbers (1, 2 or 5 × 10^k) ranges and steps are made of.
Rule 4: a rate (a bandwidth) is read as spec sheets print it (`parse_rate`): KB/MB/GB/TB/PB, with or
        without `/s`, are decimal (`1008GB/s` and `1008 GB/s` are 1.008·10¹² bytes per second);
        KiB/MiB/GiB/TiB/PiB are binary; a bare K/M/G/T/P (`20G`) is binary as in a size (Rule 1);
        plain digits are bytes per second. `rate_reading` says back what was read, in one line.
Rule 5: a byte axis ticks at round binary sizes: the unit (B, KiB, MiB, GiB, TiB, `AXIS_UNITS`) is the
        largest of which the span holds one; the step is 1, 2 or 5 × 10^k of that unit, aiming for about
        AXIS_TICKS ticks (`nice_step`).
Rule 6: a chart's top is the first tick at or above its tallest value plus AXIS_HEADROOM (`axis_top`), so it
        moves only when that value crosses a tick. Dragging the budget then rescales the axis a handful of
        times across the whole range instead of on every step (each rescale re-lays out and repaints the
        whole chart), and the top is always a labelled tick.
"""

from __future__ import annotations

import math
import re

from gguf_budget.core.errors import RequestError

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
_SCALE = {"": 0, "b": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgtp]?)(i?b)?\s*$", re.IGNORECASE)
INT64_MAX = 2**63 - 1
"""The largest byte count or count anywhere in the tool: GGUF's own int64 limit, 2^63−1."""


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """'1 model', '2 models', '0 models', '1,024 folders': a count with its noun in the right number."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def human_bytes(n: int | None) -> str:
    """1536 → '1.50 KiB'; negative numbers keep their sign; None → 'unknown'."""
    if n is None:
        return "unknown"
    sign = "-" if n < 0 else ""
    v = float(abs(n))
    for unit in _UNITS:
        if v < 1024 or unit == _UNITS[-1]:
            return f"{sign}{int(v)} B" if unit == "B" else f"{sign}{v:.2f} {unit}"
        v /= 1024
    raise AssertionError("unreachable")


def size_text(n: int) -> str:
    """A size as `parse_size` reads it back exactly, short where it is round: 6 GiB → '6G', 1.5 GiB → '1536M',
    anything else in bytes ('0' for 0)."""
    for shift, suffix in ((30, "G"), (20, "M")):
        if n and n % (1 << shift) == 0:
            return f"{n >> shift}{suffix}"
    return str(n)


def signed_bytes(n: int) -> str:
    """A difference in bytes with its sign: +1.50 MiB, −512 B, 0 B."""
    return "0 B" if n == 0 else f"{'+' if n > 0 else '−'}{human_bytes(abs(n))}"


def human_bandwidth(bytes_per_s: int | None) -> str:
    """1_008_096_000_000 → '1008 GB/s' (decimal, as makers state bandwidth); None → 'unknown'."""
    if bytes_per_s is None:
        return "unknown"
    return f"{bytes_per_s / 1e9:.0f} GB/s" if bytes_per_s >= 10**10 else f"{bytes_per_s / 1e9:.1f} GB/s"


_COUNT = re.compile(r"^\s*(-?)(\d{1,3}(?:[,_ ]\d{3})+|\d+)\s*(k?)\s*$", re.IGNORECASE)
MAX_COUNT_DIGITS = 4000  # under Python's int-from-text limit (4300 digits); a range check follows anyway


def parse_count(text: str, what: str = "a number", thousands: bool = False) -> int:
    """'8192', '8,192', '8_192', '8 192' → 8192; with `thousands`, '8k'/'128K' → ×1024 (a ctx). RequestError else."""
    m = _COUNT.match(text or "")
    digits = m.group(2) if m else ""
    if not m or (m.group(3) and not thousands) or len(digits) > MAX_COUNT_DIGITS:
        unit = ", or a number of K such as 8k" if thousands else ""
        raise RequestError(f"{what} must be a whole number (digits, 8,192 or 8_192{unit}), got {text[:24]!r}")
    value = int(re.sub(r"[,_ ]", "", digits)) * (1024 if m.group(3) else 1)
    return -value if m.group(1) else value


def parse_size_list(text: str) -> tuple[int, ...]:
    """'1.5G,0,512M' → bytes each (a size per device, in order); ValueError naming the bad one."""
    return tuple(parse_size(part) for part in text.split(","))


def parse_size(text: str) -> int:
    """'512M', '1.5G', '2GiB', '1048576' → bytes. Raises RequestError with a one-line reason."""
    m = _SIZE.match(text or "")
    if not m:
        raise RequestError(f"not a size: {text!r} (try 512M, 1.5G, 2GiB or plain bytes)")
    value = float(m.group(1)) * 1024 ** _SCALE[m.group(2).lower()]
    if not math.isfinite(value) or value > INT64_MAX:
        raise RequestError(f"size too large: {text!r}")
    return int(round(value))


def binary_unit_note(text: str) -> str | None:
    """Rule 2: '5GB' → 'read 5GB as binary units: 5.00 GiB (1 GB = 1024³ bytes)'; None for any other text."""
    m = _SIZE.match(text or "")
    if not m or not m.group(2) or (m.group(3) or "").lower() != "b":
        return None
    letter = m.group(2).lower()
    power = "¹²³⁴⁵"[_SCALE[letter] - 1] if _SCALE[letter] > 1 else ""
    return f"read {text.strip()} as binary units: {human_bytes(parse_size(text))} (1 {letter.upper()}B = 1024{power} bytes)"


_RATE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(?:([kmgtp])(i?)(b?)|(b?))\s*(/\s*s)?\s*$", re.IGNORECASE)
_DECIMAL_UNITS = ("B", "KB", "MB", "GB", "TB", "PB")
_DECIMAL_POWERS = ("³", "⁶", "⁹", "¹²", "¹⁵")


def _rate_parts(text: str) -> tuple[float, int, bool]:
    """Rule 4: (the number, the power of the unit, whether it is decimal); RequestError when not a rate."""
    m = _RATE.match(text or "")
    if not m:
        raise RequestError(f"not a rate: {text[:40]!r} (try 1008GB/s, 1008 GB/s, 20GiB/s, 20G or plain bytes per second)")
    letter = (m.group(2) or "").lower()
    decimal = bool(letter) and not m.group(3) and bool(m.group(4))
    return float(m.group(1)), _SCALE[letter], decimal


def parse_rate(text: str) -> int:
    """Rule 4: '1008GB/s', '1008 GB/s' → 1_008_000_000_000; '20GiB/s', '20G' → 20 × 1024³; '1000' → 1000."""
    number, power, decimal = _rate_parts(text)
    value = number * (1000 if decimal else 1024) ** power
    if not math.isfinite(value) or value > INT64_MAX:
        raise RequestError(f"rate too large: {text[:40]!r}")
    return int(round(value))


def rate_reading(text: str) -> str:
    """Rule 4 said back: '1008GB/s read as 1,008,000,000,000 bytes/s (decimal GB: 10⁹ bytes, as spec sheets print)'."""
    _, power, decimal = _rate_parts(text)
    value = parse_rate(text)
    said = f"read {text.strip()} as {value:,} bytes/s"
    if power == 0:
        return said
    if decimal:
        unit = _DECIMAL_UNITS[power]
        return f"{said} (decimal {unit}: 1 {unit} = 10{_DECIMAL_POWERS[power - 1]} bytes, as spec sheets print)"
    exponent = "¹²³⁴⁵"[power - 1] if power > 1 else ""
    return f"{said} = {human_bytes(value)}/s (binary: 1 {_UNITS[power]} = 1024{exponent} bytes)"


def round_step(x: float) -> int:
    """Rule 3: the largest of 1, 2, 5, 10, 20, 50, … that is at most `x` (1 for anything below 2)."""
    if x < 2:
        return 1
    power = int(10 ** (len(str(int(x))) - 1))
    return max(m * power for m in (1, 2, 5) if m * power <= x)


def significant(x: float, digits: int = 2) -> str:
    """A rate to `digits` significant figures, whole numbers from 100 up: 3.456 → '3.5', 1234.5 → '1,234'."""
    if x == float("inf"):
        return "∞"
    return f"{x:,.0f}" if x >= 10 ** digits else format(x, f".{digits}g")


AXIS_UNITS = _UNITS[:5]
"""Rule 5: a byte axis's units, B to TiB."""
AXIS_TICKS = 5
AXIS_HEADROOM = 0.06
"""Room above the tallest value for the line labels that sit on it."""


def unit_for(span: float) -> int:
    """The power of 1024 whose unit suits `span` bytes (Rule 5)."""
    power = 0
    while power < len(AXIS_UNITS) - 1 and span >= 1024 ** (power + 1):
        power += 1
    return power


def nice_step(span: float) -> tuple[float, int]:
    """(step in bytes, unit power) for a span in bytes (Rule 5)."""
    power = unit_for(span)
    raw = max(span / 1024**power / AXIS_TICKS, 1e-9)
    decade = 10 ** math.floor(math.log10(raw))
    mult = next((m for m in (1, 2, 5, 10) if m * decade >= raw), 10)
    return mult * decade * 1024**power, power


def axis_top(tallest: float) -> float:
    """The top of a byte axis from 0 that shows `tallest` bytes with room above it (Rule 6)."""
    top = max(tallest, 1.0) * (1 + AXIS_HEADROOM)
    while True:  # the axis ticks by the step of its own span: round up until the top is one
        step, _ = nice_step(top)
        rounded = math.ceil(top / step - 1e-9) * step
        if rounded == top:
            return top
        top = rounded
