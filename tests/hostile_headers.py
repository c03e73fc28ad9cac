"""Structurally valid GGUF headers with hostile *values*, for hypothesis.

A real file is written by `gguf_factory` (header only), then the keys a strategy picked are
re-encoded by hand — any GGUF type for any key, negative and huge numbers, arrays of the wrong
element type or length, nested arrays, control characters, bytes that are not UTF-8, and
duplicates of keys the file already has. The bytes stay well-formed GGUF: only what they say
is hostile, so everything past the reader's checks — facts, planner, fit, views, the window —
meets the values.
"""

from __future__ import annotations

import math
import struct
from dataclasses import replace
from pathlib import Path
from typing import Any

from gguf.constants import GGUFValueType as V
from gguf_factory import ArchDesc, write_gguf
from hypothesis import strategies as st

Value = tuple[V, Any]
"""A typed GGUF value: scalars as Python values, STRING as bytes, ARRAY as (element type, [values])."""

_SCALARS = {V.UINT8: "B", V.INT8: "b", V.UINT16: "H", V.INT16: "h", V.UINT32: "I", V.INT32: "i",
            V.UINT64: "Q", V.INT64: "q", V.FLOAT32: "f", V.FLOAT64: "d", V.BOOL: "?"}
_INT_RANGES = {V.UINT8: (0, 2**8 - 1), V.INT8: (-2**7, 2**7 - 1), V.UINT16: (0, 2**16 - 1),
               V.INT16: (-2**15, 2**15 - 1), V.UINT32: (0, 2**32 - 1), V.INT32: (-2**31, 2**31 - 1),
               V.UINT64: (0, 2**64 - 1), V.INT64: (-2**63, 2**63 - 1)}

FACT_KEYS = (
    "general.architecture", "general.name", "general.file_type", "general.alignment",
    "{arch}.block_count", "{arch}.context_length", "{arch}.embedding_length", "{arch}.feed_forward_length",
    "{arch}.attention.head_count", "{arch}.attention.head_count_kv", "{arch}.attention.key_length",
    "{arch}.attention.value_length", "{arch}.attention.sliding_window", "{arch}.attention.sliding_window_pattern",
    "{arch}.attention.kv_lora_rank", "{arch}.rope.dimension_count", "{arch}.expert_count",
    "{arch}.expert_used_count", "{arch}.vocab_size", "{arch}.full_attention_interval", "{arch}.ssm.conv_kernel",
    "{arch}.ssm.inner_size", "{arch}.ssm.state_size", "{arch}.ssm.group_count", "{arch}.wkv.head_size",
    "{arch}.shortconv.l_cache", "tokenizer.ggml.tokens", "split.count", "split.no",
)
"""The keys the facts read (and a few more the reader and shards read)."""

BASE = ArchDesc(n_layer=3, n_embd=64, n_ff=128, n_head=4, n_head_kv=2, n_vocab=256, context_length=4096)
MOE_BASE = replace(BASE, name="tiny-moe", n_expert=4, n_expert_used=2, expert_ff=64)
"""The same shape with routed experts: counts such as `expert_used_count` size work only in a MoE."""

INTERESTING_INTS = (0, 1, 2, 3, 4, 7, 128, 4095, 4096, 65535, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**53 + 1,
                    2**63 - 1, 2**64 - 1, -1, -2**31, -2**63)
HOSTILE_TEXT = ("", "llama", "x\x1b[2J\x1b]8;;http://e\x1b\\y\n", "\u202eevil\u2066", "<img src=x>", "a" * 300)


def encode(value: Value) -> bytes:
    vtype, payload = value
    if vtype is V.STRING:
        return struct.pack("<Q", len(payload)) + payload
    if vtype is V.ARRAY:
        etype, items = payload
        return struct.pack("<IQ", etype, len(items)) + b"".join(encode((etype, item)) for item in items)
    return struct.pack("<" + _SCALARS[vtype], payload)


def encode_kv(key: bytes, value: Value) -> bytes:
    return struct.pack("<Q", len(key)) + key + struct.pack("<I", value[0]) + encode(value)


