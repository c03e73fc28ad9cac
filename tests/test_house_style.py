"""House style, checked: every enum is a word of the house vocabulary, and a record of more than six
fields is built by keyword only (a positional call of seventeen arguments reads as nothing)."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pkgutil
from pathlib import Path

import gguf_budget.core as core
from gguf_budget.core.vocab import TextEnum

ROOT = Path(__file__).resolve().parents[1]
ENUM_BASES = {"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"}


def _enum_classes_off_the_house_base() -> list[str]:
    found = []
    for path in sorted([*(ROOT / "core").rglob("*.py"), *(ROOT / "gui").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
                         for b in node.bases}
                if bases & ENUM_BASES and not (path == ROOT / "core" / "vocab.py" and node.name == "TextEnum"):
                    found.append(f"{path.relative_to(ROOT)}::{node.name}")
    return found


def test_every_enum_of_the_app_is_on_the_house_base():
    assert _enum_classes_off_the_house_base() == []


def _core_classes() -> list[type]:
    classes = []
    for info in pkgutil.walk_packages(core.__path__, "gguf_budget.core."):
        module = importlib.import_module(info.name)
        classes += [c for c in vars(module).values() if inspect.isclass(c) and c.__module__ == module.__name__]
    return classes


def test_every_enum_of_the_core_is_a_text_enum_at_run_time():
    import enum

    loose = [f"{c.__module__}.{c.__qualname__}" for c in _core_classes()
             if issubclass(c, enum.Enum) and not issubclass(c, TextEnum)]
    assert loose == []


def test_every_frozen_record_of_more_than_six_fields_is_keyword_only():
    positional = []
    for c in _core_classes():
        if not dataclasses.is_dataclass(c) or not c.__dataclass_params__.frozen:
            continue
        fields = [f for f in dataclasses.fields(c) if f.init]
        if len(fields) > 6 and not all(f.kw_only for f in fields):
            positional.append(f"{c.__module__}.{c.__qualname__} ({len(fields)} fields)")
    assert positional == []
