"""The readers and the classes of hostile file of `test_hostile_readers.py` (run in its child processes).

`prepare(base, reader, kind)` makes a fresh folder under `base` whose name is not UTF-8, lays out what
the reader needs around its file (a store, a model), and puts the file there as `kind` says;
`READERS[reader].read(folder)` then reads it as the app does.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from gguf_factory import ArchDesc, write_gguf
from recorded_models import LOGS, write_recorded_models

TINY = ArchDesc(name="tiny-llama", n_layer=2, n_embd=64, n_ff=128, n_head=2, n_head_kv=1, n_vocab=256,
                context_length=2048)
HUGE = "9" * 6000
SMOLLM2_LOG = LOGS / "smollm2-135m-instruct-q4_1_ctx2048_f16.log"


@dataclass(frozen=True)
class Reader:
    target: Callable[[Path], Path]
    valid: Callable[[Path, Path], None]
    """(folder, target) → write a valid file at target."""
    absurd: Callable[[], bytes]
    deep: Callable[[], bytes]
    read: Callable[[Path], object]
    cap: int


def _json(data: object) -> Callable[[Path, Path], None]:
    return lambda folder, target: target.write_text(json.dumps(data))


def _model(folder: Path) -> Path:
    return write_gguf(folder / "tiny.gguf", TINY, "header_only")[0]


# readers -----------------------------------------------------------------------------------------

def _lm_studio_target(folder: Path) -> Path:
    (folder / "home" / ".lmstudio" / "models").mkdir(parents=True, exist_ok=True)
    return folder / "home" / ".lmstudio" / "settings.json"


def _lm_studio_valid(folder: Path, target: Path) -> None:
    (folder / "downloads").mkdir(exist_ok=True)
    target.write_text(json.dumps({"downloadsFolder": str(folder / "downloads")}))


def _lm_studio_read(folder: Path) -> object:
    from gguf_budget.core.library.stores import store_roots

    return [r.path.name for r in store_roots(folder / "home", {})]


def _ollama_target(folder: Path) -> Path:
    models = folder / "home" / ".ollama" / "models"
    (models / "blobs").mkdir(parents=True, exist_ok=True)
    target = models / "manifests" / "registry.ollama.ai" / "library" / "tiny" / "latest"
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


def _ollama_valid(folder: Path, target: Path) -> None:
    data = _model(folder).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    (folder / "home" / ".ollama" / "models" / "blobs" / f"sha256-{digest}").write_bytes(data)
    target.write_text(json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image.model",
                                              "digest": f"sha256:{digest}"}]}))


def _ollama_read(folder: Path) -> object:
    from gguf_budget.core.library.scan import scan
    from gguf_budget.core.library.stores import store_roots

    return [(e.name, e.error) for e in scan(store_roots(folder / "home", {}), assess=lambda spec: None).entries]


def _evidence_read(folder: Path) -> object:
    from gguf_budget.gui.cli import main

    model = write_recorded_models(folder / "models")["smollm2"]
    return f"exit {main(['evidence', str(folder / 'run.log'), '--model', str(model), '--ram-bw', '20G', '--no-measure'])}"


def _import_read(folder: Path) -> object:
    from gguf_budget.core.measure.session import import_log
    from gguf_budget.core.measure.store import EvidenceStore
    from gguf_budget.core.model.loader import load_model

    model = load_model(write_recorded_models(folder / "models")["smollm2"])
    return import_log(model, folder / "run.log", EvidenceStore(folder / "data")).record.origin.value


def _key(folder: Path) -> str:
    from gguf_budget.core.gguf.fingerprint import header_fingerprint

    return header_fingerprint(str(_model(folder)))


def _store_folder(folder: Path) -> Path:
    store = folder / "data" / "evidence" / _key(folder)
    store.mkdir(parents=True, exist_ok=True)
    return store


def _record_json(folder: Path) -> str:
    from gguf_budget.core.measure.record import EvidenceRecord, Origin, record_to_json

    return json.dumps(record_to_json(EvidenceRecord(model_key=_key(folder), model_path=str(folder / "tiny.gguf"),
                                                    origin=Origin.IMPORTED, recorded_at=1_700_000_000.0,
                                                    log_name="r.log", source="test")))


def _record_target(folder: Path) -> Path:
    store = _store_folder(folder)
    (store / "r.log").write_text(SMOLLM2_LOG.read_text())
    return store / "r.json"


def _log_target(folder: Path) -> Path:
    store = _store_folder(folder)
    (store / "r.json").write_text(_record_json(folder))
    return store / "r.log"


def _stored_read(folder: Path) -> object:
    from gguf_budget.core.measure.session import stored_evidence
    from gguf_budget.core.measure.store import EvidenceStore

    return len(stored_evidence(str(folder / "tiny.gguf"), EvidenceStore(folder / "data")))


def _settings_read(folder: Path) -> object:
    from gguf_budget.gui.qt.settings import load_settings, user_settings

    return load_settings(user_settings(folder / "gguf-budget.conf")).n_buffers


def _index_valid(folder: Path, target: Path) -> None:
    from gguf_budget.core.library.index import save_index

    save_index(target, {})


def _index_read(folder: Path) -> object:
    from gguf_budget.core.library.index import load_index

    return len(load_index(folder / "index.pickle"))


def _speed_valid(folder: Path, target: Path) -> None:
    from gguf_budget.core.machine.bandwidth_store import MachineRecord, host_key, write_record

    write_record(MachineRecord(host_key()), folder)


def _speed_read(folder: Path) -> object:
    from gguf_budget.core.machine.bandwidth_store import read_record

    return read_record(folder)


def _runs_read(folder: Path) -> object:
    from gguf_budget.core.speed.calibration import read_runs

    return len(read_runs(folder))


def _fingerprint_read(folder: Path) -> object:
    from gguf_budget.core.gguf.fingerprint import header_fingerprint

    return header_fingerprint(str(folder / "m.gguf"))[:8]


_JSON_ABSURD = lambda: f'{{"folders": [{HUGE}], "downloadsFolder": {HUGE}, "layers": [{{"digest": {HUGE}}}]}}'.encode()
_JSON_DEEP = lambda: b"[" * 200_000
_LOG_ABSURD = lambda: SMOLLM2_LOG.read_text().replace("272 tensors", f"{HUGE} tensors").replace("2048", HUGE).encode()
_LOG_DEEP = lambda: (SMOLLM2_LOG.read_text() + "print_info: a" + " " * 8000 + "b = c\n") .encode()
MiB = 1 << 20

READERS: dict[str, Reader] = {
    "library folders": Reader(lambda f: f / "library.json", _json({"folders": ["/m"]}), _JSON_ABSURD, _JSON_DEEP,
                              lambda f: __import__("gguf_budget.core.library.config", fromlist=["x"]).read_folders(
                                  f / "library.json"), 1 * MiB),
    "lm studio settings": Reader(_lm_studio_target, _lm_studio_valid, _JSON_ABSURD, _JSON_DEEP, _lm_studio_read, 1 * MiB),
    "ollama manifest": Reader(_ollama_target, _ollama_valid, _JSON_ABSURD, _JSON_DEEP, _ollama_read, 1 * MiB),
    "evidence LOG": Reader(lambda f: f / "run.log", lambda f, t: t.write_text(SMOLLM2_LOG.read_text()), _LOG_ABSURD,
                           _LOG_DEEP, _evidence_read, 64 * MiB),
    "import log": Reader(lambda f: f / "run.log", lambda f, t: t.write_text(SMOLLM2_LOG.read_text()), _LOG_ABSURD,
                         _LOG_DEEP, _import_read, 64 * MiB),
    "store record": Reader(_record_target, lambda f, t: t.write_text(_record_json(f)), _JSON_ABSURD, _JSON_DEEP,
                           _stored_read, 1 * MiB),
    "store log": Reader(_log_target, lambda f, t: t.write_text(SMOLLM2_LOG.read_text()), _LOG_ABSURD, _LOG_DEEP,
                        _stored_read, 64 * MiB),
    "window settings": Reader(lambda f: f / "gguf-budget.conf",
                              lambda f, t: t.write_text("[explorer]\nn_buffers=3\n"),
                              lambda: f"[explorer]\nn_buffers={HUGE}\nkv_type={HUGE}\n".encode(),
                              lambda: ("[explorer]\nn_buffers=@Variant(" + r"\0\0\0\t\0\0\0\x1" * 20_000
                                       + r"\0\0\0\x2\0\0\0\x1)" + "\n").encode(), _settings_read, 16 * MiB),
    "library index": Reader(lambda f: f / "index.pickle", _index_valid, lambda: HUGE.encode(),
                            lambda: b"(" * 200_000, _index_read, 512 * MiB),
    "machine speed": Reader(lambda f: f / "machine-speed.json", _speed_valid, _JSON_ABSURD, _JSON_DEEP, _speed_read,
                            1 * MiB),
    "speed runs": Reader(lambda f: f / "speed-runs.json", _json({"runs": []}), _JSON_ABSURD, _JSON_DEEP, _runs_read,
                         1 * MiB),
    "header fingerprint": Reader(lambda f: f / "m.gguf", lambda f, t: write_gguf(t, TINY, "header_only"),
                                 lambda: b"GGUF\x03\0\0\0" + HUGE.encode(), lambda: b"GGUF" + b"\xff" * 4096,
                                 _fingerprint_read, 1 << 40),
}
EXPECTED_OK = {"library folders": "(PosixPath('/m'),)", "lm studio settings": "['models', 'downloads']",
               "ollama manifest": "[('tiny:latest', None)]", "evidence LOG": "exit 0", "import log": "imported",
               "store record": "1", "store log": "1", "window settings": "2", "library index": "0",
               "speed runs": "0"}
CLASSES = ("valid, name not UTF-8", "fifo", "dev-zero", "symlink loop", "folder", "garbage", "absurd numbers",
           "nested past the parser", "past its cap")


def prepare(base: str, reader: str, kind: str) -> Path:
    """A fresh folder (its name not UTF-8) with the reader's file put there as `kind`."""
    r = READERS[reader]
    folder = Path(os.fsdecode(os.fsencode(base) + b"/caf\xe9-" + kind.replace(" ", "-").replace(",", "").encode()))
    folder.mkdir()
    target = r.target(folder)
    if kind == "valid, name not UTF-8":
        r.valid(folder, target)
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "dev-zero":
        target.symlink_to("/dev/zero")
    elif kind == "symlink loop":
        other = target.with_name(target.name + ".other")
        target.symlink_to(other)
        other.symlink_to(target)
    elif kind == "folder":
        target.mkdir()
    elif kind == "garbage":
        target.write_bytes(random.Random(24).randbytes(4096))
    elif kind == "absurd numbers":
        target.write_bytes(r.absurd())
    elif kind == "nested past the parser":
        target.write_bytes(r.deep())
    elif kind == "past its cap":
        with open(target, "wb") as f:
            f.truncate(min(r.cap, 1 << 30) + 1)
    return folder
