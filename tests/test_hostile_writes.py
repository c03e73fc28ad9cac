"""Writes that cannot lose data (issue #24 F): the evidence store and the library's folder list under
concurrent writers, saves in the same second, and a store that cannot be written.

The writers are real processes (fork), racing on real files; nothing is mocked."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
from pathlib import Path

import pytest
from hostile_support import outcome_as_nobody, world_readable_folder

from gguf_budget.core.library.config import add_folder, read_folders, remove_folder
from gguf_budget.core.measure.record import EvidenceRecord, Origin
from gguf_budget.core.measure.store import EvidenceStore
from gguf_budget.core.safe_write import create_exclusive, replace_atomically

KEY = "a" * 64
SAVES = 25


def _record(at: float = 1_700_000_000.0) -> EvidenceRecord:
    return EvidenceRecord(model_key=KEY, model_path="/models/m.gguf", origin=Origin.IMPORTED, recorded_at=at,
                          log_name="pending", source="test")


def _in_processes(target, args_per_process) -> None:
    context = multiprocessing.get_context("fork")
    start = context.Event()
    processes = [context.Process(target=target, args=(start, *args)) for args in args_per_process]
    for p in processes:
        p.start()
    start.set()
    for p in processes:
        p.join(120)
        assert p.exitcode == 0


def _add_many(start, config: str, folders: list[str]) -> None:
    start.wait()
    for folder in folders:
        add_folder(folder, Path(config))


@pytest.mark.parametrize("writers", [2, 8])
def test_concurrent_adds_lose_no_folder(tmp_path, writers):
    config = tmp_path / "config" / "library.json"
    per_writer = 12
    plan = [[str(tmp_path / f"w{w}-{i}") for i in range(per_writer)] for w in range(writers)]
    for folders in plan:
        for folder in folders:
            os.mkdir(folder)
    _in_processes(_add_many, [(str(config), folders) for folders in plan])
    assert {str(f) for f in read_folders(config)} == {f for folders in plan for f in folders}
    assert json.loads(config.read_text())["folders"]  # always valid JSON
    assert [p.name for p in config.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_remove_keeps_every_other_folder(tmp_path):
    config = tmp_path / "library.json"
    for name in "abc":
        add_folder(str(tmp_path / name), config)
    assert remove_folder(str(tmp_path / "b"), config) == ((tmp_path / "a").resolve(), (tmp_path / "c").resolve())


def test_a_folder_name_that_is_not_utf8_survives_the_round_trip(tmp_path):
    config = tmp_path / "library.json"
    odd = os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9")
    os.mkdir(odd)
    add_folder(odd, config)
    assert read_folders(config) == (Path(odd).resolve(),)
    assert config.read_bytes().isascii()


def test_saves_in_the_same_second_keep_every_log(tmp_path):
    store = EvidenceStore(tmp_path)
    kept = [store.save(_record(), f"log {i}\n") for i in range(40)]
    names = {r.log_name for r in kept}
    assert len(names) == 40
    assert sorted(store.log(r) for r in store.records(KEY)) == sorted(f"log {i}\n" for i in range(40))


def _save_many(start, root: str, writer: int) -> None:
    start.wait()
    store = EvidenceStore(root)
    for i in range(SAVES):
        store.save(_record(), f"writer {writer} log {i}\n")


def test_concurrent_saves_in_the_same_second_keep_every_log(tmp_path):
    _in_processes(_save_many, [(str(tmp_path), w) for w in range(8)])
    store = EvidenceStore(tmp_path)
    logs = sorted(store.log(r) for r in store.records(KEY))
    assert logs == sorted(f"writer {w} log {i}\n" for w in range(8) for i in range(SAVES))


def test_an_exclusive_name_is_numbered_never_overwritten(tmp_path):
    first = create_exclusive(tmp_path, "stem", ".log", b"one")
    second = create_exclusive(tmp_path, "stem", ".log", b"two")
    assert (first.name, second.name) == ("stem.log", "stem-2.log")
    assert (first.read_bytes(), second.read_bytes()) == (b"one", b"two")


def test_a_failed_replace_leaves_the_old_file_and_no_scratch():
    """A folder another user cannot write (a real permission, checked as uid 65534 when we are root)."""
    folder = world_readable_folder()
    try:
        target = folder / "library.json"
        target.write_text("old")
        (folder / "library.json.tmp").write_text("someone else's scratch file")
        report = outcome_as_nobody(lambda: replace_atomically(target, b"new"))
        assert report.startswith("PermissionError"), report
        assert target.read_text() == "old"
        assert sorted(p.name for p in folder.iterdir()) == ["library.json", "library.json.tmp"]
    finally:
        shutil.rmtree(folder)


def test_a_store_that_is_a_file_raises_oserror_and_writes_nothing(tmp_path):
    (tmp_path / "evidence").write_text("a file where the store should be")
    with pytest.raises(OSError):
        EvidenceStore(tmp_path).save(_record(), "log\n")
    assert (tmp_path / "evidence").read_text() == "a file where the store should be"
