"""The import graph of gguf_budget: no cycles; the add-ons never import the window; computing never imports presenting.

grimp (which import-linter installs) builds the graph from the source, TYPE_CHECKING imports
and imports inside functions included. `gguf_budget` is a namespace package (no
`__init__.py`), so the graph is built from its two packages, which together are all of it.
"""

from __future__ import annotations

import grimp
import pytest

PACKAGES = ("gguf_budget.core", "gguf_budget.gui")
COMPUTING = ("gguf_budget.core.gguf", "gguf_budget.core.model", "gguf_budget.core.plan", "gguf_budget.core.fit",
             "gguf_budget.core.machine", "gguf_budget.core.measure")
PRESENTING = "gguf_budget.core.views"


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def import_cycles(graph: grimp.ImportGraph) -> set[tuple[str, ...]]:
    """For each import a → b that b leads back from, the shortest cycle through it (a, b, …, a)."""
    cycles = set()
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back:
                cycles.add((importer, *back))
    return cycles


def test_the_graph_holds_every_module(graph):
    assert {"gguf_budget.core.plan.search", "gguf_budget.gui.qt.main_window", "gguf_budget.gui.qt.app",
            "gguf_budget.gui.qt.whatif.wiring", "gguf_budget.gui.cli.launch"} <= graph.modules
    assert len(graph.modules) > 80


def test_there_are_no_import_cycles(graph):
    assert import_cycles(graph) == set()


def test_a_cycle_would_be_found():
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    graph.add_import(importer="gguf_budget.core.model.spec", imported="gguf_budget.core.plan.search")
    found = import_cycles(graph)
    assert ("gguf_budget.core.model.spec", "gguf_budget.core.plan.search", "gguf_budget.core.model.spec") in found


@pytest.mark.parametrize("add_on, installer", [("whatif", "wiring"), ("evidence", "evidence_link")])
def test_the_add_ons_never_import_the_window(graph, add_on, installer):
    assert not graph.chain_exists(importer=f"gguf_budget.gui.qt.{add_on}", imported="gguf_budget.gui.qt.main_window",
                                  as_packages=True)
    assert graph.direct_import_exists(importer="gguf_budget.gui.qt.addons",
                                      imported=f"gguf_budget.gui.qt.{add_on}.{installer}")


@pytest.mark.parametrize("computing", COMPUTING)
def test_computing_never_imports_presenting(graph, computing):
    assert graph.find_shortest_chains(importer=computing, imported=PRESENTING, as_packages=True) == set()
