"""docs/architecture.md's picture is the one the code makes now (docs/make_architecture.py), and the page
names only modules that exist."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"


def _maker():
    spec = importlib.util.spec_from_file_location("make_architecture", ROOT / "docs" / "make_architecture.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_picture_is_made_from_the_code_as_it_is():
    page = DOC.read_text(encoding="utf-8")
    assert _maker().written(page) == page, "run docs/make_architecture.py"


def test_the_picture_moves_when_an_import_does(monkeypatch):
    """The check above can fail: a core package that imported the GUI would show in its row."""
    maker = _maker()
    real = maker.imports

    def moved():
        graph = real()
        graph["core.model"].add("core.explorer")
        return graph

    monkeypatch.setattr(maker, "imports", moved)
    page = DOC.read_text(encoding="utf-8")
    assert maker.written(page) != page


def test_every_module_the_page_names_exists():
    named = set(re.findall(r"`((?:core|gui|docs|tests)/[\w/]+\.py)`", DOC.read_text(encoding="utf-8")))
    assert named and sorted(p for p in named if not (ROOT / p).is_file()) == []


def test_the_readme_links_the_page():
    assert "docs/architecture.md" in (ROOT / "README.md").read_text(encoding="utf-8")
