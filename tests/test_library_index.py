"""The library's persistent index: an unchanged rescan reads no header, a changed file is read again,
a damaged index is ignored. Header reads are counted, never timed (`benchmarks/bench_library.py` times them).
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest
from gguf_factory import ArchDesc, write_gguf

from gguf_budget.core.library import index as index_module
from gguf_budget.core.library.index import index_file, load_index
from gguf_budget.core.library.scan import scan
from gguf_budget.core.library.stores import StoreKind, StoreRoot

TINY = ArchDesc(name="tiny-llama", n_layer=2, n_embd=64, n_ff=128, n_head=2, n_head_kv=1, n_vocab=256,
                context_length=2048)
OTHER = ArchDesc(name="other-llama", n_layer=3, n_embd=64, n_ff=128, n_head=2, n_head_kv=1, n_vocab=256,
                 context_length=4096)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Four readable models (one split in three), a file that is not GGUF, a broken link."""
    top = tmp_path / "models"
    top.mkdir()
    for name, desc in (("a.gguf", TINY), ("b.gguf", OTHER), ("c.gguf", TINY)):
        write_gguf(top / name, desc, "header_only")
    write_gguf(top / "split.gguf", OTHER, "header_only", split_max_tensors=10)
    (top / "junk.gguf").write_bytes(b"not a GGUF file" * 20)
    os.symlink(top / "gone.bin", top / "broken.gguf")
    return top



def scanned(folder: Path, assess=lambda spec: spec.n_layer, **kw):
    result = scan([StoreRoot(StoreKind.USER, folder)], assess, workers=1, **kw)
    assert result.complete
    return result


def view(result) -> list[tuple]:
    return [(e.name, e.shards, e.size_bytes, e.error, e.architecture, e.file_type, e.n_params, e.assessment)
            for e in result.entries]


def test_an_unchanged_rescan_reads_no_header_and_gives_the_same_entries(folder, reads):
    first = scanned(folder, assess_key="layers")
    assert sorted(reads) == ["a.gguf", "b.gguf", "c.gguf", "junk.gguf", "split-00001-of-00003.gguf",
                             "split-00002-of-00003.gguf", "split-00003-of-00003.gguf"]
    reads.clear()
    again = scanned(folder, assess_key="layers")
    assert reads == []
    assert view(again) == view(first)
    assert {e.name: e.assessment for e in again.entries if e.error is None} == {
        "a.gguf": 2, "b.gguf": 3, "c.gguf": 2, "split-00001-of-00003.gguf": 3}


def test_a_changed_file_alone_is_read_again(folder, reads):
    scanned(folder)
    write_gguf(folder / "b.gguf", TINY, "header_only")
    reads.clear()
    result = scanned(folder)
    assert reads == ["b.gguf"]
    assert {e.name: e.assessment for e in result.entries}["b.gguf"] == 2


def test_a_file_replaced_by_one_of_the_same_size_and_time_is_read_again(folder, reads):
    """The inode is part of the key: a download renamed into place over an old one is new."""
    scanned(folder)
    old = os.stat(folder / "a.gguf")
    data = (folder / "a.gguf").read_bytes()
    replacement = folder.parent / "a.tmp"
    replacement.write_bytes(data)
    os.utime(replacement, ns=(old.st_atime_ns, old.st_mtime_ns))
    os.replace(replacement, folder / "a.gguf")
    assert os.stat(folder / "a.gguf").st_size == old.st_size
    reads.clear()
    scanned(folder)
    assert reads == ["a.gguf"]


def test_a_changed_shard_reads_the_split_model_again(folder, reads):
    scanned(folder)
    shard = folder / "split-00002-of-00003.gguf"
    os.utime(shard, ns=(0, os.stat(shard).st_mtime_ns + 1_000_000_000))
    reads.clear()
    scanned(folder)
    assert sorted(reads) == ["split-00001-of-00003.gguf", "split-00002-of-00003.gguf", "split-00003-of-00003.gguf"]


def test_the_same_settings_reuse_the_kept_verdict_and_other_settings_judge_the_kept_spec(folder, reads):
    judged: list[str] = []

    def assess(spec):
        judged.append(Path(spec.path).name)
        return spec.n_layer

    scanned(folder, assess, assess_key="machine 1")
    assert len(judged) == 4
    judged.clear()
    reads.clear()
    scanned(folder, assess, assess_key="machine 1")
    assert judged == [] and reads == []
    result = scanned(folder, assess, assess_key="machine 2")
    assert sorted(judged) == ["a.gguf", "b.gguf", "c.gguf", "split-00001-of-00003.gguf"] and reads == []
    assert {e.name: e.assessment for e in result.entries if e.error is None}["b.gguf"] == 3


def _foreign_call(path: Path) -> bytes:
    class Sneaky:
        def __reduce__(self):
            return (Path.touch, (path,))

    return pickle.dumps(((index_module.INDEX_FORMAT, "x"), {"a": Sneaky()}))


@pytest.mark.parametrize("damage", ["garbage", "truncated", "foreign call", "other version", "folder"])
def test_a_damaged_or_foreign_index_is_ignored_and_replaced(folder, reads, tmp_path, damage):
    first = scanned(folder)
    path = index_file()
    pwned = tmp_path / "pwned"
    if damage == "garbage":
        path.write_bytes(b"\x80\x05 certainly not an index")
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:-200])
    elif damage == "foreign call":
        path.write_bytes(_foreign_call(pwned))
    elif damage == "other version":
        stamp = pickle.dumps(index_module._stamp(), protocol=pickle.HIGHEST_PROTOCOL)  # then the entries' pickles
        data = path.read_bytes()
        assert data.startswith(stamp)
        path.write_bytes(pickle.dumps((index_module.INDEX_FORMAT, "an older reader")) + data[len(stamp):])
    else:
        path.unlink()
        path.mkdir()
    reads.clear()
    again = scanned(folder)
    assert len(reads) == 7 and view(again) == view(first)
    assert not pwned.exists()
    if damage != "folder":
        reads.clear()
        scanned(folder)
        assert reads == []


def test_an_index_that_cannot_be_written_costs_only_time(folder, reads, tmp_path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be")
    first = scanned(folder, index=blocked / "index.pickle")
    reads.clear()
    again = scanned(folder, index=blocked / "index.pickle")
    assert len(reads) == 7 and view(again) == view(first)


def test_a_cancelled_scan_keeps_what_it_read(folder, reads):
    asked: list[int] = []

    def cancelled() -> bool:
        asked.append(1)
        return len(asked) > 2

    partial = scan([StoreRoot(StoreKind.USER, folder)], lambda spec: spec.n_layer, cancelled=cancelled, workers=1)
    assert not partial.complete
    read_first = set(reads)
    reads.clear()
    scanned(folder)
    assert read_first and not read_first & set(reads)


def test_workers_read_what_this_process_reads(folder, tmp_path):
    here = scanned(folder, index=tmp_path / "one.pickle")
    pooled = scan([StoreRoot(StoreKind.USER, folder)], lambda spec: spec.n_layer, workers=2,
                  index=tmp_path / "two.pickle")
    assert pooled.complete and view(pooled) == view(here)
    assert load_index(tmp_path / "two.pickle").keys() == load_index(tmp_path / "one.pickle").keys()
