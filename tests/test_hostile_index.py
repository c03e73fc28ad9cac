"""The library index is data anyone may have written (issue #37): any bytes in it give the right
answer or the answer of no index, in bounded memory; a kept model is read back like a header.
Header reads are counted, memory measured by tracemalloc, nothing timed."""

from __future__ import annotations

import io
import json
import math
import pickletools
import subprocess
import sys
import textwrap
import tracemalloc
from dataclasses import replace
from pathlib import Path

import pytest
from gguf.constants import GGUFValueType as V
from gguf_factory import write_gguf
from hostile_headers import BASE, MOE_BASE, duplicates, hostile_overrides, write_hostile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gguf_budget.core.errors import ModelLoadError
from gguf_budget.core.gguf.header import read_header
from gguf_budget.core.gguf.kept import keep, read_kept
from gguf_budget.core.library.assess import Assessment
from gguf_budget.core.library.index import IndexedFile, kept_headers, load_index, save_index
from gguf_budget.core.library.scan import scan
from gguf_budget.core.library.stores import StoreKind, StoreRoot
from gguf_budget.core.gguf.shards import read_shards
from gguf_budget.core.model.loader import load_model, model_of

MiB = 1 << 20


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    top = tmp_path / "models"
    top.mkdir()
    write_gguf(top / "a.gguf", BASE, "header_only")
    write_gguf(top / "moe.gguf", MOE_BASE, "header_only")
    write_gguf(top / "split.gguf", BASE, "header_only", split_max_tensors=12)
    (top / "junk.gguf").write_bytes(b"not a GGUF file" * 20)
    return top



def judge(spec) -> Assessment:
    return Assessment(n_layer=spec.n_layer, fit_verdict="fits", gpu_layers=spec.n_layer, fit_ctx=spec.context_length,
                      max_ctx=spec.context_length, plan_outcome=spec.architecture, plan_ctx=spec.expert_used_count,
                      pinned=spec.n_params, error=None)


def entries(folder: Path, index: Path, key: str = "k") -> list[tuple]:
    result = scan([StoreRoot(StoreKind.USER, folder)], judge, assess_key=key, index=index, workers=1)
    return [(e.name, e.shards, e.size_bytes, e.error, e.architecture, e.file_type, e.n_params, e.assessment)
            for e in result.entries]


def test_a_kept_header_reads_back_as_the_file_does(folder):
    for name in ("a.gguf", "moe.gguf", "split-00002-of-00003.gguf"):
        header = read_header(str(folder / name))
        back = read_kept(keep(header), header.path, header.file_bytes)
        assert (back.metadata, back.tensors, back.data_offset, back.file_bytes, back.version) == (
            header.metadata, header.tensors, header.data_offset, header.file_bytes, header.version)
    index = folder.parent / "index.pickle"
    entries(folder, index)
    kept = load_index(index)
    for path in (folder / "a.gguf", folder / "split-00001-of-00003.gguf"):
        assert kept[str(path)].spec() == load_model(path)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(overrides=hostile_overrides(), duplicate=duplicates(), moe=st.booleans())
def test_any_header_kept_reads_back_to_the_same_model_or_the_same_refusal(tmp_path, overrides, duplicate, moe):
    path = write_hostile(tmp_path, "h.gguf", overrides, duplicate, MOE_BASE if moe else BASE)
    try:
        headers = read_shards(path)
    except ModelLoadError:
        return
    kept = [read_kept(keep(h), h.path, h.file_bytes) for h in headers]
    outcomes = []
    for which in (headers, kept):
        try:
            outcomes.append(model_of(which, path))
        except ModelLoadError as e:
            outcomes.append(type(e))
    assert outcomes[0] == outcomes[1]


NESTED = textwrap.dedent('''
    import json, sys
    from gguf_budget.core.library.scan import scan
    from gguf_budget.core.library.stores import StoreKind, StoreRoot
    result = scan([StoreRoot(StoreKind.USER, __import__("pathlib").Path(sys.argv[1]))], lambda s: s.n_layer,
                  index=__import__("pathlib").Path(sys.argv[2]), workers=1)
    print(json.dumps([[e.name, e.error, e.assessment] for e in result.entries]))
''')


