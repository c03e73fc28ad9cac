"""A byte count that moves with the KV cache's cells: one replay answers every ctx of a range, exactly.

Pure. The graph builder's sizes that depend on the cache are affine in its cells (masks cells·T·2|4, cache views and
their copies cells·elements·bytes, KQ 4·cells·T·H), and ggml's allocator and scheduler only add, subtract, align and
compare sizes (`graph_alloc` Rules 2–5, `sched` Rule 8). So a replay run once with the cells as a parameter can say
over which cells every one of its decisions holds, and each buffer there is one affine function of the cells.

Rule 1: the parameter τ counts grid steps from the ask: cells = cells₀ + g·τ (g: `GRID` where cells₀ is a multiple of it,
        as llama.cpp pads n_ctx to 256; else the largest power of two dividing cells₀). A size is `a + s·τ`, whole
        numbers, `a` its value at the ask.
Rule 2: an `Affine` is the int it is at the ask, so the allocator and the scheduler run on it unchanged: one allocator,
        and a replay over plain ints is the plain replay. Sums, differences, negation and products by whole numbers
        stay affine; a slope of 0 is a plain int again.
Rule 3: every comparison answers as at the ask and narrows the replay's `Domain` to the τ where that answer holds: an
        inequality keeps a half-line; an equality of two different lines keeps the ask alone when true, and the side
        of the crossing the ask is on when false; of the same line it holds everywhere. So at every τ of the domain
        the replay takes each branch it took at the ask, and each buffer is the same affine function: exact.
Rule 4: what is not provably affine pins the domain to the ask alone (its answer is then the plain replay's): a floor
        division whose slope is not a multiple of the divisor (an alignment the slope misses), a product by anything
        but a whole number, a product of two affine sizes, and every other int operation (hash, index, float, bits).
Rule 5: the high-water mark decides nothing in the replay (`graph_alloc` Rule 5: it is only its answer), so it is
        not compared: `highest` keeps the highest line of each slope (`Peak`), and the buffer at a τ is the highest
        of them there — the maximum the plain replay takes, taken after instead of during. A peak read in any other
        way pins the domain (Rule 4).
"""

from __future__ import annotations

from collections.abc import Callable
from math import gcd

GRID = 256
FAR = 1 << 62


