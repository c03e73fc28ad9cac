"""docs/llama-options.md names every llama.cpp option that changes memory, with where it is priced or why it is not."""

from __future__ import annotations

from pathlib import Path

from gguf_budget.core.llama_words.options import OPTIONS, Effect

DOC = Path(__file__).parents[1] / "docs" / "llama-options.md"


def test_every_priced_and_unpriced_option_has_a_row():
    rows = [line for line in DOC.read_text().splitlines() if line.startswith("| `")]
    for option in OPTIONS:
        if option.effect is Effect.IGNORED:
            continue
        row = next((r for r in rows if f"`{option.spellings[0]}`" in r.split("|")[1]), None)
        assert row is not None, option.spellings
        cells = [c.strip() for c in row.split("|")[1:-1]]
        assert cells[1].isdigit() and all(cells), row
        if option.effect is Effect.UNPRICED:
            assert cells[2] == option.detail


def test_the_page_is_the_generators():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_llama_options", DOC.parent / "make_llama_options.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert set(module.PRICED_IN) == {o.detail for o in OPTIONS if o.effect is Effect.PRICED}
