"""A header-only GGUF reader: magic, version, metadata and tensor directory — never the data.

Why not `gguf.GGUFReader`: it maps the whole file, builds numpy views of every token
string and fails on header-only files. On a Llama-3-8B-shaped file (128,256 tokens and
280,147 merges) it takes seconds where this reader takes tens of milliseconds
(`benchmarks/bench_header.py` prints both, measured in the same run). We still take every
name and number of the format from `gguf.constants`, and `tests/test_gguf_header.py`
cross-checks this reader against `GGUFReader` on small complete files.

Rules, enforced before anything is allocated:
1. Every count and length is checked against the bytes that remain in the file, and the
   header may not run past `MAX_HEADER_BYTES`, however large the file is.
2. Arrays longer than `keep_array_max` are skipped (their bytes still walked and
   checked) and kept as a `SkippedArray` count; strings over `KEEP_STRING_MAX` likewise
   become a `SkippedString` length.
3. Work and memory have budgets independent of the file's size: at most `MAX_KEYS` keys
   and `MAX_TENSORS` tensors; walking skipped arrays costs `MAX_WALK` units at most (1 per
   string, `NESTED_ARRAY_COST` per array inside an array); what is kept (keys, values,
   tensor records) may use about `MAX_KEPT_BYTES` of Python memory. Past a budget the file
   is refused, so a sparse file claiming 10^8 items costs a fraction of a second.
4. A metadata key appears once (gguf-py and llama.cpp refuse repeats, and the later value
   would otherwise win, e.g. a spoofed `block_count`); the header records each key's offset
   so later semantic errors can name it.
5. Only regular files are read (`core.regular_file.open_regular`): a FIFO or device never blocks.
6. Any malformed input raises `GGUFFormatError` naming the byte offset; an unreadable file is
   a `ModelLoadError`; nothing else escapes.
7. A skipped string array whose bytes equal one walked before in this process (every
   quantization of a family carries the same vocabulary and merges) is passed by one byte
   comparison instead of 400k length reads (`seen_arrays`): exact, as the same bytes walk
   the same way. 1,000 8B-shaped headers: first library scan 17.5 s → 9.4 s on 2 cores.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass, field
from itertools import pairwise
from math import prod
from typing import Any, BinaryIO, Mapping

from gguf_budget.core.gguf.constants import (
    GGML_QUANT_SIZES,
    GGUF_DEFAULT_ALIGNMENT,
    GGUF_MAGIC,
    GGMLQuantizationType,
    GGUFValueType,
    Keys,
)

from gguf_budget.core.errors import GGUFFormatError, TruncatedHeaderError
from gguf_budget.core.frozen import FrozenMap
from gguf_budget.core.regular_file import open_regular, os_error
from gguf_budget.core.gguf.seen_arrays import MIN_COUNT, PREFIX_BYTES, SEEN
from gguf_budget.core.gguf.seen_arrays import key as seen_key
from gguf_budget.core.ranges import HEADER_CAP
from gguf_budget.core.units import INT64_MAX

KEEP_ARRAY_MAX = 4096
"""Arrays with more elements than this are counted, not kept (token lists, merges, scores)."""

KEEP_STRING_MAX = 1 << 20
"""Metadata strings longer than this (1 MiB) are skipped and kept as a `SkippedString` length,
so a hostile multi-GB string costs no memory; real chat templates are a few KB."""

MAX_NAME_BYTES = 1024
"""Keys and tensor names longer than this are malformed (llama.cpp caps tensor names at 64)."""

MAX_ARRAY_NESTING = 8
"""Deeper nesting is refused: no real model nests arrays, and recursion must stay bounded."""

MAX_HEADER_BYTES = HEADER_CAP.high
"""Metadata plus tensor directory may not pass this offset: real headers are a few MiB."""

MAX_KEYS = 1 << 16
"""Metadata keys in one header; real files have under a hundred."""

MAX_TENSORS = 1 << 16
"""Tensors in one header; the largest real files have a few thousand."""

MAX_WALK = 1 << 22
"""Work units for walking skipped arrays (a Llama-3 header spends about 410,000)."""

NESTED_ARRAY_COST = 64
"""Work units per array inside an array: each costs a Python call where a string costs a step."""

MAX_KEPT_BYTES = 64 << 20
"""Approximate Python memory for everything kept; real headers keep well under 1 MiB."""

_KEPT_STRING_BYTES = 64
_KEPT_SCALAR_BYTES = 32
_KEPT_TENSOR_BYTES = 400

GGML_MAX_DIMS = 4
SUPPORTED_VERSIONS = (2, 3)

_SCALAR_FORMATS: dict[GGUFValueType, str] = {
    GGUFValueType.UINT8: "B",
    GGUFValueType.INT8: "b",
    GGUFValueType.UINT16: "H",
    GGUFValueType.INT16: "h",
    GGUFValueType.UINT32: "I",
    GGUFValueType.INT32: "i",
    GGUFValueType.FLOAT32: "f",
    GGUFValueType.BOOL: "?",
    GGUFValueType.UINT64: "Q",
    GGUFValueType.INT64: "q",
    GGUFValueType.FLOAT64: "d",
}
_SCALAR_STRUCTS = {t: struct.Struct("<" + f) for t, f in _SCALAR_FORMATS.items()}
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_TENSOR_FIELDS = {n: struct.Struct(f"<{n}QIQ") for n in range(1, GGML_MAX_DIMS + 1)}
"""A tensor's dims, type and data offset, after its dims count (`_fields_in_buffer`)."""
_VALUE_TYPES = {int(t): t for t in GGUFValueType}
_GGML_TYPES = {int(t): t for t in GGMLQuantizationType if t in GGML_QUANT_SIZES}

