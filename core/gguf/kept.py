"""A header the app keeps (the library index) is kept as GGUF bytes, and read back by the header reader.

Whatever is kept between runs may have been written by a bug, a sync tool or another user, so a
kept model is never trusted as built records: it is re-read with the same reader, the same budgets
and the same relations as a file (`header.parse_header`, then the model's checks), and a kept
header the reader refuses is a file to read again.

Rule 1: `header_bytes(header)` writes the metadata and tensor directory in the header's GGUF version; the reader
        reads them back to the same values: an integer is written as a 64-bit one (signed when
        negative), a float as a double, a kept array with its elements' type. An array or a string
        too long to keep was kept as a count, and is written as that many zero elements or bytes
        (a few KiB once compressed), which the reader again keeps as the same count.
Rule 2: what the bytes cannot say is taken from the file the header came from: its path and size
        (the index's key, checked against the file before a kept header is used), and where its
        data starts — kept beside the bytes and checked: aligned, within the reader's header
        bound, and every tensor's end within 2^63 bytes.
Rule 3: kept bytes are stored compressed, and decompressed to at most the reader's header bound.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

from gguf_budget.core.gguf.constants import GGUF_MAGIC, GGUFValueType

from gguf_budget.core.errors import GGUFFormatError
from gguf_budget.core.gguf.header import (
    MAX_HEADER_BYTES,
    GGUFHeader,
    SkippedArray,
    SkippedString,
    parse_header,
)
from gguf_budget.core.units import INT64_MAX

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_ZERO_ELEMENT = {GGUFValueType.STRING: bytes(8), GGUFValueType.ARRAY: _U32.pack(GGUFValueType.UINT8) + bytes(8)}
"""One element of a skipped array that is not a scalar: an empty string, an empty array of bytes."""
_SCALAR_BYTES = {
    GGUFValueType.UINT8: 1, GGUFValueType.INT8: 1, GGUFValueType.UINT16: 2, GGUFValueType.INT16: 2,
    GGUFValueType.UINT32: 4, GGUFValueType.INT32: 4, GGUFValueType.FLOAT32: 4, GGUFValueType.BOOL: 1,
    GGUFValueType.UINT64: 8, GGUFValueType.INT64: 8, GGUFValueType.FLOAT64: 8,
}


_WIDEST = (GGUFValueType.INT64, GGUFValueType.UINT64, GGUFValueType.BOOL, GGUFValueType.FLOAT64,
           GGUFValueType.STRING, GGUFValueType.ARRAY)
"""An array's element type is its elements' (GGUF arrays hold one type); integers of both signs are signed."""


def _type_of(value: Any) -> GGUFValueType:
    if isinstance(value, bool):
        return GGUFValueType.BOOL
    if isinstance(value, int):
        return GGUFValueType.INT64 if value < 0 else GGUFValueType.UINT64
    if isinstance(value, float):
        return GGUFValueType.FLOAT64
    if isinstance(value, (str, SkippedString)):
        return GGUFValueType.STRING
    return GGUFValueType.ARRAY


def _string(text: str) -> bytes:
    raw = text.encode("utf-8", "surrogatepass")
    return _U64.pack(len(raw)) + raw


def _value(value: Any, vtype: GGUFValueType) -> bytes:
    """Rule 1: one value as the reader reads it back."""
    if vtype is GGUFValueType.STRING:
        if isinstance(value, SkippedString):
            return _U64.pack(value.length) + bytes(value.length)
        return _string(value)
    if vtype is GGUFValueType.BOOL:
        return bytes((1 if value else 0,))
    if vtype is GGUFValueType.INT64:
        return struct.pack("<q", value)
    if vtype is GGUFValueType.UINT64:
        return _U64.pack(value)
    if vtype is GGUFValueType.FLOAT64:
        return struct.pack("<d", value)
    if isinstance(value, SkippedArray):
        filler = _ZERO_ELEMENT.get(value.element_type) or bytes(_SCALAR_BYTES[value.element_type])
        return _U32.pack(value.element_type) + _U64.pack(value.count) + filler * value.count
    etype = min((_type_of(v) for v in value), key=_WIDEST.index, default=GGUFValueType.UINT8)
    return _U32.pack(etype) + _U64.pack(len(value)) + b"".join(_value(v, etype) for v in value)


def header_bytes(header: GGUFHeader) -> bytes:
    """Rule 1: the header's metadata and tensor directory as GGUF bytes."""
    parts = [_U32.pack(GGUF_MAGIC), _U32.pack(header.version), _U64.pack(len(header.tensors)), _U64.pack(len(header.metadata))]
    for key, value in header.metadata.items():
        vtype = _type_of(value)
        parts += [_string(key), _U32.pack(vtype), _value(value, vtype)]
    for t in header.tensors:
        parts += [_string(t.name), _U32.pack(len(t.shape)), *(_U64.pack(d) for d in t.shape),
                  _U32.pack(t.ggml_type), _U64.pack(t.offset)]
    return b"".join(parts)


def keep(header: GGUFHeader) -> tuple[int, bytes]:
    """Rules 1–3: what the index keeps of a header: where its data starts, and its bytes compressed."""
    return header.data_offset, zlib.compress(header_bytes(header), 1)


def read_kept(kept: tuple[int, bytes], path: str, file_bytes: int) -> GGUFHeader:
    """Rules 1–3: the header kept by `keep`, read back as the file `path` of `file_bytes` bytes.

    Raises `GGUFFormatError` (one line) when the kept bytes are not a header the reader accepts."""
    data_offset, packed = kept
    inflate = zlib.decompressobj()
    try:
        data = inflate.decompress(packed, MAX_HEADER_BYTES)
    except zlib.error as e:
        raise GGUFFormatError(f"the kept header does not decompress ({e})", None, path) from None
    if inflate.unconsumed_tail or not inflate.eof:
        raise GGUFFormatError("the kept header is longer than a header may be, or cut short", None, path)
    header = parse_header(data, path)
    if not 0 < data_offset <= MAX_HEADER_BYTES or data_offset % header.alignment or not 0 <= file_bytes <= INT64_MAX:
        raise GGUFFormatError(f"the kept header's data offset {data_offset} is not one a header can have", None, path)
    if any(data_offset + t.offset + t.nbytes > INT64_MAX for t in header.tensors):
        raise GGUFFormatError("a kept tensor extends past 2^63 bytes", None, path)
    return GGUFHeader(path=path, version=header.version, metadata=header.metadata, tensors=header.tensors,
                      alignment=header.alignment, data_offset=data_offset, file_bytes=file_bytes,
                      key_offsets=header.key_offsets)
