"""A read-only, hashable mapping for the core's frozen records.

Rule 1: a frozen record holds no dict or list: its mappings are `FrozenMap`s and its sequences
        tuples, so `spec.layer_role_bytes[0]["attention"] = 0` raises TypeError instead of
        leaving the record inconsistent, and a record hashes like any frozen dataclass.
Rule 2: a FrozenMap equals any mapping with the same items (a plain dict included) and hashes
        by its items, so its values must be hashable (numbers, strings, tuples, frozen records).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeVar

K = TypeVar("K")
V_co = TypeVar("V_co", covariant=True)


class FrozenMap(Mapping[K, V_co]):
    """A dict's items behind a read-only face: no item or attribute can be set or deleted."""

    __slots__ = ("_items", "_hash")
    _items: dict[K, V_co]
    _hash: int | None

    def __init__(self, items: Mapping[K, V_co] | Iterable[tuple[K, V_co]] = ()) -> None:
        object.__setattr__(self, "_items", dict(items))
        object.__setattr__(self, "_hash", None)

    def __getitem__(self, key: K) -> V_co:
        return self._items[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and self._items == dict(other.items())

    def __hash__(self) -> int:
        cached = self._hash
        if cached is None:
            cached = hash(frozenset(self._items.items()))
            object.__setattr__(self, "_hash", cached)
        return cached

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a FrozenMap is read-only (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a FrozenMap is read-only (cannot delete {name!r})")

    def __reduce__(self) -> tuple[type[FrozenMap[K, V_co]], tuple[dict[K, V_co]]]:
        return (type(self), (self._items,))

    def __repr__(self) -> str:
        return f"FrozenMap({self._items!r})"
