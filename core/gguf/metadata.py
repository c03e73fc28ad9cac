"""Typed reads of GGUF metadata: every value a fact is built from is checked before it is used.

Rule 1: an absent key reads as None. A key present with the wrong type is a one-line
        `GGUFFormatError` naming the key, what it holds and what was expected, at the byte
        offset of the key — llama.cpp likewise refuses a key "of wrong type".
Rule 2: an integer is a Python int that is not a bool (GGUF's BOOL reads as bool), and a count
        or size is never negative. A per-layer value is one such integer, or an array of
        exactly n_layer of them.
Rule 3: a string is a kept `str`; one too long to keep (`SkippedString`) is the wrong type for
        anything but display text, which then reads as None.
Rule 4: an array's element type is checked too: a token list holds strings, a sliding-window
        pattern booleans.
"""

from __future__ import annotations

from typing import Any

from gguf_budget.core.gguf.constants import GGUFValueType

from gguf_budget.core.errors import GGUFFormatError
from gguf_budget.core.gguf.header import GGUFHeader, SkippedArray, SkippedString
from gguf_budget.core.safe_text import safe_text

KEY_LIMIT = 200
"""A key quoted in a message is escaped (it may embed a hostile architecture) and cut here."""


def describe(value: Any) -> str:
    """What a metadata value is, in words, for an error message."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return f"the number {value}"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return f"a string ({len(value)} characters)"
    if isinstance(value, SkippedString):
        return f"a string ({value.length} bytes)"
    if isinstance(value, SkippedArray):
        return f"an array of {value.count} {value.element_type.name.lower()} values"
    return f"an array of {len(value)} values"


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


class Metadata:
    """One header's metadata, read through typed accessors that refuse what does not fit."""

    def __init__(self, header: GGUFHeader):
        self.values = header.metadata
        self.offsets = header.key_offsets
        self.path = header.path

    def error(self, key: str, message: str) -> GGUFFormatError:
        """A `GGUFFormatError` about `key`, at the key's byte offset."""
        return GGUFFormatError(f"{safe_text(key, KEY_LIMIT)} {message}", self.offsets.get(key), self.path)

    def present(self, key: str) -> bool:
        return key in self.values

    def count(self, key: str) -> int | None:
        """A non-negative integer, or None when absent."""
        value = self.values.get(key)
        if value is None or _is_count(value):
            return value
        raise self.error(key, f"must be a non-negative integer, not {describe(value)}")

    def counts_per_layer(self, key: str, n_layer: int) -> tuple[int, ...] | None:
        """One non-negative integer for every layer (given once, or as an array of n_layer)."""
        value = self.values.get(key)
        if value is None:
            return None
        if _is_count(value):
            return (value,) * n_layer
        length = value.count if isinstance(value, SkippedArray) else len(value) if isinstance(value, tuple) else None
        if length is not None and length != n_layer:
            raise self.error(key, f"has {length} entries for {n_layer} layers")
        if isinstance(value, tuple) and all(_is_count(v) for v in value):
            return value
        raise self.error(key, f"must be a non-negative integer or an array of {n_layer} of them, "
                              f"not {describe(value)}")

    def string(self, key: str, max_chars: int | None = None) -> str | None:
        """A kept string of at most `max_chars` characters, or None when absent."""
        value = self.values.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.error(key, f"must be a string, not {describe(value)}")
        if max_chars is not None and len(value) > max_chars:
            raise self.error(key, f"is {len(value)} characters long (at most {max_chars})")
        return value

    def display_string(self, key: str) -> str | None:
        """A string shown to people: one too long to keep reads as None; another type is an error."""
        if isinstance(self.values.get(key), SkippedString):
            return None
        return self.string(key)

    def string_array_length(self, key: str) -> int | None:
        """The length of an array of strings (kept or skipped), or None when absent."""
        value = self.values.get(key)
        if value is None:
            return None
        if isinstance(value, SkippedArray) and value.element_type is GGUFValueType.STRING:
            return value.count
        if isinstance(value, tuple) and all(isinstance(v, (str, SkippedString)) for v in value):
            return len(value)
        raise self.error(key, f"must be an array of strings, not {describe(value)}")

    def flags_or_count(self, key: str) -> tuple[bool, ...] | int | None:
        """An array of booleans, or one non-negative integer (a period), or None when absent."""
        value = self.values.get(key)
        if value is None or _is_count(value):
            return value
        if isinstance(value, tuple) and all(isinstance(v, bool) for v in value):
            return value
        raise self.error(key, f"must be an array of booleans or a non-negative integer, not {describe(value)}")
