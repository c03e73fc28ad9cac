"""The range every number a person gives must fall in: one table for the CLI's options, the
window's inputs and the settings it restores.

Rule 1: a range is closed, [low, high], and names its unit; a value outside it, or not a whole
        number, is refused in one line that states the range. Nothing is changed before the
        value has passed (validate, then mutate).
Rule 2: the highs lie far above any real machine or model (a 1 PiB budget, 16M tokens of
        context, 64 GPUs) and low enough that everything computed from them stays exact and
        quick: a slider in MiB fits Qt's 32-bit int, a float never overflows, a loop over GPUs
        ends at once.
Rule 3: sizes are read by `units.parse_size` (512M, 1.5G, 2GiB, bytes) and shown by
        `units.human_bytes`; rates by `units.parse_rate` (1008GB/s decimal, 20GiB/s or 20G binary); counts by `units.parse_count` (8192, 8,192, 8_192; tokens also 8k).
Rule 4: compute rates are typed as decimal numbers of their unit (`ScaledRate`: a GPU's FP16 rate in
        TFLOPS, a CPU's in GFLOPS), by the command line and the window alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.errors import RequestError
from gguf_budget.core.units import human_bytes, parse_count, parse_rate, parse_size

PIB = 1 << 50


@dataclass(frozen=True)
class Range:
    """Whole numbers from `low` to `high` (both included) of one kind of quantity."""

    what: str
    low: int
    high: int
    unit: str = ""

    @property
    def text(self) -> str:
        """'from 1 to 16,777,216 tokens' — what a message and a --help line say."""
        if self.unit == "bytes":
            return f"from {human_bytes(self.low)} to {human_bytes(self.high)}"
        if self.unit == "bytes/s":
            return f"from {human_bytes(self.low)}/s to {human_bytes(self.high)}/s"
        return f"from {self.low:,} to {self.high:,}{' ' + self.unit if self.unit else ''}"

    def contains(self, value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and self.low <= value <= self.high

    def check(self, value: object) -> int:
        """`value` when inside the range; a ValueError stating the range otherwise."""
        if not self.contains(value):
            raise RequestError(f"{self.what} must be {self.text}, got {shown(value)}")
        assert isinstance(value, int)
        return value

    def parse(self, text: str) -> int:
        """Read a typed value (a size for byte ranges, a rate for bytes/s, else a whole number, `8,192` or for
        tokens `8k`) and check it."""
        if self.unit == "bytes":
            return self.check(parse_size(text))
        if self.unit == "bytes/s":
            return self.check(parse_rate(text))
        return self.check(parse_count(text, self.what, thousands=self.unit == "tokens"))


@dataclass(frozen=True)
class ScaledRate:
    """Rule 4: a rate typed as a decimal number of `unit` (82.6 TFLOPS), from `low` to `high` of them, read as whole
    FLOP/s (`scale` per unit)."""

    what: str
    low: float
    high: float
    scale: float
    unit: str

    def parse(self, text: str) -> int:
        try:
            value = float(text.strip().replace(",", ""))
        except ValueError:
            raise RequestError(f"{self.what} must be a number, got {shown(text)}") from None
        if not self.low <= value <= self.high:
            raise RequestError(f"{self.what} must be from {self.low:g} to {self.high:g} {self.unit}, got {shown(text)}")
        return int(value * self.scale)

    def check(self, value: object) -> int:
        """`value` (whole FLOP/s) when inside the range; a RequestError stating the range otherwise."""
        if (not isinstance(value, int) or isinstance(value, bool)
                or not self.low * self.scale <= value <= self.high * self.scale):
            raise RequestError(f"{self.what} must be from {self.low:g} to {self.high:g} {self.unit}, "
                               f"got {shown(value)} FLOP/s")
        return value


def shown(value: object) -> str:
    """A value as a message quotes it: long ones are cut (a 300-digit number says how long it is; one of thousands
    of digits, which Python will not print, its size in bits)."""
    if isinstance(value, int) and value.bit_length() > 4096:
        return f"an integer of {value.bit_length():,} bits"
    try:
        text = repr(value) if isinstance(value, str) else str(value)
    except ValueError:  # such an integer inside a tuple or a record
        return f"a {type(value).__name__} too long to print"
    return text if len(text) <= 24 else f"{text[:12]}… ({len(text)} characters)"


HEADER_CAP = Range("a header size", 1 << 10, 256 << 20, "bytes")
"""The reader refuses a header past 256 MiB (`gguf.header.MAX_HEADER_BYTES` is this high)."""

BUDGET = Range("a RAM budget", 0, PIB, "bytes")
"""0 means unlimited."""

MEMORY = Range("a memory size", 0, PIB, "bytes")
"""Free or total host RAM and GPU memory, and the reserves kept back from them."""

CONTEXT = Range("a context", 1, 1 << 24, "tokens")
"""The longest trained contexts are about 10M tokens (Llama 4 Scout)."""

BUFFERS = Range("a ring depth", 1, 8, "buffers")
"""A deeper prefetch ring only costs memory once one layer is in flight while the next is read."""

BANDWIDTH = Range("a bandwidth", 1, PIB, "bytes/s")
"""Bytes per second a memory tier reads; a GPU's HBM is a few TB/s."""

GPU_LAYERS = Range("the GPU layers", 0, 1 << 16, "layers")
"""llama.cpp's -ngl; more than the model has means all of them (a header holds at most 2^16 tensors)."""

LAYERS_ASKED = Range("a layer count", 0, (1 << 31) - 1, "layers")
"""-ngl and --n-cpu-moe as a llama.cpp command gives them: any int of its; `all` is the largest (past any model's last
layer, which the placement clamps)."""

GPU_COUNT = Range("a GPU count", 1, 64, "GPUs")
"""Hypothetical GPUs of one size."""

PROMPT_TOKENS = Range("a prompt length", 1, 1 << 24, "tokens")
"""The prompt whose time to the first token is estimated; as long as the longest context."""

GPU_TFLOPS = ScaledRate("a GPU FP16 rate", 0.01, 1e5, 1e12, "TFLOPS")
"""A GPU's dense FP16 matrix rate (`--gpu-tflops`): an RTX 4090's is 165 (FP16 accumulate 330), an H100 SXM's ~990."""

CPU_GFLOPS = ScaledRate("a CPU compute rate", 0.1, 1e6, 1e9, "GFLOPS")
"""A CPU's matrix-multiply rate (`--cpu-gflops`): a few cores' float32 ~100, a server's some thousands."""
