"""Results kept per model object: the caches a slider tick leans on, keyed by which model, not by what it holds.

Rule 1: a model is its own object: two `ModelSpec`s read from the same file are equal but not the
        same. `functools.lru_cache` keyed by the spec hashed every field of it on each call and,
        once a model was opened again, compared the new spec with the kept one field by field on
        every lookup (a reopened 70B's ctx tick spent 13 ms in 69,000 `FrozenMap.__eq__`s against
        2 when first opened). Here the key is the object's identity: one pointer, one comparison.
Rule 2: an entry holds its model, so the identity it is kept under cannot be reused while it is
        kept; the newest `maxsize` entries are kept, as `lru_cache` keeps them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, wraps
from typing import Any, Concatenate, ParamSpec, TypeVar

from gguf_budget.core.model.spec import ModelSpec

P = ParamSpec("P")
R = TypeVar("R")


class _Same:
    """Rule 1: a key equal only to itself's model."""

    __slots__ = ("model",)

    def __init__(self, model: ModelSpec) -> None:
        self.model = model

    def __hash__(self) -> int:
        return id(self.model)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.model is self.model


def per_model(maxsize: int) -> Callable[[Callable[Concatenate[ModelSpec, P], R]], Callable[Concatenate[ModelSpec, P], R]]:
    """Rules 1–2: `lru_cache(maxsize)` for a function whose first argument is the model."""
    def wrap(fn: Callable[Concatenate[ModelSpec, P], R]) -> Callable[Concatenate[ModelSpec, P], R]:
        @lru_cache(maxsize=maxsize)
        def kept(key: _Same, *args: Any, **kwargs: Any) -> R:
            return fn(key.model, *args, **kwargs)

        @wraps(fn)
        def call(model: ModelSpec, /, *args: P.args, **kwargs: P.kwargs) -> R:
            cached: Callable[..., R] = kept  # typed Hashable by lru_cache, which P.kwargs cannot say
            return cached(_Same(model), *args, **kwargs)

        return call
    return wrap
