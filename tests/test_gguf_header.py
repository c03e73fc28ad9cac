"""The header reader: agrees with gguf.GGUFReader on real files, and turns any bad bytes
into a GGUFFormatError that names the byte offset — never another exception, a hang or a
large allocation."""

from __future__ import annotations

import struct
import tracemalloc
from pathlib import Path

import pytest
from gguf import GGUFReader
from gguf.constants import GGMLQuantizationType as T
from gguf.constants import GGUFValueType as V
from gguf_factory import ArchDesc, MLADesc, SSMDesc, write_gguf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gguf_budget.core.errors import GGUFFormatError, ModelLoadError, TruncatedHeaderError
from gguf_budget.core.gguf.header import SkippedArray, SkippedString, read_header

ARCHS = {
    "llama": ArchDesc(tokens=40, merges=30, n_head_kv=[2, 4]),
    "gemma3": ArchDesc(arch="gemma3", n_layer=3, sliding_window=16, sliding_window_pattern=[True, True, False],
                       qk_norm=True, tied=True),
    "gpt2": ArchDesc(arch="gpt2", position_embd=True, gated_ffn=False, n_head_kv=4, weight_type=T.F16),
    "mixtral": ArchDesc(n_expert=4, n_expert_used=2, weight_type=T.Q4_0),
    "deepseek2": ArchDesc(arch="deepseek2", mla=MLADesc(), n_expert=4, n_expert_used=2, n_expert_shared=1),
    "mamba": ArchDesc(arch="mamba", ssm=SSMDesc(), n_head=0, n_head_kv=0, weight_type=T.F16),
    "extra-types": ArchDesc(extra_kv={"x.f": 1.5, "x.b": True, "x.arr": [1.0, 2.5], "x.s": "ok"}),
}


def _reader_value(field):
    value = field.contents()
    return tuple(value) if isinstance(value, list) else value


@pytest.mark.parametrize("name", sorted(ARCHS))
def test_agrees_with_gguf_reader_on_complete_files(tmp_path, name):
    path = write_gguf(tmp_path / f"{name}.gguf", ARCHS[name], "complete")[0]
    ours = read_header(str(path), keep_array_max=10**6)
    ref = GGUFReader(path)
    expected = {k: _reader_value(f) for k, f in ref.fields.items() if not k.startswith("GGUF.")}
    assert dict(ours.metadata) == expected
    assert ours.version == ref.fields["GGUF.version"].contents()
    assert [(t.name, t.shape, t.ggml_type, t.nbytes, ours.data_offset + t.offset) for t in ours.tensors] == [
        (t.name, tuple(int(x) for x in t.shape), t.tensor_type, int(t.n_bytes), t.data_offset) for t in ref.tensors
    ]
    assert not ours.header_only


def test_long_arrays_are_counted_not_kept(tmp_path):
    path = write_gguf(tmp_path / "m.gguf", ArchDesc(tokens=5000, merges=6000), "header_only")[0]
    h = read_header(str(path))
    assert h.metadata["tokenizer.ggml.tokens"] == SkippedArray(V.STRING, 5000)
    assert h.metadata["tokenizer.ggml.merges"] == SkippedArray(V.STRING, 6000)
    assert h.metadata["llama.block_count"] == 2


def test_huge_strings_are_skipped_not_loaded(tmp_path):
    path = tmp_path / "big.gguf"
    path.write_bytes(_gguf([_kv("chat", V.STRING, _s(b"x" * (3 << 20))), _kv("n", V.UINT8, b"\7")]))
    tracemalloc.start()
    try:
        h = read_header(str(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert dict(h.metadata) == {"chat": SkippedString(3 << 20), "n": 7}
    assert peak < 2 << 20


def test_header_only_and_partial_files_are_readable_and_flagged(tmp_path):
    complete = write_gguf(tmp_path / "c.gguf", ArchDesc(), "complete")[0]
    skeleton = write_gguf(tmp_path / "s.gguf", ArchDesc(), "header_only")[0]
    partial = tmp_path / "p.gguf"
    partial.write_bytes(complete.read_bytes()[:-100])
    assert not read_header(str(complete)).header_only
    assert read_header(str(skeleton)).header_only
    assert read_header(str(partial)).header_only
    assert read_header(str(skeleton)).tensors == read_header(str(complete)).tensors


# --- hand-built bytes for hostile input ---------------------------------------------------

def _s(text: str | bytes) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(raw)) + raw


def _kv(key: str, vtype: int, payload: bytes) -> bytes:
    return _s(key) + struct.pack("<I", vtype) + payload


def _tensor(name: str, dims: list[int], ggml_type: int = 0, offset: int = 0) -> bytes:
    return _s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims) + struct.pack(
        "<IQ", ggml_type, offset
    )