# Smallest possible encodings, used to bound counts by the bytes that remain.
_MIN_KV_BYTES = 8 + 4 + 1  # key length, value type, one-byte value
_MIN_TENSOR_INFO_BYTES = 8 + 4 + 8 + 4 + 8  # name length, n_dims, one dim, type, offset
_MIN_ARRAY_BYTES = 4 + 8  # element type, count


@dataclass(frozen=True)
class SkippedArray:
    """A metadata array too long to keep; its bytes were walked and its count validated."""

    element_type: GGUFValueType
    count: int


@dataclass(frozen=True)
class SkippedString:
    """A metadata string too long to keep; its length was validated and its bytes skipped."""

    length: int


@dataclass(frozen=True)
class TensorInfo:
    """One entry of the tensor directory. `shape` is in ggml order (ne[0] first)."""

    name: str
    shape: tuple[int, ...]
    ggml_type: GGMLQuantizationType
    offset: int
    nbytes: int

    @property
    def n_elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True, kw_only=True)
class GGUFHeader:
    """Everything before the data section of one GGUF file."""

    path: str
    version: int
    metadata: Mapping[str, Any]
    tensors: tuple[TensorInfo, ...]
    alignment: int
    data_offset: int
    file_bytes: int
    key_offsets: Mapping[str, int] = field(default_factory=FrozenMap)

    @property
    def data_end(self) -> int:
        """File offset one past the last tensor's bytes."""
        return self.data_offset + max((t.offset + t.nbytes for t in self.tensors), default=0)

    @property
    def header_only(self) -> bool:
        """True when the file stops before its tensor data ends (skeleton or partial download)."""
        return self.file_bytes < self.data_end

    @property
    def incomplete(self) -> bool:
        """True when the file stops inside the tensor data its header promises: a skeleton ends
        where the data would start, a partial download somewhere after it."""
        return self.data_offset < self.file_bytes < self.data_end


