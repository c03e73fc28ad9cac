"""The evidence store: llama.cpp logs kept per model, in the app's data folder, found again by header hash.

Rule 1: layout `<data>/evidence/<fingerprint>/<stamp>-<origin>.log` with a `.json` record
        beside it (`record.py`); the fingerprint is `header_fingerprint` of the model, so the
        evidence comes back when the same model is reopened from anywhere.
Rule 2: the data folder is `core.paths.data_dir()` unless the caller passes its own.
Rule 3: reading never fails on a damaged store: a record that does not parse, or whose log
        is gone, is skipped; every file is read like every small file (`core.regular_file`:
        a FIFO named `*.json` is skipped, never opened). Writing writes the log first, then the
        record, so a record always has its log.
Rule 4: writes cannot lose data (`core.safe_write`): the log is created exclusively (two saves in
        the same second get `STAMP-measured.log` and `STAMP-measured-2.log`), the record beside it
        replaced atomically, both under the model folder's lock.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

from gguf_budget.core import paths
from gguf_budget.core.errors import DamagedRecord, UnreadableFile
from gguf_budget.core.regular_file import FileKind, read_json, read_text
from gguf_budget.core.safe_write import create_exclusive, locked, replace_atomically
from gguf_budget.core.measure.record import EvidenceRecord, record_from_json, record_to_json


class EvidenceStore:
    """Logs and their records under one data folder."""

    def __init__(self, data_dir: str | Path | None = None):
        self.root = Path(data_dir if data_dir is not None else paths.data_dir()) / "evidence"

    def save(self, record: EvidenceRecord, log: str) -> EvidenceRecord:
        """Store `log` and its record; the record's `log_name` is set to the stored file's name (Rule 3).

        Raises `OSError` when the store cannot be written (the caller keeps the log elsewhere)."""
        folder = self.root / record.model_key
        folder.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(record.recorded_at))
        with locked(folder):
            log_path = create_exclusive(folder, f"{stamp}-{record.origin.value}", ".log", _encoded(log))
            kept = replace(record, log_name=log_path.name)
            try:
                replace_atomically(log_path.with_suffix(".json"),
                                   json.dumps(record_to_json(kept), indent=2).encode("ascii"))
            except BaseException:
                log_path.unlink(missing_ok=True)
                raise
        return kept

    def records(self, model_key: str) -> tuple[EvidenceRecord, ...]:
        """Every readable record of the model, newest first (Rule 3)."""
        folder = self.root / model_key
        found = []
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
            try:
                record = record_from_json(read_json(path, FileKind.RECORD))
            except (UnreadableFile, DamagedRecord):
                continue
            if record.model_key == model_key and _is_file(folder / record.log_name):
                found.append(record)
        return tuple(sorted(found, key=lambda r: -r.recorded_at))

    def log(self, record: EvidenceRecord) -> str:
        """The stored log text of a record (`UnreadableFile` if it vanished or changed since `records`)."""
        return read_text(self.log_path(record), FileKind.LOG)

    def log_path(self, record: EvidenceRecord) -> Path:
        return self.root / record.model_key / record.log_name


def _is_file(path: Path) -> bool:
    """A regular file is there; any trouble looking (a name too long, no permission) is no."""
    try:
        return path.is_file()
    except OSError:
        return False


def _encoded(log: str) -> bytes:
    """A log as UTF-8; text that came from a file name that is not UTF-8 is written as its own bytes."""
    return log.encode("utf-8", errors="surrogateescape")
