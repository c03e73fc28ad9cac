"""The base of the core's named vocabularies (layer kinds, roles, verdicts, modes…).

Rule 1: every word is a `str` subclass, so comparisons with plain strings, dict lookups,
        argparse choices and `json.dumps` keep working exactly as with the old string constants.
Rule 2: `str()` and f-strings give the word itself ("swa"), never "LayerKind.SWA", on every
        Python from 3.10 (3.12 changed the default for mixed-in enums).
"""

from __future__ import annotations

from enum import Enum


class TextEnum(str, Enum):
    """A word of a fixed vocabulary that prints, formats and serialises as its value."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)