class _Cursor:
    """Buffered forward reader over a file that knows how many bytes remain."""

    CHUNK = 1 << 20

    def __init__(self, f: BinaryIO, size: int):
        self.f = f
        self.size = size
        self.end = min(size, MAX_HEADER_BYTES)
        self.buf = b""
        self.start = 0
        self.pos = 0
        self.walked = 0
        self.kept = 0

    @property
    def offset(self) -> int:
        return self.start + self.pos

    def remaining(self) -> int:
        """Bytes left before the end of the file or the header limit, whichever comes first."""
        return self.end - self.offset

    def _beyond(self) -> str:
        return f" before the reader's {MAX_HEADER_BYTES >> 20} MiB header limit" if self.end < self.size else ""

    def short(self, n: int, what: str) -> GGUFFormatError:
        """The error for `what` needing `n` bytes where fewer remain."""
        if self.end < self.size:
            return GGUFFormatError(f"{what} needs {n} bytes, {self.remaining()} left{self._beyond()}", self.offset)
        return TruncatedHeaderError(f"truncated {what}: needs {n} bytes, {self.remaining()} left", self.offset)

    def past_end(self, message: str, at: int) -> GGUFFormatError:
        """A count or length that runs past the bytes left: the file is cut short, unless the limit is."""
        kind = GGUFFormatError if self.end < self.size else TruncatedHeaderError
        return kind(message + self._beyond(), at)

    def walk(self, units: int, what: str, at: int) -> None:
        """Spend work units for the item at `at`; past `MAX_WALK` the header is refused."""
        self.walked += units
        if self.walked > MAX_WALK:
            raise GGUFFormatError(f"{what} takes the header past the reader's work limit "
                                  f"({MAX_WALK} strings or {MAX_WALK // NESTED_ARRAY_COST} nested arrays)", at)

    def keep(self, nbytes: int, what: str) -> None:
        """Account for memory kept; past `MAX_KEPT_BYTES` the header is refused."""
        self.kept += nbytes
        if self.kept > MAX_KEPT_BYTES:
            raise GGUFFormatError(f"{what} takes the header past the reader's memory limit "
                                  f"({MAX_KEPT_BYTES >> 20} MiB kept)", self.offset)

    def need(self, n: int, what: str) -> None:
        if self.pos + n <= len(self.buf):
            return
        if n > self.remaining():
            raise self.short(n, what)
        keep = self.buf[self.pos :]
        more = self.f.read(min(max(n - len(keep), self.CHUNK), self.remaining() - len(keep)))
        self.start, self.pos = self.offset, 0
        self.buf = keep + more
        if len(self.buf) < n:
            raise GGUFFormatError(f"file shrank while reading {what}", self.offset)

    def skip(self, n: int, what: str) -> None:
        if self.pos + n <= len(self.buf):
            self.pos += n
            return
        if n > self.remaining():
            raise self.short(n, what)
        self.start = self.offset + n
        self.f.seek(self.start)
        self.buf, self.pos = b"", 0

    def unpack(self, st: struct.Struct, what: str) -> Any:
        self.need(st.size, what)
        value = st.unpack_from(self.buf, self.pos)[0]
        self.pos += st.size
        return value

    def u32(self, what: str) -> int:
        return int(self.unpack(_U32, what))

    def u64(self, what: str) -> int:
        return int(self.unpack(_U64, what))

    def count(self, what: str, min_item_bytes: int) -> int:
        at = self.offset
        n = self.u64(what)
        if n * min_item_bytes > self.remaining():
            raise self.past_end(f"{what} {n} cannot fit in the {self.remaining()} bytes left", at)
        return n

    def string(self, what: str, limit: int = MAX_NAME_BYTES) -> str | SkippedString:
        """A string of at most `limit` bytes; a value (not a name) over it is skipped."""
        at = self.offset
        n = self.u64(f"{what} length")
        if n > self.remaining():
            raise self.past_end(f"{what} length {n} exceeds the {self.remaining()} bytes left", at)
        if n > limit:
            if limit != KEEP_STRING_MAX:
                raise GGUFFormatError(f"{what} is {n} bytes long (at most {limit} allowed)", at)
            self.skip(n, what)
            return SkippedString(n)
        self.keep(_KEPT_STRING_BYTES + n, what)
        self.need(n, what)
        raw = self.buf[self.pos : self.pos + n]
        self.pos += n
        return raw.decode("utf-8", errors="replace")

    def skip_strings(self, count: int, what: str) -> None:
        """Walk `count` length-prefixed strings without decoding them.

        The hot loop of the reader (a 128k-token vocabulary plus 280k merges). The fast path
        steps eight strings per turn with no bounds checks: running off the buffer raises,
        the walk falls back to the start of that block of eight, and one string is taken
        the careful way (which refills the buffer or seeks), so every turn makes progress.
        """
        self.walk(count, what, self.offset)
        start = self.offset
        memo = self._seen_key(count)
        if memo is not None and self._skip_seen(memo, what):
            return
        self._walk_strings(count, what)
        if memo is not None:
            SEEN.remember(memo, self._bytes_at(start, self.offset - start))

    def _seen_key(self, count: int) -> tuple[int, bytes] | None:
        """`seen_arrays` Rule 1's key of the array starting here (None: too short, or too near the end)."""
        if count < MIN_COUNT or self.remaining() < PREFIX_BYTES:
            return None
        self.need(PREFIX_BYTES, "string array")
        return seen_key(count, self.buf[self.pos : self.pos + PREFIX_BYTES])

    def _skip_seen(self, memo: tuple[int, bytes], what: str) -> bool:
        """Skip an array whose bytes equal one walked before (`seen_arrays` Rule 1); False: walk it."""
        walked = SEEN.recall(memo)
        if walked is None or len(walked) > self.remaining():
            return False
        self.need(len(walked), what)
        if not self.buf.startswith(walked, self.pos):  # a memcmp in place, no copy
            return False
        self.pos += len(walked)
        return True

    def _bytes_at(self, at: int, n: int) -> bytes:
        """`n` bytes of the file from `at`, read again if the buffer moved past them; the read position is kept."""
        if self.start <= at and at + n <= self.start + len(self.buf):
            return self.buf[at - self.start : at - self.start + n]
        here = self.f.tell()
        try:
            self.f.seek(at)
            return self.f.read(n)
        finally:
            self.f.seek(here)

    def _walk_strings(self, count: int, what: str) -> None:
        unpack = _U64.unpack_from
        done = 0
        while done < count:
            buf, pos = self.buf, self.pos
            block = pos
            try:
                while count - done >= 8:
                    block = pos
                    pos += 8 + unpack(buf, pos)[0]
                    pos += 8 + unpack(buf, pos)[0]
                    pos += 8 + unpack(buf, pos)[0]
                    pos += 8 + unpack(buf, pos)[0]
                    pos += 8 + unpack(buf, pos)[0]
                    pos += 8 + unpack(buf, pos)[0]
                    pos += 8 + unpack(buf, pos)[0]
                    pos += 8 + unpack(buf, pos)[0]
                    done += 8
                while done < count:
                    block = pos
                    pos += 8 + unpack(buf, pos)[0]
                    done += 1
            except (struct.error, OverflowError):
                pos = block
            self._resume_at(pos, f"{what} string {done}")
            if done < count:
                self.skip(self.u64(f"{what} string {done} length"), f"{what} string {done}")
                done += 1

    def _resume_at(self, pos: int, what: str) -> None:
        """Continue at buffer index `pos`, which may lie past the buffered bytes."""
        if pos <= len(self.buf):
            self.pos = pos
            return
        absolute = self.start + pos
        if absolute > self.end:
            raise self.past_end(f"truncated {what}: runs {absolute - self.end} bytes past the end", self.offset)
        self.start, self.buf, self.pos = absolute, b"", 0
        self.f.seek(absolute)


