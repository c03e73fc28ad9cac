"""The evidence store: llama.cpp logs kept per model, in the app's data folder, found again by header hash.

Rule 1: layout `<data>/evidence/<fingerprint>/<stamp>-<origin>.log` with a `.json` record
        beside it (`record.py`); the fingerprint is `header_fingerprint` of the model, so the
        evidence comes back when the same model is reopened from anywhere.
Rule 2: the data folder is `core.paths.data_dir()` unless the caller passes its own.
Rule 3: reading never fails on a damaged store: a record that does not parse, or whose log
        is gone, is skipped. Writing writes the log first, then the record, so a record
        always has its log.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

from gguf_budget.core import paths
from gguf_budget.core.measure.record import DamagedRecord, EvidenceRecord, record_from_json, record_to_json


class EvidenceStore:
    """Logs and their records under one data folder."""

    def __init__(self, data_dir: str | Path | None = None):
        self.root = Path(data_dir if data_dir is not None else paths.data_dir()) / "evidence"

    def save(self, record: EvidenceRecord, log: str) -> EvidenceRecord:
        """Store `log` and its record; the record's `log_name` is set to the stored file's name."""
        folder = self.root / record.model_key
        folder.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(record.recorded_at))
        stem = self._free_stem(folder, f"{stamp}-{record.origin.value}")
        (folder / f"{stem}.log").write_text(log, encoding="utf-8")
        kept = replace(record, log_name=f"{stem}.log")
        (folder / f"{stem}.json").write_text(json.dumps(record_to_json(kept), indent=2), encoding="utf-8")
        return kept

    def records(self, model_key: str) -> tuple[EvidenceRecord, ...]:
        """Every readable record of the model, newest first (Rule 3)."""
        folder = self.root / model_key
        found = []
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
            try:
                record = record_from_json(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError, DamagedRecord):  # ValueError: not JSON at all
                continue
            if record.model_key == model_key and (folder / record.log_name).is_file():
                found.append(record)
        return tuple(sorted(found, key=lambda r: -r.recorded_at))

    def log(self, record: EvidenceRecord) -> str:
        """The stored log text of a record (`OSError` if it vanished since `records`)."""
        return (self.root / record.model_key / record.log_name).read_text(encoding="utf-8", errors="replace")

    def log_path(self, record: EvidenceRecord) -> Path:
        return self.root / record.model_key / record.log_name

    @staticmethod
    def _free_stem(folder: Path, stem: str) -> str:
        candidate, n = stem, 1
        while (folder / f"{candidate}.json").exists() or (folder / f"{candidate}.log").exists():
            n += 1
            candidate = f"{stem}-{n}"
        return candidate
