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
from typing import Any, Callable


Check = Callable[[Any], bool]
_CHECKS: dict[Any, Check] = {}


def _plain(value: Any) -> bool:
    """Rule 3."""
    if value is None or isinstance(value, (str, bool)):
        return True
    if isinstance(value, (int, float)):
        return _is_float(value)
    return is_dataclass(value) and not isinstance(value, type) and holds(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_float(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check(hint: Any) -> Check:
    """Rules 1–3 for one annotation, as a predicate made once per annotation (a library index checks 50,000 records)."""
    found = _CHECKS.get(hint)
    if found is None:
        found = _CHECKS[hint] = _made(hint)
    return found


def _made(hint: Any) -> Check:
    if isinstance(hint, typing.TypeVar) or hint is Any:
        return _plain
    if hint is None or hint is type(None):
        return lambda value: value is None
    if hint is int:
        return _is_int
    if hint is float:
        return _is_float
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        members = tuple(_check(member) for member in typing.get_args(hint))
        return lambda value: any(member(value) for member in members)
    if origin is tuple:
        return _tuple_check(typing.get_args(hint))
    if isinstance(hint, type) and is_dataclass(hint):
        return lambda value: isinstance(value, hint) and holds(value)
    if isinstance(hint, type):
        return lambda value: type(value) is hint
    return lambda value: False


def _tuple_check(args: tuple[Any, ...]) -> Check:
    if len(args) == 2 and args[1] is Ellipsis:
        item = _check(args[0])
        return lambda value: isinstance(value, tuple) and all(item(v) for v in value)
    items = tuple(_check(a) for a in args)
    return lambda value: (isinstance(value, tuple) and len(value) == len(items)
                          and all(check(v) for check, v in zip(items, value, strict=True)))


def holds_type(value: Any, hint: Any) -> bool:
    """Rules 1–3 for one value and one annotation."""
    return _check(hint)(value)


_FIELDS: dict[type, tuple[tuple[str, Check], ...]] = {}


def holds(record: Any) -> bool:
    """Rule 2: every field of the dataclass instance `record` holds its annotation."""
    cls = type(record)
    checks = _FIELDS.get(cls)
    if checks is None:
        hints = typing.get_type_hints(cls)
        checks = _FIELDS[cls] = tuple((f.name, _check(hints[f.name])) for f in fields(record))
    return all(check(getattr(record, name, None)) for name, check in checks)