def _gguf(kvs=(), tensors=(), n_tensors=None, n_kv=None, version=3, magic=b"GGUF") -> bytes:
    n_t = len(tensors) if n_tensors is None else n_tensors
    n_k = len(kvs) if n_kv is None else n_kv
    return magic + struct.pack("<IQQ", version, n_t, n_k) + b"".join(kvs) + b"".join(tensors)


HOSTILE = {
    "bad magic": (_gguf(magic=b"GGML"), "not a GGUF file", 0),
    "version 1": (_gguf(version=1), "v1 is not supported", 4),
    "big-endian": (_gguf(version=3 << 24), "big-endian", 4),
    "version 99": (_gguf(version=99), "unsupported GGUF version 99", 4),
    "2^62 tensors": (_gguf(n_tensors=2**62), "tensor count", 8),
    "2^62 kv pairs": (_gguf(n_kv=2**62), "metadata count", 16),
    "2^63-byte key": (_gguf([struct.pack("<Q", 2**63) + bytes(16)], n_kv=1), "key #0 length", 24),
    "2^63-byte string": (_gguf([_s("k") + struct.pack("<IQ", V.STRING, 2**63)]), "length", 37),
    "2^62 uint64 array": (_gguf([_kv("k", V.ARRAY, struct.pack("<IQ", V.UINT64, 2**62))]), "array length", 41),
    "2^62 string array": (_gguf([_kv("k", V.ARRAY, struct.pack("<IQ", V.STRING, 2**62))]), "array length", 41),
    "unknown value type": (_gguf([_kv("k", 77, b"")]), "unknown value type 77", 33),
    "unknown array type": (_gguf([_kv("k", V.ARRAY, struct.pack("<IQ", 99, 1))]), "unknown value type 99", 37),
    "nested 100 deep": (_gguf([_kv("k", V.ARRAY, struct.pack("<IQ", V.ARRAY, 1) * 100)]), "nested deeper", None),
    "truncated string": (_gguf([_s("k") + struct.pack("<IQ", V.STRING, 10) + b"abc"]), "exceeds", 37),
    "alignment 0": (_gguf([_kv("general.alignment", V.UINT32, struct.pack("<I", 0))]), "power of two", 24),
    "alignment 3": (_gguf([_kv("general.alignment", V.UINT32, struct.pack("<I", 3))]), "power of two", 24),
    "alignment text": (_gguf([_kv("general.alignment", V.STRING, _s("32"))]), "power of two", 24),
    "5 dims": (_gguf(tensors=[_tensor("t", [1, 1, 1, 1, 1])]), "5 dims", None),
    "0 dims": (_gguf(tensors=[_tensor("t", [])]), "0 dims", None),
    "dims overflow": (_gguf(tensors=[_tensor("t", [2**32, 2**32])]), "overflow 64 bits", None),
    "unknown ggml type": (_gguf(tensors=[_tensor("t", [32], ggml_type=1234)]), "unknown ggml type 1234", None),
    "row not a block multiple": (_gguf(tensors=[_tensor("t", [33], ggml_type=T.Q8_0)]), "not a multiple", None),
    "misaligned offset": (_gguf(tensors=[_tensor("t", [8], offset=5)]), "not aligned", None),
    "overlapping tensors": (_gguf(tensors=[_tensor("a", [64]), _tensor("b", [64], offset=32)]), "overlap", 57),
    "duplicate names": (_gguf(tensors=[_tensor("a", [8]), _tensor("a", [8], offset=32)]),
                        "duplicate tensor name 'a' (first at byte 24)", 57),
    "empty file": (b"", "truncated magic", 0),
    "2000-byte key": (_gguf([_kv("k" * 2000, V.UINT8, b"\0")]), "key #0 is 2000 bytes long", 24),
    "2000-byte tensor name": (_gguf(tensors=[_tensor("t" * 2000, [8])]), "is 2000 bytes long", 24),
    "duplicate key": (_gguf([_kv("n", V.UINT8, b"\1"), _kv("n", V.UINT8, b"\2")]),
                      "duplicate metadata key 'n' (first at byte 24)", 38),
    "2^16+1 tensors": (_gguf(n_tensors=2**16 + 1) + bytes(40 << 16), "over the reader's limit of 65536", 8),
    "2^16+1 kv pairs": (_gguf(n_kv=2**16 + 1) + bytes(13 << 17), "over the reader's limit of 65536", 16),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_headers_give_one_clear_error(tmp_path, case):
    data, fragment, offset = HOSTILE[case]
    path = tmp_path / "bad.gguf"
    path.write_bytes(data)
    with pytest.raises(GGUFFormatError) as info:
        read_header(str(path))
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message and str(path) in message
    if offset is not None:
        assert info.value.offset == offset and f"at byte {offset}" in message


def test_missing_and_unreadable_files_are_load_errors(tmp_path):
    with pytest.raises(ModelLoadError, match="no such file"):
        read_header(str(tmp_path / "nope.gguf"))
    with pytest.raises(ModelLoadError, match="cannot read .*: it is a folder"):
        read_header(str(tmp_path))


@pytest.fixture(scope="module")
def small_valid_file(tmp_path_factory) -> bytes:
    path = write_gguf(tmp_path_factory.mktemp("v") / "v.gguf", ArchDesc(n_layer=1, tokens=6), "header_only")[0]
    return path.read_bytes()


def _read_or_format_error(path: Path) -> object:
    try:
        return read_header(str(path))
    except GGUFFormatError as e:
        assert "\n" not in str(e)
        return e


def test_truncation_at_every_offset_gives_format_errors_until_the_directory_is_whole(tmp_path, small_valid_file):
    path = tmp_path / "cut.gguf"
    full = read_header(str(write_bytes(path, small_valid_file)))
    results = [_read_or_format_error(write_bytes(path, small_valid_file[:cut])) for cut in range(len(small_valid_file))]
    first_whole = next(i for i, r in enumerate(results) if not isinstance(r, GGUFFormatError))
    assert first_whole <= full.data_offset
    # Every cut inside the header says "more bytes would help": a remote reader fetches more on exactly this.
    assert all(isinstance(r, TruncatedHeaderError) for r in results[:first_whole])
    assert all(r.header_only and r.tensors == full.tensors for r in results[first_whole:])


def write_bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=8))
def test_random_byte_flips_give_a_header_or_a_format_error(tmp_path, small_valid_file, flips):
    data = bytearray(small_valid_file)
    for pos, value in flips:
        data[pos % len(data)] = value
    path = tmp_path / "flip.gguf"
    path.write_bytes(bytes(data))
    tracemalloc.start()
    try:
        _read_or_format_error(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20


def _string_array_file(lengths: list[int]) -> bytes:
    payload = struct.pack("<IQ", V.STRING, len(lengths)) + b"".join(_s(b"s" * n) for n in lengths)
    return _gguf([_kv("tokens", V.ARRAY, payload), _kv("after", V.UINT32, struct.pack("<I", 42))])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lengths=st.lists(st.integers(0, 300), min_size=1, max_size=120), chunk=st.integers(1, 512),
       cut=st.one_of(st.none(), st.integers(0, 10**6)))