def _value_type(cur: _Cursor, what: str) -> GGUFValueType:
    at = cur.offset
    raw = cur.u32(what)
    vtype = _VALUE_TYPES.get(raw)
    if vtype is None:
        raise GGUFFormatError(f"unknown value type {raw} for {what}", at)
    return vtype


def _read_value(cur: _Cursor, vtype: GGUFValueType, key: str, keep_max: int, depth: int = 0) -> Any:
    if vtype is GGUFValueType.STRING:
        return cur.string(f"value of {key!r}", KEEP_STRING_MAX)
    if vtype is not GGUFValueType.ARRAY:
        return cur.unpack(_SCALAR_STRUCTS[vtype], f"value of {key!r}")
    if depth >= MAX_ARRAY_NESTING:
        raise GGUFFormatError(f"arrays nested deeper than {MAX_ARRAY_NESTING} in {key!r}", cur.offset)
    etype = _value_type(cur, f"array element type of {key!r}")
    item_bytes = _element_min_bytes(etype)
    count_at = cur.offset
    n = cur.count(f"array length of {key!r}", item_bytes)
    if etype is GGUFValueType.ARRAY:
        cur.walk(n * NESTED_ARRAY_COST, f"array {key!r}", count_at)
    if n > keep_max:
        _skip_array(cur, etype, n, key, depth)
        return SkippedArray(etype, n)
    if etype in _SCALAR_STRUCTS:
        cur.keep(_KEPT_STRING_BYTES + n * _KEPT_SCALAR_BYTES, f"array {key!r}")
        st = struct.Struct(f"<{n}{_SCALAR_FORMATS[etype]}")
        cur.need(st.size, f"array {key!r}")
        values = st.unpack_from(cur.buf, cur.pos)
        cur.pos += st.size
        return values
    return tuple(_read_value(cur, etype, key, keep_max, depth + 1) for _ in range(n))


def _element_min_bytes(etype: GGUFValueType) -> int:
    if etype in _SCALAR_STRUCTS:
        return _SCALAR_STRUCTS[etype].size
    return 8 if etype is GGUFValueType.STRING else _MIN_ARRAY_BYTES


