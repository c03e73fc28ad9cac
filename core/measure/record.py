"""What is kept of one piece of runtime evidence: which model, where the log came from, when.

The llama.cpp log itself is the evidence and is stored beside the record, unchanged; the
record says what the log alone cannot: the model file it belongs to, whether it was measured
here or imported, when, the command, and the peak RSS psutil saw.

Rule 1: records are frozen and validated; `record_from_json` refuses anything malformed
        with `DamagedRecord` (a damaged store file is skipped, never trusted).
Rule 2: JSON keys are the field names; `settings` is null for an imported log.
Rule 3: the model key and the log name are file names inside the store (no `/`, `\\`, `..`),
        so a damaged record can never point the store at a file outside it.
Rule 4: every number is finite and at most MAX_NUMBER in size (JSON allows NaN, Infinity, 1e400
        and 10**400 to be written; none is a time, a size or a duration).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from gguf_budget.core.vocab import TextEnum
from gguf_budget.core.errors import DamagedRecord, RequestError
from gguf_budget.core.measure.command import MeasureSettings
from gguf_budget.core.model.kv import KVType


MAX_NAME = 255
"""Rule 3: the longest file name (in bytes) a file system holds."""
MAX_NUMBER = 2**63
"""Rule 4: larger than any byte count, token count or time stamp a record holds."""


class Origin(TextEnum):
    """Whether the log was measured here or imported from a file."""

    MEASURED = "measured"
    IMPORTED = "imported"


@dataclass(frozen=True, kw_only=True)
class EvidenceRecord:
    """One stored log: its model (header hash and path then), origin, time and how it was made."""

    model_key: str
    model_path: str
    origin: Origin
    recorded_at: float
    log_name: str
    source: str
    command: tuple[str, ...] = ()
    settings: MeasureSettings | None = None
    peak_rss_polled: int | None = None
    seconds: float | None = None

    def __post_init__(self) -> None:
        if not _bare_name(self.model_key) or not _bare_name(self.log_name):
            raise DamagedRecord("an evidence record needs a model key and a log name (file names, not paths)")
        if self.peak_rss_polled is not None and self.peak_rss_polled < 0:
            raise DamagedRecord("peak RSS cannot be negative")


def _bare_name(name: str) -> bool:
    """Rule 3: a name inside the store's folder, never a path that leads out of it."""
    size = len(name.encode("utf-8", errors="surrogatepass"))
    return 0 < size <= MAX_NAME and name not in (".", "..") and not any(c in name for c in "/\\\0:")


def record_to_json(record: EvidenceRecord) -> dict[str, Any]:
    s = record.settings
    return {
        "model_key": record.model_key,
        "model_path": record.model_path,
        "origin": record.origin.value,
        "recorded_at": record.recorded_at,
        "log_name": record.log_name,
        "source": record.source,
        "command": list(record.command),
        "settings": None if s is None else {"ctx": s.ctx, "gpu_layers": s.gpu_layers, "kv_type": str(s.kv_type)},
        "peak_rss_polled": record.peak_rss_polled,
        "seconds": record.seconds,
    }


def _typed(data: Mapping[str, Any], key: str, kinds: type | tuple[type, ...], optional: bool = False) -> Any:
    value = data.get(key)
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise DamagedRecord(f"evidence record: {key!r} is missing or of the wrong type")
    if isinstance(value, (int, float)) and not (abs(value) <= MAX_NUMBER and math.isfinite(value)):
        raise DamagedRecord(f"evidence record: {key!r} is not a number it could hold")  # Rule 4
    return value


def record_from_json(data: Any) -> EvidenceRecord:
    """Rule 1: a record back from its JSON, or `DamagedRecord`."""
    if not isinstance(data, dict):
        raise DamagedRecord("evidence record: not a JSON object")
    settings = _typed(data, "settings", dict, optional=True)
    command = _typed(data, "command", list)
    if not all(isinstance(a, str) for a in command):
        raise DamagedRecord("evidence record: 'command' must be a list of strings")
    kv_text = None if settings is None else _typed(settings, "kv_type", str)
    try:
        origin = Origin(data.get("origin"))
        kv_type = None if kv_text is None else KVType(kv_text)
    except ValueError:
        raise DamagedRecord("evidence record: unknown origin or KV type") from None
    try:
        return _record(data, origin, command, settings, kv_type)
    except RequestError as e:
        raise DamagedRecord(f"evidence record: {e}") from None


def _record(data: Mapping[str, Any], origin: Origin, command: list[str], settings: Mapping[str, Any] | None,
            kv_type: KVType | None) -> EvidenceRecord:
    return EvidenceRecord(
        model_key=_typed(data, "model_key", str),
        model_path=_typed(data, "model_path", str),
        origin=origin,
        recorded_at=float(_typed(data, "recorded_at", (int, float))),
        log_name=_typed(data, "log_name", str),
        source=_typed(data, "source", str),
        command=tuple(command),
        settings=None if settings is None or kv_type is None else MeasureSettings(
            _typed(settings, "ctx", int), _typed(settings, "gpu_layers", int, optional=True), kv_type),
        peak_rss_polled=_typed(data, "peak_rss_polled", int, optional=True),
        seconds=_typed(data, "seconds", (int, float), optional=True),
    )