class Domain:
    """Rule 3: the τ over which every comparison a replay has made keeps the answer it had at the ask (τ = 0)."""

    __slots__ = ("lo", "hi")

    def __init__(self) -> None:
        self.lo = -FAR
        self.hi = FAR

    def keep(self, slope: int, bound: int) -> None:
        """Narrow to the τ where slope·τ ≤ bound (true at τ = 0)."""
        if slope > 0:
            self.hi = min(self.hi, bound // slope)
        elif slope < 0:
            self.lo = max(self.lo, -(bound // -slope))

    def pin(self) -> None:
        """Rule 4: the ask alone."""
        self.lo = max(self.lo, 0)
        self.hi = min(self.hi, 0)


def grid(cells: int) -> int:
    """Rule 1: the grid step of a replay asked at `cells`."""
    return gcd(cells, GRID) if cells else GRID


def cells_of(cells: int, domain: Domain) -> int:
    """Rule 1: the cells as the parametric replay counts them, `cells` at the ask."""
    return Affine(cells, grid(cells), domain)


def floor_times(x: int, factor: float) -> int:
    """`int(x·factor)` (a cache view's bytes: its elements times a type's bytes per element, 34/32 for q8_0), affine
    where the factor times the slope is whole (with 256 cells a step, every cache type's); else Rule 4."""
    if isinstance(x, Affine):
        slope = x.s * factor
        if slope.is_integer():
            return Affine(int(x.a * factor), int(slope), x.domain) if slope else int(x.a * factor)
        x.domain.pin()
        return int(x.a * factor)
    return int(x * factor)


class Affine(int):
    """Rule 2: `a + s·τ` (s ≠ 0), which is `a` wherever Python reads it as an int; `domain` is its replay's."""

    a: int
    s: int
    domain: Domain

    def __new__(cls, a: int, s: int, domain: Domain) -> Affine:
        self = int.__new__(cls, a)
        self.a, self.s, self.domain = a, s, domain
        return self

    def __repr__(self) -> str:
        return f"Affine({self.a}{self.s:+}τ)"

    def _other(self, other: object) -> tuple[int, int] | None:
        kind = type(other)
        if kind is int:
            return other, 0  # type: ignore[return-value]  # `type(x) is int`, which mypy does not narrow
        if kind is Affine:
            return other.a, other.s  # type: ignore[attr-defined]
        self.domain.pin()
        return None

    def __add__(self, other: int) -> int:
        o = self._other(other)
        if o is None:
            return NotImplemented
        s = self.s + o[1]
        return Affine(self.a + o[0], s, self.domain) if s else self.a + o[0]

    __radd__ = __add__

    def __sub__(self, other: int) -> int:
        o = self._other(other)
        if o is None:
            return NotImplemented
        s = self.s - o[1]
        return Affine(self.a - o[0], s, self.domain) if s else self.a - o[0]

    def __rsub__(self, other: int) -> int:
        o = self._other(other)
        if o is None:
            return NotImplemented
        s = o[1] - self.s
        return Affine(o[0] - self.a, s, self.domain) if s else o[0] - self.a

    def __neg__(self) -> int:
        return Affine(-self.a, -self.s, self.domain)

    def __mul__(self, other: int) -> int:
        o = self._other(other)
        if o is None:
            return NotImplemented
        if o[1]:
            self.domain.pin()
            return self.a * o[0]
        return Affine(self.a * o[0], self.s * o[0], self.domain) if o[0] else 0

    __rmul__ = __mul__

    def __floordiv__(self, other: int) -> int:
        o = self._other(other)
        if o is None:
            return NotImplemented
        if o[1] or o[0] <= 0 or self.s % o[0]:
            self.domain.pin()
            return self.a // o[0]
        return Affine(self.a // o[0], self.s // o[0], self.domain)

    def __lt__(self, other: int) -> bool:
        o = self._other(other)
        if o is None:
            return NotImplemented
        return _less(self.domain, self.a - o[0], self.s - o[1])

    def __gt__(self, other: int) -> bool:
        o = self._other(other)
        if o is None:
            return NotImplemented
        return _less(self.domain, o[0] - self.a, o[1] - self.s)

    def __le__(self, other: int) -> bool:
        o = self._other(other)
        if o is None:
            return NotImplemented
        return not _less(self.domain, o[0] - self.a, o[1] - self.s)

    def __ge__(self, other: int) -> bool:
        o = self._other(other)
        if o is None:
            return NotImplemented
        return not _less(self.domain, self.a - o[0], self.s - o[1])

    def __eq__(self, other: object) -> bool:
        o = self._other(other)
        if o is None:
            return NotImplemented
        return _zero(self.domain, self.a - o[0], self.s - o[1])

    def __ne__(self, other: object) -> bool:
        o = self._other(other)
        if o is None:
            return NotImplemented
        return not _zero(self.domain, self.a - o[0], self.s - o[1])

    def __bool__(self) -> bool:
        return not _zero(self.domain, self.a, self.s)


def _less(domain: Domain, d0: int, s: int) -> bool:
    """Rule 3: whether d = d0 + s·τ is below 0 at the ask, the domain narrowed to where that holds."""
    if d0 < 0:
        domain.keep(s, -1 - d0)
        return True
    domain.keep(-s, d0)
    return False


def _zero(domain: Domain, d0: int, s: int) -> bool:
    """Rule 3: whether d = d0 + s·τ is 0 at the ask, the domain narrowed to where that holds."""
    if not s:
        return d0 == 0
    if d0 == 0:
        domain.pin()
        return True
    _less(domain, d0, s)
    return False


class Peak(int):
    """Rule 5: the highest of several sizes, kept as the highest value at the ask of each slope (`lines`); it is the
    highest of them at the ask wherever Python reads it as an int."""

    lines: dict[int, int]
    domain: Domain

    def __new__(cls, lines: dict[int, int], domain: Domain) -> Peak:
        self = int.__new__(cls, max(lines.values()))
        self.lines, self.domain = lines, domain
        return self


def _lines(x: int) -> tuple[dict[int, int], Domain | None]:
    if isinstance(x, Peak):
        return x.lines, x.domain
    if isinstance(x, Affine):
        return {x.s: x.a}, x.domain
    return {0: x}, None


def highest(x: int, y: int) -> int:
    """Rule 5: `max(x, y)` for the high-water mark, compared at no τ: a `Peak` where either moves with the cells."""
    if type(x) is int and type(y) is int:
        return x if x >= y else y
    if type(x) is Peak and type(y) is Affine and x.lines.get(y.s, y.a - 1) >= y.a:
        return x
    lines, domain = _lines(x)
    more, other = _lines(y)
    lines = dict(lines)
    for slope, at in more.items():
        if lines.get(slope, at - 1) < at:
            lines[slope] = at
    return Peak(lines, domain or other or Domain())


def lines_of(x: int) -> tuple[tuple[int, int], ...]:
    """Rules 2 and 5: a replay's answer as (value at the ask, change per step) lines, the size the highest of them."""
    return tuple((at, slope) for slope, at in _lines(x)[0].items())


def _pinned(name: str, kind: type[int] = Affine) -> Callable[..., object]:
    """Rule 4: int's own `name`, at the ask, the domain pinned there."""
    base = getattr(int, name)

    def pinned(self: Affine | Peak, *args: object) -> object:
        self.domain.pin()
        return base(int.__int__(self), *args)
    pinned.__qualname__ = f"{kind.__name__}.{name}"
    return pinned


for _name in ("__mod__", "__rmod__", "__divmod__", "__rdivmod__", "__pow__", "__rpow__", "__truediv__", "__rtruediv__",
              "__rfloordiv__", "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__", "__lshift__",
              "__rlshift__", "__rshift__", "__rrshift__", "__invert__", "__abs__", "__pos__", "__round__", "__trunc__",
              "__floor__", "__ceil__", "__int__", "__index__", "__float__", "__hash__", "__getnewargs__",
              "bit_length", "bit_count", "to_bytes", "as_integer_ratio", "conjugate", "is_integer"):
    if hasattr(int, _name):
        setattr(Affine, _name, _pinned(_name))
for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__neg__", "__mul__", "__rmul__", "__floordiv__", "__lt__",
              "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__bool__", "__mod__", "__rmod__", "__divmod__",
              "__rdivmod__", "__pow__", "__rpow__", "__truediv__", "__rtruediv__", "__rfloordiv__", "__and__", "__rand__",
              "__or__", "__ror__", "__xor__", "__rxor__", "__lshift__", "__rlshift__", "__rshift__", "__rrshift__",
              "__invert__", "__abs__", "__pos__", "__round__", "__trunc__", "__floor__", "__ceil__", "__int__",
              "__index__", "__float__", "__hash__", "__getnewargs__", "bit_length", "bit_count", "to_bytes",
              "as_integer_ratio", "conjugate", "is_integer"):
    if hasattr(int, _name):
        setattr(Peak, _name, _pinned(_name, Peak))


def _pinned_constant(value: int) -> property:
    def read(self: Affine) -> int:
        self.domain.pin()
        return value
    return property(read)


for _name, _read in (("real", property(_pinned("__int__"))), ("numerator", property(_pinned("__int__"))),
                     ("imag", _pinned_constant(0)), ("denominator", _pinned_constant(1))):
    setattr(Affine, _name, _read)
    setattr(Peak, _name, _read)
