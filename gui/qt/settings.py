"""What the window remembers between runs (QSettings): the knobs and the recent files.

Rule 1: the window's settings object is injected, so tests (and `--screenshot`) use their
        own file and never read or write the user's.
Rule 2: whatever comes back from disk is checked; a value of the wrong type or out of range
        falls back to its default rather than reaching the planner.
Rule 3: `budget_bytes` None means "never chosen": the window then picks a budget between
        the model's two thresholds, so a first run shows a plan that streams some layers.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from PySide6.QtCore import QSettings

from gguf_budget.core.model.kv import DEFAULT_KV_TYPE, KV_TYPES
from gguf_budget.core.plan.types import HEAD_MODES, HeadMode

RECENT_LIMIT = 8
_GROUP = "explorer"


@dataclass(frozen=True)
class ExplorerSettings:
    """The knobs as the user left them."""

    budget_bytes: int | None = None
    unlimited: bool = False
    ctx: int | None = None
    n_buffers: int = 2
    head_mode: str = HeadMode.AUTO.value
    kv_type: str = DEFAULT_KV_TYPE.value
    force: bool = False
    recent: tuple[str, ...] = field(default_factory=tuple)


def _int(value: object, low: int, high: int) -> int | None:
    try:
        n = int(str(value))
    except ValueError:
        return None
    return n if low <= n <= high else None


def _bool(value: object) -> bool:
    return str(value).lower() in ("true", "1")


def load_settings(store: QSettings) -> ExplorerSettings:
    d = ExplorerSettings()
    store.beginGroup(_GROUP)
    raw = {key: store.value(key) for key in asdict(d)}
    store.endGroup()
    recent = raw["recent"] if isinstance(raw["recent"], list) else [raw["recent"]] if raw["recent"] else []
    return ExplorerSettings(
        budget_bytes=_int(raw["budget_bytes"], 1, 2**62),
        unlimited=_bool(raw["unlimited"]),
        ctx=_int(raw["ctx"], 1, 2**31),
        n_buffers=_int(raw["n_buffers"], 1, 2) or d.n_buffers,
        head_mode=str(raw["head_mode"]) if raw["head_mode"] in HEAD_MODES else d.head_mode,
        kv_type=str(raw["kv_type"]) if raw["kv_type"] in KV_TYPES else d.kv_type,
        force=_bool(raw["force"]),
        recent=tuple(str(p) for p in recent)[:RECENT_LIMIT],
    )


def save_settings(store: QSettings, settings: ExplorerSettings) -> None:
    store.beginGroup(_GROUP)
    for key, value in asdict(settings).items():
        if value is None or value == ():
            store.remove(key)
        else:
            store.setValue(key, list(value) if isinstance(value, tuple) else value)
    store.endGroup()
    store.sync()


def with_recent(recent: tuple[str, ...], path: str) -> tuple[str, ...]:
    """`path` first, no duplicates, at most RECENT_LIMIT entries."""
    return (path, *(p for p in recent if p != path))[:RECENT_LIMIT]
