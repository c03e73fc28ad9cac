"""Does a record read back from a kept file hold what its annotations say?

A record rebuilt from a file (the library index) was filled without its constructor, so a field
typed `int | None` may hold a float NaN, a string or another record; shown or priced, it becomes a
traceback or `NaN` in `--json`. `holds(record)` checks every field against its annotation, so a
reader can treat a record that does not hold as absent.

Rule 1: an `int` is an int that is not a bool; a `float` is a finite int or float; `str`, `bytes`
        and `bool` are themselves; `None` is None; a union holds if one of its members does.
Rule 2: `tuple[X, ...]` holds when every item holds X, `tuple[X, Y]` item by item; a dataclass
        type holds when the value is one of it whose fields hold.
Rule 3: a type variable (a record generic in what it keeps) holds a value that is None, a number
        or a string as Rule 1 says, or a dataclass whose fields hold; anything else does not hold.
"""

from __future__ import annotations

import math
import types
import typing
from dataclasses import fields, is_dataclass
from typing import Any


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _plain(value: Any) -> bool:
    """Rule 3."""
    if value is None or isinstance(value, (str, bool)):
        return True
    if isinstance(value, (int, float)):
        return holds_type(value, float)
    return is_dataclass(value) and not isinstance(value, type) and holds(value)


def holds_type(value: Any, hint: Any) -> bool:
    """Rules 1–3 for one value and one annotation."""
    if isinstance(hint, typing.TypeVar) or hint is Any:
        return _plain(value)
    if hint is None or hint is type(None):
        return value is None
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        return any(holds_type(value, member) for member in typing.get_args(hint))
    if origin is tuple:
        return _holds_tuple(value, typing.get_args(hint))
    if isinstance(hint, type) and is_dataclass(hint):
        return isinstance(value, hint) and holds(value)
    return isinstance(hint, type) and type(value) is hint


def _holds_tuple(value: Any, args: tuple[Any, ...]) -> bool:
    if not isinstance(value, tuple):
        return False
    if len(args) == 2 and args[1] is Ellipsis:
        return all(holds_type(item, args[0]) for item in value)
    return len(value) == len(args) and all(holds_type(item, hint) for item, hint in zip(value, args, strict=True))


def holds(record: Any) -> bool:
    """Rule 2: every field of the dataclass instance `record` holds its annotation."""
    hints = _hints(type(record))
    return all(holds_type(getattr(record, f.name, None), hints[f.name]) for f in fields(record))