def test_an_index_nested_a_million_deep_is_ignored_and_replaced(folder, tmp_path):
    """A 1 MB index holding a tuple nested 10^6 deep as a dict key segfaulted every scan (its hash
    overflowed the C stack) and so was never replaced."""
    index = tmp_path / "index.pickle"
    index.write_bytes(b"\x80\x04}N" + b"\x85" * 1_000_000 + b"Ns.")
    run = [sys.executable, "-c", NESTED, str(folder), str(index)]
    first = subprocess.run(run, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr[-2000:]
    assert index.stat().st_size < 100_000 and len(load_index(index)) == 4
    fresh = tmp_path / "fresh.pickle"
    assert json.loads(first.stdout) == json.loads(
        subprocess.run([*run[:-1], str(fresh)], capture_output=True, text=True, timeout=300, check=True).stdout)


BOMBS = {
    "bytearray(4e8)": b"\x80\x04\x8c\x08builtins\x8c\tbytearray\x93J\x00\x84\xd7\x17\x85R.",
    "frozenset(range(3e6))": b"\x80\x04\x8c\x08builtins\x8c\tfrozenset\x93\x8c\x08builtins\x8c\x05range\x93"
                             b"J\xc0\xc6-\x00\x85R\x85R.",
    "a tree of 2^40 references as a key": b"\x80\x04}" + b"N" + b"".join(b"\x94h" + bytes([k]) + b"\x86" for k in range(40))
                                          + b"Ns.",
    "a memo slot at 2^32 - 1": b"\x80\x04Nr\xff\xff\xff\xff.",
}


@pytest.mark.parametrize("bomb", BOMBS)
def test_no_callable_or_reference_in_the_index_costs_more_than_its_bytes(tmp_path, bomb, caplog):
    """bytearray and frozenset(range) were allowed callables: 30 bytes asked for 400 MB."""
    index = tmp_path / "index.pickle"
    index.write_bytes(BOMBS[bomb])
    tracemalloc.start()
    try:
        assert load_index(index) == {}
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * MiB
    assert [r.levelname for r in caplog.records] == ["WARNING"]


def test_a_damaged_index_is_one_log_line_and_is_replaced(folder, tmp_path, caplog):
    index = tmp_path / "index.pickle"
    index.write_bytes(b"\x80\x04\x95garbage")
    entries(folder, index)
    logged = [r for r in caplog.records if r.name.startswith("gguf_budget.core.library")]
    assert len(logged) == 1 and logged[0].exc_info is None and "\n" not in logged[0].getMessage()
    assert len(load_index(index)) == 4


def _rewrite(index: Path, change) -> None:
    kept = load_index(index)
    save_index(index, {path: change(Path(path).name, entry) for path, entry in kept.items()})


def test_a_kept_header_is_checked_like_a_header(folder, tmp_path, reads):
    """A kept model whose expert_used_count says 2^31 - 1 (last round's memory bomb, in the index instead
    of the file) is refused as the file would be, and the file is read again."""
    index = tmp_path / "index.pickle"
    right = entries(folder, index, key="first")
    bomb = write_hostile(tmp_path, "bomb.gguf", {"{arch}.expert_used_count": (V.UINT32, 2**31 - 1)}, base=MOE_BASE)
    with pytest.raises(ModelLoadError, match="expert_used_count"):
        load_model(bomb)
    hostile = kept_headers(read_shards(bomb))
    _rewrite(index, lambda name, entry: replace(entry, headers=hostile) if name == "moe.gguf" else entry)
    reads.clear()
    assert entries(folder, index, key="second") == right
    assert reads == ["moe.gguf"]


WRONG = {
    "size_bytes": float("nan"),
    "n_params": "many",
    "shards": 0,
    "architecture": 7,
    "key": (("a.gguf", 1.5, 0, 0, 0),),
    "headers": ((0, b"x"), (0, b"y")),
    "assessment": Assessment(n_layer=math.nan, fit_verdict=None, gpu_layers=None, fit_ctx=None, max_ctx=None,
                             plan_outcome=None, plan_ctx=None, pinned=None, error=None),
}


@pytest.mark.parametrize("field", WRONG)
def test_a_wrong_typed_entry_is_absent(folder, tmp_path, reads, field):
    """A NaN size or verdict went to --json as NaN; a string where a count belongs was a traceback."""
    index = tmp_path / "index.pickle"
    right = entries(folder, index)
    _rewrite(index, lambda name, entry: replace(entry, **{field: WRONG[field]}) if name == "a.gguf" else entry)
    reads.clear()
    assert entries(folder, index) == right
    assert reads == ["a.gguf"]


def _mutated(data: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    for at, cut, insert in edits:
        at %= len(data) + 1
        data = data[:at] + insert + data[at + cut:]
    return data


@pytest.fixture(scope="module")
def real_index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes, list[tuple]]:
    top = tmp_path_factory.mktemp("models")
    write_gguf(top / "a.gguf", BASE, "header_only")
    write_gguf(top / "moe.gguf", MOE_BASE, "header_only")
    (top / "junk.gguf").write_bytes(b"not a GGUF file" * 20)
    index = top.parent / "real-index.pickle"
    right = entries(top, index)
    return top, index.read_bytes(), right


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.one_of(
    st.binary(max_size=400),
    st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 8), st.binary(max_size=8)), min_size=1, max_size=6)))
def test_any_bytes_in_the_index_give_the_right_answer_or_that_of_no_index(real_index, tmp_path, data):
    top, good, right = real_index
    index = tmp_path / "index.pickle"
    index.write_bytes(data if isinstance(data, bytes) else _mutated(good, data))
    tracemalloc.start()
    try:
        got = entries(top, index)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got == right
    assert peak < 16 * MiB + 8 * len(good)



def test_a_large_index_is_written_and_read_in_chunks(tmp_path):
    """One pickle of 50,000 entries held the interpreter lock for 1.6 s in one C call, beside the window's thread."""
    from gguf_budget.core.library import index as index_module

    entries = {f"/m/{i}.gguf": IndexedFile(key=((f"/m/{i}.gguf", i, i, i, 1),), shards=1, size_bytes=i, error="x")
               for i in range(2 * index_module.CHUNK + 1)}
    path = tmp_path / "index.pickle"
    save_index(path, entries)
    stream, pickles = io.BytesIO(path.read_bytes()), 0
    while stream.tell() < len(stream.getbuffer()):
        for _ in pickletools.genops(stream):  # to the next STOP
            pass
        pickles += 1
    assert pickles == 4  # the stamp, then three chunks
    assert load_index(path) == entries
