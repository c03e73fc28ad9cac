"""Give a Qt object its object name inline, where it is built.

PySide6 accepts every Qt property as a constructor keyword (`QLabel(self, objectName="x")`),
but its type stubs list only a class's own properties, so mypy rejects the inherited ones.
`named(QLabel(self), "x")` keeps the name beside the construction and the call checked.
"""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtCore import QObject

Q = TypeVar("Q", bound=QObject)


def named(obj: Q, name: str) -> Q:
    """`obj`, with `name` as its object name (tests and stylesheets find widgets by it)."""
    obj.setObjectName(name)
    return obj
