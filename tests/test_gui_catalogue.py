"""File ▸ Catalogue lists every bundled skeleton, labelled as one, and opens the chosen file."""

from __future__ import annotations

from pathlib import Path

import pytest

from gguf_budget.core import load_model
from gguf_budget.core.model.catalogue import CATALOGUE, SKELETON_LABEL, catalogue_path
from gguf_budget.gui.qt.menus.catalogue_menu import CatalogueMenu


@pytest.fixture
def menu(qtbot):
    opened: list[str] = []
    m = CatalogueMenu(opened.append)
    qtbot.addWidget(m)
    m.opened = opened
    return m


def test_one_labelled_action_per_entry_in_order(menu):
    actions = menu.actions()
    assert [a.data() for a in actions] == [e.name for e in CATALOGUE]
    for action, entry in zip(actions, CATALOGUE, strict=True):
        assert action.text().startswith(f"{entry.title} {entry.quant} — ")
        assert action.text().endswith("(skeleton)")
        assert action.toolTip().startswith(SKELETON_LABEL) and entry.published_source in action.toolTip()


@pytest.mark.parametrize("index", range(len(CATALOGUE)))
def test_choosing_an_entry_opens_its_skeleton(menu, index):
    menu.actions()[index].trigger()
    assert menu.opened == [str(catalogue_path(CATALOGUE[index]))]
    spec = load_model(menu.opened[0])
    assert spec.header_only and Path(spec.path).name == CATALOGUE[index].file
