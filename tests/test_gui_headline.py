"""The window's headline cards, the context tier strip and the one peak figure — checked against `fit --json`.

The window runs on a typed machine (2 GiB usable, no GPU, no CPU kernel features); `fit` is asked about the same
machine with the same flags, so every figure on screen is `fit`'s.
"""

from __future__ import annotations

import json

import pytest
from gguf_factory import ArchDesc
from gui_support import GIB, child, settle, window_on_typed_cpu
from PySide6.QtCore import Qt

from gguf_budget.core.explorer.ctx_tiers import rate_text
from gguf_budget.core.units import human_bytes
from gguf_budget.gui.cli import main

DESC = ArchDesc(name="strip-llama", n_layer=8, n_embd=1024, n_ff=2816, n_head=16, n_head_kv=4, n_vocab=16384,
                context_length=32768)
AVAILABLE = 8 * GIB
FLAGS = ["--host-available", str(AVAILABLE), "--no-gpu", "--cpu-features", "none", "--no-measure"]


@pytest.fixture
def window(qtbot, make_window, write_model):
    return window_on_typed_cpu(qtbot, make_window, write_model(DESC, "strip-llama.gguf"), AVAILABLE)


def fit_json(capsys, path, ctx: int | None) -> dict:
    asked = [] if ctx is None else ["--ctx", str(ctx)]
    assert main(["fit", str(path), *FLAGS, *asked, "--json"]) in (0, 3)
    return json.loads(capsys.readouterr().out)


def test_the_strip_shows_fit_at_each_tier(capsys, window):
    strip = child(window, "ctxTiers")
    assert strip.isVisible() and len(strip.buttons) >= 4
    for button in strip.buttons:
        ctx = int(button.property("ctx"))
        one = fit_json(capsys, window.model_path, ctx)
        peak = one["peak_memory"]["full"]
        tok_s = one["tok_s_estimate"]["tok_s"] if one["tok_s_estimate"] else None
        first, second = button.text().split("\n")
        assert first.endswith(f" · {human_bytes(peak)}")
        assert second == f"{one['gpu_layers']} L · {rate_text(tok_s)}"
        assert button.property("tier") == one["peak_memory"]["tier"]
        assert f"; peak RAM {human_bytes(peak)} once the context has filled" in button.toolTip()


def test_a_click_on_a_tier_sets_the_ctx_through_the_session(qtbot, window):
    strip = child(window, "ctxTiers")
    button = child(window, "ctxTier8192")
    assert not button.isChecked()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    settle(qtbot, window)
    assert window.session.state.ctx == 8192 and window.session.state.request().ctx == 8192
    assert [b.property("ctx") for b in strip.buttons if b.isChecked()] == [8192]
    assert child(window, "fullLoadLinePlain").text().startswith("Runs on the CPU alone, in RAM, at 8k context")


def test_the_peak_is_one_figure_in_the_panel_the_text_and_the_json(capsys, window):
    """llama-server's peak counts its prompt cache: the panel, `fit`'s text and its JSON give the same figure."""
    ctx = window.session.view.full_load.ctx
    d = fit_json(capsys, window.model_path, ctx)
    peak = d["peak_memory"]["full"]
    assert d["peak_rss_full"] == peak and peak > d["runtime_memory"]["peak_rss"]  # the cache the verdict counts
    assert main(["fit", str(window.model_path), *FLAGS, "--ctx", str(ctx)]) == 0
    text = capsys.readouterr().out
    row = next(line for line in text.splitlines() if line.startswith("Peak RSS"))
    assert row.split("≈ ", 1)[1].startswith(f"{human_bytes(peak)} once ")
    assert child(window, "peakRssFull").text().startswith(f"≈ {human_bytes(peak)} once ")


def test_the_cards_carry_the_tiers_in_their_colours_and_the_jargon_in_their_tooltips(window):
    view = window.session.view
    plan, load = child(window, "banner"), child(window, "fullLoadLine")
    assert child(window, "bannerTier").property("tier") == view.headline.plan.tier.value
    assert child(window, "fullLoadLineTier").property("tier") == view.headline.load.tier.value
    assert plan.text() == view.headline.text and load.text() == view.headline.full_load
    assert view.headline.text in plan.toolTip() and "Help ▸ Glossary: “Budget plan”" in plan.toolTip()
    assert "Help ▸ Glossary: “Full load”" in load.toolTip()
    assert child(window, "bannerTier").text().startswith(f"{view.headline.plan.tier.value.upper()} · Budget plan — ")
    assert "--ram-budget " in child(window, "bannerTier").text()
    assert child(window, "bannerPlain").text() == view.headline.plan.plain