@st.composite
def scalar(draw: st.DrawFn, vtype: V | None = None) -> Value:
    vtype = draw(st.sampled_from(list(_SCALARS))) if vtype is None else vtype
    if vtype is V.BOOL:
        return vtype, draw(st.booleans())
    if vtype in (V.FLOAT32, V.FLOAT64):
        pool = [0.0, -0.0, 1.5, -2.0, 4096.0, math.inf, -math.inf, math.nan, 1e38]
        return vtype, draw(st.sampled_from(pool + ([1e300] if vtype is V.FLOAT64 else [])))
    low, high = _INT_RANGES[vtype]
    pool = [n for n in INTERESTING_INTS if low <= n <= high]
    return vtype, draw(st.one_of(st.sampled_from(pool), st.integers(low, high)))


@st.composite
def string(draw: st.DrawFn) -> Value:
    kind = draw(st.sampled_from(["hostile", "text", "not utf-8", "huge"]))
    if kind == "hostile":
        raw = draw(st.sampled_from(HOSTILE_TEXT)).encode()
    elif kind == "text":
        raw = draw(st.text(max_size=40)).encode("utf-8", "surrogatepass")
    elif kind == "not utf-8":
        raw = b"m\xff\xfe\xc0" + draw(st.binary(max_size=20))
    else:
        raw = b"x" * ((1 << 20) + 1)  # over the reader's keep limit
    return V.STRING, raw


@st.composite
def array(draw: st.DrawFn, depth: int = 0) -> Value:
    etype = draw(st.sampled_from([V.UINT32, V.INT32, V.UINT64, V.INT64, V.FLOAT32, V.BOOL, V.STRING, V.UINT8]
                                 + ([V.ARRAY] if depth < 2 else [])))
    length = draw(st.sampled_from([0, 1, 2, 3, 4, 5, 4097]))
    if etype is V.ARRAY:
        inner = draw(array(depth + 1))[1]
        return V.ARRAY, (V.ARRAY, [inner] * min(length, 3))
    if length == 4097:  # over the reader's keep limit: walked, kept as a count
        return V.ARRAY, (etype, [draw(element(etype))] * length)
    return V.ARRAY, (etype, [draw(element(etype)) for _ in range(length)])


@st.composite
def element(draw: st.DrawFn, etype: V) -> Any:
    if etype is V.STRING:
        return draw(st.sampled_from([b"", b"t", "\u202e".encode(), b"\xff"]))
    return draw(scalar(etype))[1]


PER_LAYER_KEYS = ("{arch}.feed_forward_length", "{arch}.attention.head_count", "{arch}.attention.head_count_kv")


@st.composite
def count(draw: st.DrawFn, per_layer: bool) -> Value:
    """Well typed, hostile in size: what gets past the type checks to the planner and the window."""
    vtype = draw(st.sampled_from([V.UINT32, V.UINT64]))
    values = st.sampled_from([n for n in INTERESTING_INTS if 0 <= n <= _INT_RANGES[vtype][1]])
    if per_layer and draw(st.booleans()):
        return V.ARRAY, (vtype, draw(st.lists(values, min_size=BASE.n_layer, max_size=BASE.n_layer)))
    return vtype, draw(values)


def hostile_value(key: str) -> st.SearchStrategy[Value]:
    well_typed = count(key in PER_LAYER_KEYS)
    return st.one_of(well_typed, well_typed, well_typed, scalar(), string(), array())


@st.composite
def hostile_overrides(draw: st.DrawFn) -> dict[str, Value]:
    keys = draw(st.lists(st.sampled_from(FACT_KEYS), min_size=1, max_size=3, unique=True))
    return {key: draw(hostile_value(key)) for key in keys}


def duplicates() -> st.SearchStrategy[str | None]:
    """Mostly none: a duplicate key is refused at once, and the rest should reach the planner."""
    return st.one_of(st.none(), st.none(), st.none(), st.sampled_from(FACT_KEYS))


def write_hostile(folder: Path, name: str, overrides: dict[str, Value], duplicate: str | None = None,
                  base: ArchDesc = BASE) -> Path:
    """The base model with `overrides` re-encoded as drawn, and `duplicate` (a key) written twice."""
    arch = base.arch
    desc = replace(base, omit=tuple(overrides))
    path = write_gguf(folder / name, desc, "header_only")[0]
    extra = [encode_kv(key.format(arch=arch).encode(), value) for key, value in overrides.items()]
    if duplicate is not None:
        extra.append(encode_kv(duplicate.format(arch=arch).encode(), (V.UINT32, 1)))
    data = path.read_bytes()
    n_kv = struct.unpack_from("<Q", data, 16)[0] + len(extra)
    path.write_bytes(data[:16] + struct.pack("<Q", n_kv) + b"".join(extra) + data[24:])
    return path