def _skip_array(cur: _Cursor, etype: GGUFValueType, n: int, key: str, depth: int) -> None:
    if etype in _SCALAR_STRUCTS:
        cur.skip(n * _SCALAR_STRUCTS[etype].size, f"array {key!r}")
    elif etype is GGUFValueType.STRING:
        cur.skip_strings(n, f"array {key!r}")
    else:
        for _ in range(n):
            _read_value(cur, GGUFValueType.ARRAY, key, 0, depth + 1)


def _read_tensor_info(cur: _Cursor, index: int, alignment: int) -> TensorInfo:
    name = str(cur.string(f"name of tensor #{index}"))
    dims_at = cur.offset
    fields = _fields_in_buffer(cur)
    if fields is not None:
        shape, raw_type, offset = fields
        n_elements = _elements(name, shape, dims_at)
        ggml_type, block, type_size = _checked_type(name, raw_type, shape, dims_at)
    else:  # field by field: reads on, or names the field the file cuts short
        n_dims = cur.u32(f"n_dims of {name!r}")
        if not 1 <= n_dims <= GGML_MAX_DIMS:
            raise GGUFFormatError(f"tensor {name!r} has {n_dims} dims (1..{GGML_MAX_DIMS} allowed)", dims_at)
        shape = tuple(cur.u64(f"dims of {name!r}") for _ in range(n_dims))
        n_elements = _elements(name, shape, dims_at)
        raw_type = cur.u32(f"type of {name!r}")
        ggml_type, block, type_size = _checked_type(name, raw_type, shape, dims_at)
        offset = cur.u64(f"offset of {name!r}")
    offset_at = dims_at + 4 + 8 * len(shape) + 4
    if offset % alignment:
        raise GGUFFormatError(f"tensor {name!r} offset {offset} is not aligned to {alignment}", offset_at)
    nbytes = n_elements // block * type_size
    if offset + nbytes > INT64_MAX:
        raise GGUFFormatError(f"tensor {name!r} extends past 2^63 bytes", offset_at)
    cur.keep(_KEPT_TENSOR_BYTES + len(name), f"tensor {name!r}")
    return TensorInfo(name, shape, ggml_type, offset, nbytes)


def _fields_in_buffer(cur: _Cursor) -> tuple[tuple[int, ...], int, int] | None:
    """(shape, raw type, data offset) of the tensor whose name was just read, in one unpack when the buffer holds
    them and the dims count is one the format allows; None: read them one by one. The hot loop of a large header
    (~290 tensors in an 8B model's): one bounds check and one unpack instead of seven, and no error text made."""
    buf, pos = cur.buf, cur.pos
    if pos + 4 > len(buf):
        return None
    n_dims = _U32.unpack_from(buf, pos)[0]
    if not 1 <= n_dims <= GGML_MAX_DIMS or pos + 16 + 8 * n_dims > len(buf):
        return None
    *shape, raw_type, offset = _TENSOR_FIELDS[n_dims].unpack_from(buf, pos + 4)
    cur.pos = pos + 16 + 8 * n_dims
    return tuple(shape), raw_type, offset


def _elements(name: str, shape: tuple[int, ...], dims_at: int) -> int:
    """The tensor's element count; one past 64 bits is refused."""
    n = prod(shape)
    if n > INT64_MAX:
        raise GGUFFormatError(f"tensor {name!r} dims {list(shape)} overflow 64 bits", dims_at)
    return n


def _checked_type(name: str, raw_type: int, shape: tuple[int, ...], dims_at: int) -> tuple[GGMLQuantizationType, int, int]:
    """(the type, its block, its block's bytes); an unknown type or a row off the block is refused."""
    ggml_type = _GGML_TYPES.get(raw_type)
    if ggml_type is None:
        raise GGUFFormatError(f"tensor {name!r} has unknown ggml type {raw_type}", dims_at + 4 + 8 * len(shape))
    block, type_size = GGML_QUANT_SIZES[ggml_type]
    if shape[0] % block:
        raise GGUFFormatError(
            f"tensor {name!r} row of {shape[0]} is not a multiple of the {ggml_type.name} block {block}", dims_at
        )
    return ggml_type, block, type_size