def test_skipped_string_arrays_survive_every_buffer_boundary(tmp_path, monkeypatch, lengths, chunk, cut):
    from gguf_budget.core.gguf import header as gguf_header

    monkeypatch.setattr(gguf_header._Cursor, "CHUNK", chunk)
    data = _string_array_file(lengths)
    path = tmp_path / "arr.gguf"
    if cut is None or cut % len(data) == 0:
        path.write_bytes(data)
        h = read_header(str(path), keep_array_max=0)
        assert dict(h.metadata) == {"tokens": SkippedArray(V.STRING, len(lengths)), "after": 42}
    else:
        path.write_bytes(data[: cut % len(data)])
        with pytest.raises(GGUFFormatError):
            read_header(str(path), keep_array_max=0)


def test_a_huge_string_inside_a_skipped_array_is_seeked_over(tmp_path):
    path = tmp_path / "huge.gguf"
    path.write_bytes(_string_array_file([3] * 20 + [3 << 20] + [5] * 20))
    h = read_header(str(path), keep_array_max=0)
    assert dict(h.metadata) == {"tokens": SkippedArray(V.STRING, 41), "after": 42}


def _outcome(path: Path) -> object:
    """What reading the header gives: its tensors, or the error's words and offset."""
    result = _read_or_format_error(path)
    return (str(result), result.offset) if isinstance(result, GGUFFormatError) else result.tensors


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunk=st.integers(1, 96), flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=3))
def test_a_tensor_entry_reads_alike_whole_in_the_buffer_and_across_its_boundary(tmp_path, monkeypatch,
                                                                                small_valid_file, chunk, flips):
    """A tensor's dims, type and offset are unpacked at once when the buffer holds them, and field by field when a
    buffer boundary cuts them: the same tensors, or the same error at the same offset, either way."""
    from gguf_budget.core.gguf import header as gguf_header

    data = bytearray(small_valid_file)
    for pos, value in flips:
        data[pos % len(data)] = value
    path = write_bytes(tmp_path / "flip.gguf", bytes(data))
    whole = _outcome(path)
    monkeypatch.setattr(gguf_header._Cursor, "CHUNK", chunk)
    assert _outcome(path) == whole
