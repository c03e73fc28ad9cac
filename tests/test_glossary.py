"""Plain words: one glossary for docs/glossary.md and Help ▸ Glossary; no "seed" or design-document references
in what a reader of the repository sees (README, `--help` texts, docs/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gguf_budget.core.views.glossary import GLOSSARY, glossary_markdown, matching
from gguf_budget.core.views.ledger_names import LINE_NAMES
from gguf_budget.core.views.run_it import FORCE_FLAG
from gguf_budget.gui.cli import main

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY_PAGE = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
OUTSIDE = re.compile(r"\bseeds?\b|DESIGN(\.md| §)|\.\./shared|/work/shared", re.IGNORECASE)
CITES_OUTSIDE = re.compile(r"\bthe seed\b|\bseed(?:'s| 00\d)|DESIGN(\.md| §)|\.\./shared|/work/shared")


def test_the_glossary_page_is_the_glossary_the_window_shows():
    assert glossary_markdown() in GLOSSARY_PAGE, "paste core.views.glossary.glossary_markdown() into docs/glossary.md"


def test_each_term_once_alphabetically_and_each_ledger_line_in_its_own_words():
    terms = [t.term.casefold() for t in GLOSSARY]
    assert terms == sorted(terms) and len(set(terms)) == len(terms)
    definitions = {t.term: t.definition for t in GLOSSARY}
    assert all(words.tooltip in definitions[words.name] for words in LINE_NAMES.values())


def test_the_headline_and_its_run_it_line_are_defined():
    """The three parts of the headline are terms, and "Run it" names the flags the line shows."""
    definitions = {t.term: t.definition for t in GLOSSARY}
    assert {"Budget plan", "Full load", "Run it"} <= definitions.keys()
    assert all(flag in definitions["Run it"] for flag in ("--ram-budget", "--ctx", FORCE_FLAG, "llama-server"))


def test_matching_finds_terms_by_name_or_definition():
    assert [t.term for t in matching("weight ceiling")] == ["Weight ceiling"]
    assert {"Budget plan", "Ledger"} <= {t.term for t in matching("LEDGER")}
    assert matching("  ") == GLOSSARY and matching("zzz-not-a-term") == ()
    assert glossary_markdown(()) == "No term matches.\n"


def test_the_readme_and_the_docs_cite_nothing_outside_the_repository():
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "packaging").glob("*.md"))]:
        hits = [line for line in path.read_text(encoding="utf-8").splitlines() if OUTSIDE.search(line)]
        assert not hits, f"{path.name}: {hits}"


def test_no_source_file_cites_the_seed_or_the_design_document():
    """Module headers and comments say which rule they mean, not where an outside document put it."""
    sources = [p for folder in ("core", "gui", "benchmarks", "packaging", "docs", "tests")
               for p in (ROOT / folder).rglob("*.py") if p.name != Path(__file__).name]
    hits = [f"{p.relative_to(ROOT)}:{n}" for p in sources
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if CITES_OUTSIDE.search(line)]
    assert not hits


@pytest.mark.parametrize("command", ["plan", "sweep", "fit", "quants", "hw", "inspect", "evidence", "measure"])
def test_no_help_text_says_seed(capsys, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert not OUTSIDE.search(capsys.readouterr().out)
