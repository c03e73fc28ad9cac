"""The window's small parts on their own: axis ticks, ctx snapping, settings, colours, banner, strip, chart."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, strategies as st
from PySide6.QtCore import QSettings
from PySide6.QtGui import QColor, QPalette

import gguf_budget.gui.qt
from gguf_budget.core import LEDGER_LINES
from gguf_budget.core.views.plan_view import BannerState
from gguf_budget.gui.qt.byte_axis import ByteAxis
from gguf_budget.core.units import AXIS_HEADROOM, axis_top, nice_step
from gguf_budget.core.explorer.budget_span import Span
from gguf_budget.core.plan.types import CTX_STEP as STEP
from gguf_budget.gui.qt.plan.context_control import snap
from gguf_budget.gui.qt.plan.layer_strip import LayerStrip
from gguf_budget.gui.qt.plan.ledger_chart import LedgerChart
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.explorer.session import ModelChoice, ModelMemory
from gguf_budget.gui.qt.settings import (
    RECENT_LIMIT, ExplorerSettings, load_memory, load_settings, save_settings, with_recent,
)
from gguf_budget.gui.qt.theme import (
    BANNER_COLOURS, DARK_BACKGROUND, ERROR_COLOUR, LEDGER_COLOURS, LIGHT_BACKGROUND, MEMORY_COLOURS, MIN_CONTRAST,
    TIER_COLOURS, contrast,
)

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30


@pytest.mark.parametrize("span, step, power", [
    (1000, 200, 0), (5 * KIB, 1 * KIB, 1), (300 * MIB, 100 * MIB, 2), (110 * MIB, 50 * MIB, 2),
    (3.3 * GIB, 1 * GIB, 3), (90 * GIB, 20 * GIB, 3), (1.5 * MIB, 0.5 * MIB, 2),
])
def test_axis_steps_are_round_binary_sizes(span, step, power):
    assert nice_step(span) == (step, power)


def test_axis_labels_use_the_span_unit(qtbot):
    axis = ByteAxis()
    [(step, values)] = axis.tickValues(0, 3.3 * GIB, 300)
    assert step == GIB and values == [0, GIB, 2 * GIB, 3 * GIB]
    assert axis.tickStrings(values, 1, step) == ["0 GiB", "1 GiB", "2 GiB", "3 GiB"]


@pytest.mark.parametrize("value, maximum, snapped", [
    (1000, 4096, 1024), (1, 4096, 128), (191, 4096, 128), (192, 4096, 256), (4096, 4096, 4096),
    (3990, 4000, 4000), (3900, 4000, 3840), (9999, 4000, 4000), (50, 100, 100),
])
def test_ctx_snaps_to_steps_of_128_or_the_models_own_length(value, maximum, snapped):
    assert snap(value, Span(STEP, maximum, STEP)) == snapped


@given(value=st.integers(1, 1 << 20), maximum=st.integers(STEP, 1 << 20))
def test_snapped_ctx_is_a_step_multiple_in_range(value, maximum):
    s = snap(value, Span(STEP, maximum, STEP))
    assert STEP <= s <= maximum or s == maximum
    assert s % STEP == 0 or s == maximum
    assert abs(s - min(value, maximum)) <= STEP


def test_settings_round_trip(tmp_path):
    store = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    chosen = ExplorerSettings(n_buffers=1, head_mode="stream", kv_type="q4_0", force=True, recent=("/a.gguf",))
    memory = ModelMemory({"a" * 64: ModelChoice(Budget.of(3 * GIB), 2048, None),
                          "b" * 64: ModelChoice(Budget.unlimited(), None, 8192)})
    save_settings(store, chosen, memory)
    again = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    assert load_settings(again) == chosen and load_memory(again).rows() == memory.rows()
    save_settings(store, ExplorerSettings(), ModelMemory())
    assert load_settings(store) == ExplorerSettings() and load_memory(store).rows() == {}


def test_recent_files_are_unique_latest_first_and_bounded():
    recent: tuple[str, ...] = ()
    for i in range(RECENT_LIMIT + 3):
        recent = with_recent(recent, f"/m{i}.gguf")
    recent = with_recent(recent, "/m5.gguf")
    assert recent[0] == "/m5.gguf" and len(recent) == RECENT_LIMIT and len(set(recent)) == RECENT_LIMIT


@pytest.mark.parametrize("name, colour", sorted({**LEDGER_COLOURS, **MEMORY_COLOURS, "error": ERROR_COLOUR}.items()))
def test_chart_colours_read_on_light_and_dark_backgrounds(name, colour):
    assert contrast(colour, LIGHT_BACKGROUND) >= MIN_CONTRAST
    assert contrast(colour, DARK_BACKGROUND) >= MIN_CONTRAST


@pytest.mark.parametrize("state", list(BannerState))
def test_every_banner_state_has_white_text_on_a_dark_enough_colour(state):
    assert contrast(BANNER_COLOURS[state], "#FFFFFF") >= 4.5


@pytest.mark.parametrize("tier", ["fits", "tight", "won't", "unknown"])
def test_every_tier_has_white_text_on_a_dark_enough_colour(tier):
    assert contrast(TIER_COLOURS[tier], "#FFFFFF") >= 4.5


def test_colours_are_chosen_in_the_theme_only():
    """Rule of gui/qt/theme.py: no other Qt module writes a colour of its own."""
    qt = Path(gguf_budget.gui.qt.__file__).parent
    own = {str(p.relative_to(qt)): re.findall(r"#[0-9A-Fa-f]{6}\b", p.read_text(encoding="utf-8"))
           for p in qt.rglob("*.py") if p.name != "theme.py"}
    assert {name: found for name, found in own.items() if found} == {}


def test_layer_strip_cells(qtbot):
    strip = LayerStrip()
    qtbot.addWidget(strip)
    strip.set_layers((10, 20, 30, 40), 3)
    assert strip.cells() == (True, True, True, False)
    assert strip.accessibleDescription() == "3 of 4 layers pinned"
    strip.set_layers((), 0)
    assert strip.cells() == ()


def test_the_chart_follows_a_dark_palette(qtbot):
    chart = LedgerChart(LEDGER_LINES)
    qtbot.addWidget(chart)
    dark = QPalette()
    dark.setColor(QPalette.ColorRole.Base, QColor(DARK_BACKGROUND))
    dark.setColor(QPalette.ColorRole.WindowText, QColor("#E8E8E8"))
    chart.setPalette(dark)
    chart.resize(400, 300)
    chart.show_ledgers([("This plan", (("kv", 1 << 30),))], 2 << 30, None)
    image = chart.grab().toImage()
    assert image.pixelColor(2, 2).name().upper() == DARK_BACKGROUND
    budget_y = round(chart.to_pixel(0, 2 << 30).y())
    line = {image.pixelColor(chart.plot_rect().center().toPoint().x(), y).name().upper() for y in (budget_y - 1, budget_y)}
    assert "#E8E8E8" in line  # the budget line is drawn in the palette's text colour


@given(tallest=st.floats(1, 1 << 50))
def test_the_axis_top_is_a_tick_just_above_the_tallest_value(tallest):
    top = axis_top(tallest)
    step, _ = nice_step(top)
    assert tallest * (1 + AXIS_HEADROOM) <= top <= 2 * tallest * (1 + AXIS_HEADROOM)
    assert top / step == pytest.approx(round(top / step))


def test_dragging_the_budget_rescales_the_axis_only_when_it_crosses_a_tick():
    budgets = range(40 * GIB, 140 * GIB, 256 * MIB)
    tops = [axis_top(b) for b in budgets]
    assert len(set(tops)) <= 12 < len(tops) // 10
    assert all(b < t for b, t in zip(budgets, tops, strict=True))
