"""A string array walked before is skipped by comparing bytes, and only when they are the very same bytes."""

from __future__ import annotations

import struct

import pytest
from gguf.constants import GGUFValueType as V
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_budget.core.errors import GGUFFormatError
from gguf_budget.core.gguf import header as gguf_header
from gguf_budget.core.gguf.header import read_header
from gguf_budget.core.gguf.seen_arrays import LIMIT_BYTES, MIN_COUNT, SEEN, SeenArrays

COUNT = MIN_COUNT + 904


def _s(text: bytes) -> bytes:
    return struct.pack("<Q", len(text)) + text


def vocabulary(count: int = COUNT) -> bytes:
    return b"".join(_s(b"tok%d" % i) for i in range(count))


def header_bytes(strings: bytes, after: int, count: int = COUNT) -> bytes:
    return (b"GGUF" + struct.pack("<IQQ", 3, 0, 2) + _s(b"tokenizer.ggml.tokens")
            + struct.pack("<IIQ", V.ARRAY, V.STRING, count) + strings
            + _s(b"after") + struct.pack("<II", V.UINT32, after))


@pytest.fixture(autouse=True)
def empty_memo():
    SEEN.clear()
    yield
    SEEN.clear()


@pytest.fixture
def walks(monkeypatch):
    """How many arrays were walked string by string."""
    counted = []
    real = gguf_header._Cursor._walk_strings

    def walk(self, count, what):
        counted.append(count)
        return real(self, count, what)

    monkeypatch.setattr(gguf_header._Cursor, "_walk_strings", walk)
    return counted


def test_a_second_file_with_the_same_vocabulary_reads_it_by_comparison(tmp_path, walks):
    for i, after in enumerate((41, 42)):
        (tmp_path / f"{i}.gguf").write_bytes(header_bytes(vocabulary(), after))
    first, second = (read_header(str(tmp_path / f"{i}.gguf")) for i in range(2))
    assert (first.metadata["after"], second.metadata["after"]) == (41, 42)
    assert walks == [COUNT]
    assert second.metadata["tokenizer.ggml.tokens"] == first.metadata["tokenizer.ggml.tokens"]


def read_fresh(path: str) -> object:
    """What the reader says of `path` with an empty memo: its metadata, or its error."""
    SEEN.clear()
    return outcome(path)


def outcome(path: str) -> object:
    try:
        return dict(read_header(path).metadata)
    except GGUFFormatError as e:
        return f"error: {e}"


@settings(max_examples=40, deadline=None)
@given(at=st.integers(0, 64 * 1024), value=st.integers(0, 255), cut=st.one_of(st.none(), st.integers(100, 70_000)))
def test_an_array_that_differs_anywhere_reads_as_it_would_with_no_memo(tmp_path_factory, at, value, cut):
    """Same count and first 64 bytes, one byte changed or the file cut short: the memo changes no answer."""
    folder = tmp_path_factory.mktemp("seen")
    good = header_bytes(vocabulary(), 7)
    bad = bytearray(good)
    bad[min(at, len(bad) - 1)] = value
    bad = bad[:cut] if cut is not None else bad
    (folder / "good.gguf").write_bytes(good)
    (folder / "bad.gguf").write_bytes(bytes(bad))
    expected = read_fresh(str(folder / "bad.gguf"))
    SEEN.clear()
    read_header(str(folder / "good.gguf"))
    assert outcome(str(folder / "bad.gguf")) == expected


def test_the_memo_holds_a_bounded_number_of_bytes():
    memo = SeenArrays(limit=1000)
    for i in range(10):
        memo.remember((MIN_COUNT, bytes([i]) * 64), bytes(300))
    kept = [i for i in range(10) if memo.recall((MIN_COUNT, bytes([i]) * 64)) is not None]
    assert kept == [7, 8, 9]
    memo.remember((MIN_COUNT, b"x" * 64), bytes(1001))
    assert memo.recall((MIN_COUNT, b"x" * 64)) is None and LIMIT_BYTES >= 32 << 20
