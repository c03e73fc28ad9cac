"""The reader's work and memory budgets hold whatever size a file claims.

Each file here is sparse: a few real bytes, then zeros up to a large apparent size. Zeros are
valid GGUF items (an empty string is a zero length; an empty uint8 array is type 0, count 0),
so without budgets the reader would walk every one of them.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from gguf.constants import GGUFValueType as V
from gguf_factory import ArchDesc, write_gguf

from gguf_budget.core.errors import GGUFFormatError
from gguf_budget.core.gguf import header as gguf_header
from gguf_budget.core.gguf.header import (
    KEEP_STRING_MAX, MAX_HEADER_BYTES, MAX_KEPT_BYTES, MAX_WALK, NESTED_ARRAY_COST, read_header,
)


def _s(text: str) -> bytes:
    return struct.pack("<Q", len(text)) + text.encode()


def _sparse(path: Path, prefix: bytes, size: int) -> str:
    with open(path, "wb") as f:
        f.write(prefix)
        f.truncate(size)
    return str(path)


def _one_key(n_kv: int = 1) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, 0, n_kv)


def _array(key: str, etype: int, count: int) -> bytes:
    return _s(key) + struct.pack("<IIQ", V.ARRAY, etype, count)


def test_ten_million_empty_nested_arrays_are_refused_by_the_work_budget(tmp_path):
    count = 10**7
    prefix = _one_key() + _array("k", V.ARRAY, count)
    path = _sparse(tmp_path / "nested.gguf", prefix, len(prefix) + count * 12)
    with pytest.raises(GGUFFormatError, match="work limit") as info:
        read_header(path)
    assert info.value.offset == len(prefix) - 8  # where the array's length is


def test_empty_strings_beyond_the_work_budget_are_refused(tmp_path):
    count = MAX_WALK + 1
    prefix = _one_key() + _array("k", V.STRING, count)
    path = _sparse(tmp_path / "strings.gguf", prefix, len(prefix) + count * 8)
    with pytest.raises(GGUFFormatError, match="work limit"):
        read_header(path)


def test_the_work_budget_admits_what_real_vocabularies_need(tmp_path):
    count = MAX_WALK // 2
    prefix = _one_key(2) + _array("tokens", V.STRING, count)
    tail = _s("after") + struct.pack("<II", V.UINT32, 42)
    path = tmp_path / "vocab.gguf"
    with open(path, "wb") as f:
        f.write(prefix)
        f.truncate(len(prefix) + count * 8)
        f.seek(0, 2)
        f.write(tail)
    assert read_header(str(path)).metadata["after"] == 42


def test_a_header_longer_than_the_limit_is_refused_even_when_the_file_holds_it(tmp_path):
    count = MAX_HEADER_BYTES + 1
    prefix = _one_key() + _array("blob", V.UINT8, count)
    path = _sparse(tmp_path / "long.gguf", prefix, len(prefix) + count)
    with pytest.raises(GGUFFormatError, match="256 MiB header limit"):
        read_header(path)


def test_a_ten_million_string_vocabulary_file_is_refused_at_its_count(tmp_path):
    count = 10**8
    prefix = _one_key() + _array("k", V.STRING, count)
    path = _sparse(tmp_path / "huge.gguf", prefix, len(prefix) + count * 8)
    with pytest.raises(GGUFFormatError, match="cannot fit .* header limit"):
        read_header(path)


def test_kept_values_have_a_memory_budget(tmp_path):
    n_strings = MAX_KEPT_BYTES // KEEP_STRING_MAX + 1
    body = b"".join(_s(f"s{i}") + struct.pack("<IQ", V.STRING, KEEP_STRING_MAX) + bytes(KEEP_STRING_MAX)
                    for i in range(n_strings))
    path = tmp_path / "kept.gguf"
    path.write_bytes(_one_key(n_strings) + body)
    with pytest.raises(GGUFFormatError, match="memory limit"):
        read_header(str(path))


def test_kept_arrays_of_arrays_are_charged_as_work(tmp_path, monkeypatch):
    monkeypatch.setattr(gguf_header, "MAX_WALK", 10 * NESTED_ARRAY_COST)
    inner = struct.pack("<IQ", V.UINT8, 0)
    path = tmp_path / "kept-nested.gguf"
    path.write_bytes(_one_key() + _array("k", V.ARRAY, 11) + inner * 11)
    with pytest.raises(GGUFFormatError, match="work limit"):
        read_header(str(path))


def test_real_shaped_headers_stay_far_inside_every_budget(tmp_path):
    path = write_gguf(tmp_path / "m.gguf", ArchDesc(tokens=20000, merges=20000, n_layer=8), "header_only")[0]
    header = read_header(str(path))
    assert header.metadata["llama.block_count"] == 8
    assert header.key_offsets["general.architecture"] == 24
