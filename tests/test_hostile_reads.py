"""Reads that block or never end (issue #24 B): every small file the app reads goes through one
regular-file, size-capped reader — a FIFO as a manifest, a settings file or a stored record, a
symlink to /dev/zero, a file of /proc, JSON nested past the parser's reach — and the library walk
is bounded: a link out of a store, a store set to `/`, a folder tree larger than the walk's cap.

Everything here is real: FIFOs made with mkfifo, symlinks to /dev/zero, the CLI in a child process
that a hang cannot stall (`hostile_support.run_cli`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from gguf_factory import ArchDesc, write_gguf
from hostile_support import assert_one_line_exit_2, make_fifo, run_cli

from gguf_budget.core.errors import RequestError, UnreadableFile
from gguf_budget.core.library import scan as scan_module
from gguf_budget.core.library.config import ASIDE_SUFFIX, add_folder, read_folders
from gguf_budget.core.library.scan import candidates, scan
from gguf_budget.core.library.stores import StoreKind, StoreRoot, store_roots
from gguf_budget.core.measure.record import EvidenceRecord, Origin, record_to_json
from gguf_budget.core.measure.session import import_log, stored_evidence
from gguf_budget.core.measure.store import EvidenceStore
from gguf_budget.core.model.loader import load_model
from gguf_budget.core.regular_file import MiB, FileKind, MissingFile, read_bytes, read_json, read_text

TINY = ArchDesc(name="tiny-llama", n_layer=2, n_embd=64, n_ff=128, n_head=2, n_head_kv=1, n_vocab=256,
                context_length=2048)
ODD = {
    "fifo": lambda p: make_fifo(p),
    "dev-zero": lambda p: (p.symlink_to("/dev/zero"), p)[1],
    "folder": lambda p: (p.mkdir(), p)[1],
    "proc": lambda p: (p.symlink_to("/proc/self/status"), p)[1],
}
ODD_WORDS = {"fifo": "FIFO", "dev-zero": "character device", "folder": "folder", "proc": "kernel makes up"}


# The reader itself -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(ODD))
@pytest.mark.parametrize("file_kind", list(FileKind))
def test_only_regular_files_are_read(tmp_path, kind, file_kind):
    path = ODD[kind](tmp_path / "x.json")
    if kind == "proc" and file_kind is FileKind.SYSTEM:
        assert "Name:" in read_text(path, file_kind)  # the hardware probe's own kind reads /proc
        return
    with pytest.raises(UnreadableFile, match=ODD_WORDS[kind]) as refused:
        read_bytes(path, file_kind)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("file_kind", list(FileKind))
def test_each_kind_has_a_size_cap(tmp_path, file_kind):
    path = tmp_path / "big"
    with open(path, "wb") as f:
        f.truncate(file_kind.cap)
    assert len(read_bytes(path, file_kind)) == file_kind.cap
    with open(path, "ab") as f:
        f.write(b"x")
    with pytest.raises(UnreadableFile, match=f"larger than {file_kind.cap // MiB} MiB"):
        read_bytes(path, file_kind)


def test_json_nested_past_the_parser_and_not_json_are_one_line(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000)
    with pytest.raises(UnreadableFile, match="not valid JSON"):
        read_json(deep, FileKind.SETTINGS)
    junk = tmp_path / "junk.json"
    junk.write_bytes(b"\xff\xfe{not json")
    with pytest.raises(UnreadableFile, match="not valid JSON"):
        read_json(junk, FileKind.SETTINGS)
    with pytest.raises(MissingFile, match="no such file"):
        read_json(tmp_path / "absent.json", FileKind.SETTINGS)


# The library's reads -----------------------------------------------------------------------------


def model_bytes(tmp_path: Path) -> bytes:
    (tmp_path / "src").mkdir(exist_ok=True)
    return write_gguf(tmp_path / "src" / "tiny.gguf", TINY, "header_only")[0].read_bytes()


def library_cli(home: Path, config: Path, *args: str):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "OLLAMA", "LLAMA_CACHE", "XDG_"))}
    env.update(HOME=str(home), GGUF_BUDGET_CONFIG_DIR=str(config))
    return run_cli(["library", "--json", "--host-available", "16G", "--no-gpu", *args], env=env)


def ollama_home(tmp_path: Path) -> Path:
    """An Ollama store with one good manifest and one that is a FIFO."""
    models = tmp_path / "home" / ".ollama" / "models"
    (models / "blobs").mkdir(parents=True)
    data = model_bytes(tmp_path)
    import hashlib

    digest = hashlib.sha256(data).hexdigest()
    (models / "blobs" / f"sha256-{digest}").write_bytes(data)
    good = models / "manifests" / "registry.ollama.ai" / "library" / "tiny" / "latest"
    good.parent.mkdir(parents=True)
    good.write_text(json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image.model",
                                            "digest": f"sha256:{digest}"}]}))
    make_fifo(good.with_name("pipe"))
    return tmp_path / "home"


def test_a_fifo_manifest_is_an_entry_with_its_reason(tmp_path):
    result = library_cli(ollama_home(tmp_path), tmp_path / "config")
    assert result.returncode == 0, result.stderr
    entries = {e["name"]: e for e in json.loads(result.stdout)["entries"]}
    assert entries["tiny:latest"]["error"] is None
    assert "FIFO" in entries["tiny:pipe"]["error"] and "cannot read the manifest" in entries["tiny:pipe"]["error"]


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "proc"])
def test_lm_studio_settings_that_are_not_a_file_are_passed_over(tmp_path, kind):
    home = tmp_path / "home"
    (home / ".lmstudio" / "models").mkdir(parents=True)
    (home / ".lmstudio" / "models" / "tiny.gguf").write_bytes(model_bytes(tmp_path))
    ODD[kind](home / ".lmstudio" / "settings.json")
    result = library_cli(home, tmp_path / "config")
    assert result.returncode == 0, result.stderr
    assert [e["name"] for e in json.loads(result.stdout)["entries"]] == ["tiny.gguf"]
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "deep"])
def test_an_unreadable_library_file_is_no_folders_and_is_moved_aside_by_add(tmp_path, kind):
    config = tmp_path / "config"
    config.mkdir()
    if kind == "deep":
        (config / "library.json").write_text('{"folders": ' + "[" * 100_000)
    else:
        ODD[kind](config / "library.json")
    (tmp_path / "home").mkdir()
    listed = library_cli(tmp_path / "home", config)
    assert listed.returncode == 0 and json.loads(listed.stdout)["entries"] == [], listed.stderr
    assert "ignoring the library settings" in listed.stderr and "Traceback" not in listed.stderr
    mine = tmp_path / "mine"
    mine.mkdir()
    added = library_cli(tmp_path / "home", config, "--add", str(mine))
    assert added.returncode == 0, added.stderr
    assert read_folders(config / "library.json") == (mine.resolve(),)
    assert os.path.lexists(config / f"library.json{ASIDE_SUFFIX}")


def test_add_with_an_empty_name_is_refused_not_the_current_folder(tmp_path):
    (tmp_path / "home").mkdir()
    for name in ("", "  "):
        result = library_cli(tmp_path / "home", tmp_path / "config", "--add", name)
        assert_one_line_exit_2(result, "folder name is empty")
    assert read_folders(tmp_path / "config" / "library.json") == ()
    with pytest.raises(RequestError, match="cannot be empty"):
        add_folder("", tmp_path / "config" / "library.json")


# The library's walk ------------------------------------------------------------------------------


def test_a_folder_link_out_of_a_tool_store_is_not_followed(tmp_path):
    hub = tmp_path / "home" / ".cache" / "huggingface" / "hub"
    snap = hub / "models--owner--repo" / "snapshots" / "r1"
    snap.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "stray.gguf").write_bytes(model_bytes(tmp_path))
    (snap / "x").symlink_to(outside)
    (snap / "root").symlink_to("/")
    (snap / "m.gguf").write_bytes(model_bytes(tmp_path))
    names = [c.name for c in candidates(store_roots(tmp_path / "home", {}))]
    assert names == ["owner/repo · m.gguf"]


def test_a_folder_link_in_an_added_folder_is_followed_but_not_to_the_root(tmp_path):
    mine, disk = tmp_path / "mine", tmp_path / "other-disk"
    mine.mkdir()
    disk.mkdir()
    (disk / "kept.gguf").write_bytes(model_bytes(tmp_path))
    (mine / "disk").symlink_to(disk)
    (mine / "root").symlink_to("/")
    (mine / "proc").symlink_to("/proc")
    names = [c.name for c in candidates([StoreRoot(StoreKind.USER, mine)])]
    assert names == ["kept.gguf"]


@pytest.mark.parametrize("chosen", ["/", "/proc", "/sys/"])
def test_a_store_set_to_the_whole_system_is_never_a_root(tmp_path, chosen):
    home = tmp_path / "home"
    (home / ".lmstudio").mkdir(parents=True)
    (home / ".lmstudio" / "settings.json").write_text(json.dumps({"downloadsFolder": chosen}))
    assert store_roots(home, {}, [Path(chosen)]) == ()


def test_the_walk_stops_at_its_folder_cap_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(scan_module, "MAX_FOLDERS", 5)
    deep = tmp_path / "mine"
    for i in range(8):
        (deep / f"f{i}").mkdir(parents=True)
        (deep / f"f{i}" / f"m{i}.gguf").write_bytes(model_bytes(tmp_path))
    result = scan([StoreRoot(StoreKind.USER, deep)], assess=lambda spec: None)
    errors = [e.error for e in result.entries if e.error]
    assert len(result.entries) == 5 and errors == [f"stopped after 5 folders: models deeper in {deep} are not listed"]


def test_a_cancelled_walk_stops_before_listing_folders(tmp_path, monkeypatch):
    deep = tmp_path / "mine"
    (deep / "a" / "b").mkdir(parents=True)
    listed: list[str] = []
    real_scandir = os.scandir
    monkeypatch.setattr(scan_module.os, "scandir", lambda path: (listed.append(str(path)), real_scandir(path))[1])
    result = scan([StoreRoot(StoreKind.USER, deep)], assess=lambda spec: None, cancelled=lambda: True)
    assert listed == [] and not result.complete


# Evidence reads ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "proc", "folder"])
def test_evidence_on_a_file_that_is_not_a_log_is_one_line(tmp_path, kind):
    path = ODD[kind](tmp_path / "run.log")
    assert_one_line_exit_2(run_cli(["evidence", str(path)]), ODD_WORDS[kind])


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "proc"])
def test_import_refuses_a_file_that_is_not_a_log(tmp_path, kind):
    model = load_model(write_gguf(tmp_path / "m.gguf", TINY, "header_only")[0])
    with pytest.raises(UnreadableFile, match=ODD_WORDS[kind]):
        import_log(model, ODD[kind](tmp_path / "run.log"), EvidenceStore(tmp_path / "data"))


def test_a_log_over_the_cap_is_refused_by_evidence_and_import(tmp_path):
    big = tmp_path / "big.log"
    with open(big, "wb") as f:
        f.truncate(FileKind.LOG.cap + 1)
    assert_one_line_exit_2(run_cli(["evidence", str(big)]), "larger than 64 MiB")
    model = load_model(write_gguf(tmp_path / "m.gguf", TINY, "header_only")[0])
    with pytest.raises(UnreadableFile, match="larger than 64 MiB"):
        import_log(model, big, EvidenceStore(tmp_path / "data"))


def test_fifos_and_hostile_records_in_the_store_are_skipped(tmp_path):
    model = write_gguf(tmp_path / "m.gguf", TINY, "header_only")[0]
    store = EvidenceStore(tmp_path / "data")
    from gguf_budget.core.gguf.fingerprint import header_fingerprint

    key = header_fingerprint(str(model))
    folder = store.root / key
    folder.mkdir(parents=True)
    make_fifo(folder / "20250101-000000-imported.json")
    (folder / "escape.log").write_text("not a log")
    for i, log_name in enumerate(["../../../../etc/passwd", "/etc/passwd", "..", "pipe.log"]):
        record = record_to_json(EvidenceRecord(model_key=key, model_path=str(model), origin=Origin.IMPORTED,
                                               recorded_at=1.0, log_name="x.log", source="test"))
        (folder / f"hostile-{i}.json").write_text(json.dumps({**record, "log_name": log_name}))
    make_fifo(folder / "pipe.log")
    assert store.records(key) == ()
    assert stored_evidence(str(model), store) == ()


# The window's scan -------------------------------------------------------------------------------


def test_cancel_frees_the_worker_and_two_scans_never_fill_the_pool(qtbot, make_explorer, write_model, tmp_path):
    """FIFO manifests, a FIFO settings.json and a tree of many folders: Cancel ends the scan's thread, scans
    started one over the other leave no thread behind, and a model still opens afterwards."""
    from gui_support import open_model
    from PySide6.QtCore import QThreadPool

    home = ollama_home(tmp_path)
    (home / ".lmstudio").mkdir()
    make_fifo(home / ".lmstudio" / "settings.json")
    for i in range(5):
        make_fifo(home / ".ollama" / "models" / "manifests" / "registry.ollama.ai" / "library" / "tiny" / f"p{i}")
    deep = home / ".cache" / "llama.cpp"
    for i in range(400):
        (deep / f"d{i % 20}" / f"e{i}").mkdir(parents=True)
    explorer = make_explorer(library_home=home)
    qtbot.waitUntil(lambda: explorer.window.session.state.machine is not None)
    view = explorer.library.view
    pool = QThreadPool.globalInstance()
    for _ in range(pool.maxThreadCount() + 1):
        view.rescan()
        view.rescan()  # the first is dropped: its flag is raised
        view.cancel_button.click()
    assert view.status.text() == "Scan cancelled"
    qtbot.waitUntil(lambda: pool.activeThreadCount() == 0, timeout=30_000)
    with qtbot.waitSignal(view.worker.succeeded, timeout=30_000):
        view.rescan()
    names = {view.table.entry(r).name for r in range(view.table.rowCount())}
    assert {"tiny:latest", "tiny:pipe", "tiny:p0"} <= names
    open_model(qtbot, explorer.window, write_model())


@pytest.mark.parametrize("key, raw", [("recorded_at", "NaN"), ("recorded_at", "Infinity"), ("seconds", "1e400"),
                                      ("peak_rss_polled", "1" * 400), ("recorded_at", "-" + "9" * 30)])
def test_a_record_with_a_number_it_cannot_hold_is_skipped(tmp_path, key, raw):
    """JSON lets NaN, Infinity, 1e400 and 10**400 be written; a record holding one is damaged, never shown (NaN in
    `evidence --json`, or an OverflowError)."""
    model = write_gguf(tmp_path / "m.gguf", TINY, "header_only")[0]
    store = EvidenceStore(tmp_path / "data")
    from gguf_budget.core.gguf.fingerprint import header_fingerprint

    key_ = header_fingerprint(str(model))
    folder = store.root / key_
    folder.mkdir(parents=True)
    (folder / "run.log").write_text("llama_model_loader: loaded meta data with 1 key-value pairs and 1 tensors from m "
                                    "(version GGUF V3 (latest))\n")
    record = record_to_json(EvidenceRecord(model_key=key_, model_path=str(model), origin=Origin.IMPORTED,
                                           recorded_at=1.0, log_name="run.log", source="test"))
    text = json.dumps(record).replace(f'"{key}": ', f'"{key}": {raw}, "was": ', 1)
    (folder / "run.json").write_text(text)
    assert store.records(key_) == ()
    (folder / "good.json").write_text(json.dumps(record))
    assert len(store.records(key_)) == 1


def test_a_record_naming_a_log_too_long_for_a_file_system_is_skipped(tmp_path):
    store = EvidenceStore(tmp_path / "data")
    folder = store.root / ("a" * 64)
    folder.mkdir(parents=True)
    record = record_to_json(EvidenceRecord(model_key="a" * 64, model_path="/m.gguf", origin=Origin.IMPORTED,
                                           recorded_at=1.0, log_name="x.log", source="test"))
    (folder / "r.json").write_text(json.dumps({**record, "log_name": "é" * 200}))
    assert store.records("a" * 64) == ()


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "proc"])
def test_the_window_imports_no_fifo_or_device_and_keeps_what_it_had(qtbot, make_explorer, tmp_path, kind):
    """File ▸ Import llama.cpp log… of a FIFO or /dev/zero: one line, the worker free, nothing changed."""
    from gui_support import open_model
    from PySide6.QtCore import QThreadPool

    window_app = make_explorer()
    open_model(qtbot, window_app.window, write_gguf(tmp_path / "m.gguf", TINY, "header_only")[0])
    qtbot.waitUntil(lambda: not window_app.evidence.busy())
    path = ODD[kind](tmp_path / "run.log")
    with qtbot.waitSignal(window_app.evidence.importFailed, timeout=30_000) as failed:
        window_app.evidence.import_path(str(path))
    assert ODD_WORDS[kind] in failed.args[0] and "\n" not in failed.args[0]
    assert window_app.evidence.evidence() is None
    qtbot.waitUntil(lambda: QThreadPool.globalInstance().activeThreadCount() == 0, timeout=30_000)