def _check_layout(entries: list[tuple[int, TensorInfo]]) -> None:
    """Names unique, data regions apart; an error names the directory entry's offset."""
    names: dict[str, int] = {}
    for at, t in entries:
        if t.name in names:
            raise GGUFFormatError(f"duplicate tensor name {t.name!r} (first at byte {names[t.name]})", at)
        names[t.name] = at
    ordered = sorted(entries, key=lambda entry: entry[1].offset)
    for (_, prev), (at, nxt) in pairwise(ordered):
        if prev.offset + prev.nbytes > nxt.offset:
            raise GGUFFormatError(f"tensors {prev.name!r} and {nxt.name!r} overlap", at)


def _read_version(cur: _Cursor) -> int:
    magic = cur.u32("magic")
    if magic != GGUF_MAGIC:
        raise GGUFFormatError("not a GGUF file (bad magic)", 0)
    version = cur.u32("version")
    if version in SUPPORTED_VERSIONS:
        return version
    if struct.unpack("<I", struct.pack(">I", version))[0] in SUPPORTED_VERSIONS:
        raise GGUFFormatError("big-endian GGUF files are not supported", 4)
    if version == 1:
        raise GGUFFormatError("GGUF v1 is not supported (re-convert the model with a current llama.cpp)", 4)
    raise GGUFFormatError(f"unsupported GGUF version {version} (2 and 3 are supported)", 4)


def _parse(cur: _Cursor, path: str, keep_max: int) -> GGUFHeader:
    version = _read_version(cur)
    n_tensors = _bounded_count(cur, "tensor count", _MIN_TENSOR_INFO_BYTES, MAX_TENSORS)
    n_kv = _bounded_count(cur, "metadata count", _MIN_KV_BYTES, MAX_KEYS)
    metadata: dict[str, Any] = {}
    key_offsets: dict[str, int] = {}
    for i in range(n_kv):
        key_at = cur.offset
        key = str(cur.string(f"key #{i}"))
        if key in key_offsets:
            raise GGUFFormatError(f"duplicate metadata key {key!r} (first at byte {key_offsets[key]})", key_at)
        key_offsets[key] = key_at
        vtype = _value_type(cur, f"type of {key!r}")
        metadata[key] = _read_value(cur, vtype, key, keep_max)
    alignment = metadata.get(Keys.General.ALIGNMENT, GGUF_DEFAULT_ALIGNMENT)
    if not isinstance(alignment, int) or isinstance(alignment, bool) or alignment <= 0 or alignment & (alignment - 1):
        raise GGUFFormatError(f"{Keys.General.ALIGNMENT} {alignment!r} is not a power of two",
                              key_offsets.get(Keys.General.ALIGNMENT))
    entries = [(cur.offset, _read_tensor_info(cur, i, alignment)) for i in range(n_tensors)]
    _check_layout(entries)
    tensors = tuple(t for _, t in entries)
    data_offset = -(-cur.offset // alignment) * alignment
    return GGUFHeader(path=path, version=version, metadata=FrozenMap(metadata), tensors=tensors, alignment=alignment,
                      data_offset=data_offset, file_bytes=cur.size, key_offsets=FrozenMap(key_offsets))


def _bounded_count(cur: _Cursor, what: str, min_item_bytes: int, limit: int) -> int:
    at = cur.offset
    n = cur.count(what, min_item_bytes)
    if n > limit:
        raise GGUFFormatError(f"{what} {n} is over the reader's limit of {limit}", at)
    return n


def parse_header(data: bytes, path: str) -> GGUFHeader:
    """A header held in memory (`core.gguf.kept`), read as `read_header` reads a file of those bytes."""
    try:
        return _parse(_Cursor(io.BytesIO(data), len(data)), path, KEEP_ARRAY_MAX)
    except GGUFFormatError as e:
        raise e.in_file(path) from None
    except (struct.error, OverflowError, MemoryError, RecursionError) as e:
        raise GGUFFormatError(f"malformed header ({type(e).__name__}: {e})", None, path) from None


def read_header(path: str, keep_array_max: int = KEEP_ARRAY_MAX) -> GGUFHeader:
    """Read one GGUF file's header. Raises `ModelLoadError` (or its `GGUFFormatError`) only."""
    try:
        with open_regular(str(path)) as f:
            size = f.seek(0, 2)
            f.seek(0)
            return _parse(_Cursor(f, size), str(path), keep_array_max)
    except GGUFFormatError as e:
        raise e.in_file(str(path)) from None
    except (struct.error, OverflowError, MemoryError, RecursionError) as e:
        raise GGUFFormatError(f"malformed header ({type(e).__name__}: {e})", None, str(path)) from None
    except OSError as e:
        raise os_error(str(path), e) from None
