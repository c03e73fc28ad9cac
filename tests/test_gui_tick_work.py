"""A slider tick redraws what changed and nothing else (issue: the tick within one 60 Hz frame): an elided label
asks for no new layout, nor does a boxed row (`row_box`) whose line count holds (one that wraps anew grows, shows
and hides with its label), and the llama-server knobs are not touched by a state whose server did not
change — a spin box set to its own value still repaints, and a tick used to repaint every knob. A label a tick
gives a new text is laid out as a plain label (a selectable one goes through a text document, several times the
cost), and becomes selectable when the mouse comes to it. The ledger chart paints its axes again only when they
change: a tick that moves the bars under the same axis draws the bars and lines alone, the same pixels as the
whole drawing the exports make. The context tier strip keeps its buttons when the count of tiers changes, and a
button's new text lays out the strip's own row, not the window."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
import shiboken6
from gui_support import GIB, MIB, child, open_model, settle
from PySide6.QtCore import QEvent, QObject, QPoint, Qt
from PySide6.QtGui import QColor, QFontMetrics, QImage, QPainter, QPalette, QRegion
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLabel, QPlainTextEdit, QSlider, QVBoxLayout, QWidget

from gguf_budget.core.explorer.ctx_tiers import TierCell
from gguf_budget.core.plan.ledger import LEDGER_LINES
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.server_report import SessionChart
from gguf_budget.gui.qt.elided_label import ElidedLabel
from gguf_budget.gui.qt import main_window
from gguf_budget.gui.qt.layout import SideColumn
from gguf_budget.gui.qt.plan import run_it_line
from gguf_budget.gui.qt.plan.knobs import Knobs
from gguf_budget.gui.qt.plan.model_summary import ModelSummary
from gguf_budget.gui.qt.plan.layer_strip import LayerStrip
from gguf_budget.gui.qt.plan.ledger_chart import LedgerChart
from gguf_budget.gui.qt.plan.report_view import ReportView
from gguf_budget.gui.qt.plan.tier_strip import TierStrip
from gguf_budget.gui.qt.row_box import RowBox
from gguf_budget.gui.qt.selectable_label import SelectableLabel
from gguf_budget.gui.qt.server.session_chart import SessionChartView
from gguf_budget.gui.qt.text_view import read_only_view, replace_text
from gguf_budget.resources import demo_model_path


class Events(QObject):
    """Counts the events of some types each watched object receives."""

    def __init__(self, *types: QEvent.Type):
        super().__init__()
        self.types, self.seen = types, Counter()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() in self.types:
            self.seen[obj] += 1
        return False


def test_an_elided_label_set_to_a_text_asks_for_no_layout(qtbot):
    """Its own text or a new one: one line at the layout's width either way, so the line repaints and nothing
    is laid out."""
    parent = QWidget()
    qtbot.addWidget(parent)
    label = ElidedLabel(parent)
    QVBoxLayout(parent).addWidget(label)
    parent.show()
    label.setText("llama-server -m model.gguf -c 4096")
    QApplication.processEvents()
    events = Events(QEvent.Type.LayoutRequest)
    parent.installEventFilter(events)
    label.setText("llama-server -m model.gguf -c 4096")
    QApplication.processEvents()
    assert events.seen[parent] == 0
    label.setText("llama-server -m model.gguf -c 8192")
    QApplication.processEvents()
    assert events.seen[parent] == 0 and label.toolTip() == "llama-server -m model.gguf -c 8192"


def test_a_state_whose_server_did_not_change_repaints_no_server_knob(qtbot, make_window):
    """Every tick publishes a state and the window shows it to the knobs; the knobs' own state is the same."""
    window = make_window()
    window.show()
    open_model(qtbot, window, demo_model_path())
    ctx = window.findChild(QSlider, "ctxSlider")
    ctx.setValue(ctx.maximum())
    settle(qtbot, window)
    for _ in range(3):  # the tick's relayouts post more layouts and paints: all done before counting
        QApplication.processEvents()
    knobs = child(window, "serverKnobs")
    watched = [w for w in knobs.findChildren(QWidget) if w.isVisible()]
    assert len(watched) > 10
    events = Events(QEvent.Type.Paint)
    for widget in watched:
        widget.installEventFilter(events)
    for _ in range(3):
        knobs.show_state(window.session.state)
        QApplication.processEvents()
    assert sum(events.seen.values()) == 0, {w.objectName() or type(w).__name__: n for w, n in events.seen.items()}
    ctx.setValue(ctx.minimum())  # a tick changes ctx, not the server: the knobs stay as they are
    settle(qtbot, window)
    assert child(window, "parallelSpin").text() == "1"


def test_the_labels_a_ctx_tick_rewrites_are_laid_out_as_plain_labels(qtbot, make_window):
    """The side panel's rows and the banner: a new text each tick, and none of them through a text document."""
    window = make_window()
    window.show()
    open_model(qtbot, window, demo_model_path())
    ctx = window.findChild(QSlider, "ctxSlider")
    before = {label: label.text() for label in window.findChildren(QLabel)}
    ctx.setValue(ctx.minimum())
    settle(qtbot, window)
    rewritten = [label for label, text in before.items() if label.isVisible() and label.text() != text]
    assert {"bannerPlain", "kvLowerBound", "kvEngine", "peakRssFull"} <= {label.objectName() for label in rewritten}
    selectable = [label.objectName() for label in rewritten
                  if label.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse]
    assert selectable == []


def test_a_panel_label_is_selected_with_the_mouse_as_before(qtbot):
    parent = QWidget()
    qtbot.addWidget(parent)
    label = SelectableLabel("KV engine row", parent)
    QVBoxLayout(parent).addWidget(label)
    parent.show()
    qtbot.waitExposed(parent)
    assert not label.is_selectable()
    QTest.mouseMove(label, QPoint(5, 5))
    qtbot.waitUntil(label.is_selectable)
    end = QPoint(label.width() - 1, 5)
    QTest.mousePress(label, Qt.MouseButton.LeftButton, pos=QPoint(1, 5))
    QTest.mouseMove(label, end)
    QTest.mouseRelease(label, Qt.MouseButton.LeftButton, pos=end)
    assert label.selectedText() == "KV engine row"
    QApplication.sendEvent(label, QEvent(QEvent.Type.Leave))  # offscreen, a move after a click may not leave
    assert label.is_selectable() and label.selectedText() == "KV engine row"  # a selection made stays, to be copied
    label.setText("KV engine row, new ctx")
    assert not label.is_selectable() and label.selectedText() == ""


def _report(ctx: int, lines: int = 40) -> str:
    return "\n".join(f"row {i:2d}: ctx {ctx:>7,} tokens, KV {ctx * 320 >> 20:>6,} MiB of a long row" for i in range(lines))


def test_a_new_report_of_the_same_shape_repaints_no_scroll_bar(qtbot):
    """The text changed, so the view repaints; its scroll bars' range did not, so they do not."""
    report = ReportView()
    qtbot.addWidget(report)
    report.resize(300, 120)
    report.set_text(_report(4096))
    report.show()
    qtbot.waitExposed(report)
    view = report.findChild(QPlainTextEdit, "reportView")
    bars = (view.horizontalScrollBar(), view.verticalScrollBar())
    assert all(bar.isVisible() for bar in bars)
    qtbot.wait(50)  # the first paints done
    events = Events(QEvent.Type.Paint)
    for watched in (*bars, view.viewport()):
        watched.installEventFilter(events)
    report.set_text(_report(8192))
    QApplication.processEvents()
    assert report.text() == _report(8192)
    assert events.seen[view.viewport()] >= 1 and [events.seen[bar] for bar in bars] == [0, 0]


def test_a_new_report_edits_and_repaints_only_the_lines_that_changed(qtbot):
    """text_view Rule 2: a tick that changes one row's numbers edits that row alone, and the view repaints the
    rows it changed, not the whole viewport (the old code replaced and repainted every row)."""
    before = _report(4096, 20)
    rows = before.split("\n")
    after = "\n".join([*rows[:5], rows[5].replace("4,096", "8,192"), *rows[6:]])
    report = ReportView()
    qtbot.addWidget(report)
    report.resize(400, 300)
    report.set_text(before)
    report.show()
    qtbot.waitExposed(report)
    qtbot.wait(50)
    view = report.findChild(QPlainTextEdit, "reportView")
    edits = []
    view.document().contentsChange.connect(lambda at, removed, added: edits.append((at, removed, added)))
    painted = Painted()
    view.viewport().installEventFilter(painted)
    report.set_text(after)
    QApplication.processEvents()
    assert report.text() == after
    assert len(edits) == 1 and edits[0][1] < 20 and edits[0][2] < 20
    assert 0 < painted.height < view.viewport().height() // 2


class Painted(QObject):
    """The height of the rows a widget was repainted over."""

    height = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Paint:
            self.height += event.region().boundingRect().height()
        return False


@pytest.mark.parametrize("text", ["a 😀 b\nc", "😀😀\nline two 😀", "x\u2029y", "", "\n\n"])
def test_a_text_of_wide_or_odd_characters_is_replaced_exactly(qtbot, text):
    view = read_only_view(QPlainTextEdit())
    qtbot.addWidget(view)
    for first in ("a 😀 c\nc", "", "😀\nline two"):
        view.setPlainText(first)
        replace_text(view, text)
        plain = QPlainTextEdit()
        plain.setPlainText(text)
        assert view.toPlainText() == plain.toPlainText()


@pytest.mark.parametrize("lines", [40, 3, 80])
def test_a_replaced_text_shows_what_set_plain_text_shows(qtbot, lines):
    """Side by side with `setPlainText` after the person scrolled to the end: the same text, at its start."""
    views = [QPlainTextEdit(), read_only_view(QPlainTextEdit())]
    for view in views:
        qtbot.addWidget(view)
        view.setReadOnly(True)
        view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        view.resize(300, 120)
        view.setPlainText(_report(4096))
        view.show()
        qtbot.waitExposed(view)
        for bar in (view.horizontalScrollBar(), view.verticalScrollBar()):
            bar.setValue(bar.maximum())
    old, new = views
    old.setPlainText(_report(8192, lines))
    replace_text(new, _report(8192, lines))
    QApplication.processEvents()

    def shown(view: QPlainTextEdit) -> tuple[object, ...]:
        return (view.toPlainText(), view.horizontalScrollBar().value(), view.verticalScrollBar().value(),
                view.verticalScrollBar().maximum(), view.textCursor().position(), view.textCursor().hasSelection())

    assert shown(new) == shown(old)
    assert new.viewport().grab().toImage() == old.viewport().grab().toImage()
    assert not new.document().isUndoAvailable()


def test_a_side_column_gone_after_a_relayout_raises_nothing(qtbot):
    """A relayout fits the column to its contents as the request arrives; a window closed right after (a test's, or
    a dialog's) leaves nothing to run on a deleted column."""
    parent = QWidget()
    contents = QWidget()
    QVBoxLayout(contents).addWidget(QLabel("a row\nof two lines", contents))
    column = SideColumn(contents, parent)
    QApplication.sendEvent(contents, QEvent(QEvent.Type.LayoutRequest))
    parent.deleteLater()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QApplication.processEvents()  # pytest-qt fails the test on an exception raised in the event loop
    assert not shiboken6.isValid(column)


def test_a_side_column_fits_a_row_that_grew_or_shrank_in_the_round_that_lays_it_out(qtbot):
    """SideColumn: the contents' new height is set as their layout request arrives, so a row that grew or shrank a
    line costs the column one layout at the right height. Set a turn later, the rows were laid out first at the old
    height (squeezed, or with a gap under them) and then again, each a paint of the column, the second in the next
    tick."""
    parent = QWidget()
    qtbot.addWidget(parent)
    contents = QWidget()
    rows = QVBoxLayout(contents)
    label = QLabel("one line", contents, wordWrap=True)
    rows.addWidget(RowBox(label, contents))
    rows.addWidget(QLabel("a wrapped row to give the contents their height for a width", contents, wordWrap=True))
    column = SideColumn(contents, parent)
    QVBoxLayout(parent).addWidget(column)
    parent.resize(300, 120)
    parent.show()
    qtbot.waitExposed(parent)
    _settle()
    for text in ("one line\ntwo\nthree\nfour\nfive\nsix\nseven\neight", "one line"):
        label.setText(text)
        QApplication.sendPostedEvents()  # the box's request, whose new height posts its layout's
        QApplication.sendPostedEvents()  # the contents' request: laid out, at the height they need
        assert contents.height() == max(contents.heightForWidth(column.viewport().width()), column.viewport().height())


def _boxed(qtbot, text: str, width: int = 200) -> tuple[QWidget, QLabel, RowBox]:
    parent = QWidget()
    qtbot.addWidget(parent)
    label = QLabel(text, parent, wordWrap=True)
    box = RowBox(label, parent)
    QVBoxLayout(parent).addWidget(box)
    parent.resize(width, 300)
    parent.show()
    qtbot.waitExposed(parent)
    for _ in range(3):  # the first layout's rounds
        QApplication.processEvents()
    return parent, label, box


def test_a_boxed_row_of_as_many_lines_asks_its_layout_nothing(qtbot):
    parent, label, box = _boxed(qtbot, "KV engine: 44.00 MiB (f16, 2,048 cells)")
    events = Events(QEvent.Type.LayoutRequest)
    parent.installEventFilter(events)
    label.setText("KV engine: 88.00 MiB (f16, 4,096 cells)")
    for _ in range(3):  # the box's round, then its layout's, were it to ask
        QApplication.processEvents()
    assert events.seen[parent] == 0 and box.height() == label.height() == label.heightForWidth(box.width())


def test_a_boxed_row_that_wraps_to_more_lines_grows_and_shows_them_all(qtbot):
    parent, label, box = _boxed(qtbot, "one line")
    one = box.height()
    events = Events(QEvent.Type.LayoutRequest)
    parent.installEventFilter(events)
    label.setText("a row that needs several lines at two hundred pixels, " * 3)
    QApplication.processEvents()
    QApplication.processEvents()
    assert events.seen[parent] >= 1
    assert box.height() == label.height() == label.heightForWidth(box.width()) > 2 * one


def test_a_boxed_row_hides_with_its_label_and_shows_a_text_set_while_hidden(qtbot):
    parent, label, box = _boxed(qtbot, "short")
    label.hide()
    QApplication.processEvents()
    assert box.isHidden()
    label.setText("a longer text set while the row is hidden, which wraps onto more lines than one at this width")
    label.show()
    QApplication.processEvents()
    QApplication.processEvents()
    assert box.isVisible() and box.height() == label.height() == label.heightForWidth(box.width())


def test_a_boxed_row_narrowed_grows_to_its_new_line_count(qtbot):
    parent, label, box = _boxed(qtbot, "a row that wraps onto more lines when its column is narrowed", width=600)
    wide = box.height()
    parent.resize(150, 300)
    for _ in range(3):
        QApplication.processEvents()
    assert box.height() == label.height() == label.heightForWidth(box.width()) > wide


def test_a_boxed_row_measures_each_word_once_a_font_and_keeps_its_narrowest_width(qtbot, monkeypatch):
    """RowBox Rule 4: a tick's new text is mostly the last one's words; only the new ones are measured. A larger
    font measures them all again, and the box is never narrower than the longest word in it."""
    parent, label, box = _boxed(qtbot, "KV engine: 44.00 MiB (f16, 2,048 cells)")
    measured = []
    real = QFontMetrics.horizontalAdvance
    monkeypatch.setattr(QFontMetrics, "horizontalAdvance", lambda self, *a: (measured.append(a[0]), real(self, *a))[1])
    label.setText("KV engine: 88.00 MiB (f16, 4,096 cells)")
    QApplication.processEvents()
    assert sorted(measured) == ["4,096", "88.00"]
    measured.clear()
    label.setText("KV engine: 44.00 MiB (f16, 2,048 cells)")
    QApplication.processEvents()
    assert measured == []
    font = label.font()
    font.setPointSize(font.pointSize() * 3)
    label.setFont(font)
    for _ in range(3):
        QApplication.processEvents()
    assert len(measured) == len(set(label.text().split()))
    assert box.sizeHint().width() >= QFontMetrics(font).horizontalAdvance("cells)")


class Walked(dict):
    """A word-width table that counts the times all of it is walked (its keys or items listed, or iterated)."""

    walks = 0

    def keys(self):  # type: ignore[override]
        Walked.walks += 1
        return super().keys()

    def items(self):  # type: ignore[override]
        Walked.walks += 1
        return super().items()

    def __iter__(self):
        Walked.walks += 1
        return super().__iter__()


def test_a_boxed_rows_new_text_looks_up_its_own_words_not_every_word_kept(qtbot):
    """RowBox Rule 4: the widths kept can be 2,048 words; a tick's text is looked up word by word (a set
    difference with the kept words copied them all, ~20 µs a row and a tick)."""
    parent, label, box = _boxed(qtbot, "KV engine: 44.00 MiB (f16, 2,048 cells)")
    kept = Walked({f"word{i}": i for i in range(1000)})
    kept.update(box._advances)
    box._advances = kept
    Walked.walks = 0
    for cells in (4096, 8192, 2048):
        label.setText(f"KV engine: {cells / 46.5:.2f} MiB (f16, {cells:,} cells)")
        QApplication.processEvents()
    assert box._advances is kept and Walked.walks == 0
    assert {"4,096", "8,192"} <= kept.keys()


def _cells(largest: int) -> tuple[TierCell, ...]:
    return tuple(TierCell(ctx=ctx, lines=(f"{ctx // 1024}k", "33 L"), tip=f"{ctx:,} tokens", tier="fits",
                          chosen=ctx == largest) for ctx in (4096, 8192, largest))


def test_new_tiers_as_many_as_before_reuse_the_strips_buttons(qtbot):
    """A ctx tick that moves the largest ctx that fits gives the strip a new last tier: its buttons are kept and
    relabelled, not deleted and made again (each new one polished anew)."""
    strip = TierStrip()
    qtbot.addWidget(strip)
    strip.show_tiers(_cells(11_008))
    buttons = list(strip.buttons)
    strip.show_tiers(_cells(12_032))
    assert strip.buttons == buttons and buttons[-1].objectName() == "ctxTier12032" and buttons[-1].isChecked()


def _tiers(count: int, tiers: str) -> tuple[TierCell, ...]:
    """`count` tiers from 4k, the i-th coloured by `tiers[i]` (f fits, t tight, w won't), the last one chosen."""
    names = {"f": "fits", "t": "tight", "w": "won't"}
    return tuple(TierCell(ctx=4096 << i, lines=(f"{4 << i}k", f"{i + 1}.5 GiB"), tip=f"{4096 << i:,} tokens",
                          tier=names[tiers[i]], chosen=i == count - 1) for i in range(count))


def _grab(strip: TierStrip) -> QImage:
    QApplication.processEvents()
    return strip.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


@pytest.mark.parametrize("steps", [((7, "fffffft"), (6, "ffffft"), (7, "fffftww")),
                                   ((6, "ffttww"), (7, "fffffff"), (3, "wwt"), (6, "tttfff"))])
def test_a_new_count_of_tiers_makes_or_deletes_only_the_buttons_it_adds_or_drops(qtbot, steps):
    """TierStrip Rule 4: the largest ctx that fits joins or leaves the strip during a ctx drag; the buttons there are
    stay (the old strip deleted and made all seven, each polished anew: a 70B ctx tick's slowest 5 %). After each
    step, tiers recoloured on kept buttons too, the strip draws the pixels of a strip made for those tiers."""
    strip = TierStrip()
    qtbot.addWidget(strip)
    strip.resize(640, 48)
    strip.show()
    count, tiers = steps[0]
    strip.show_tiers(_tiers(count, tiers))
    for count, tiers in steps[1:]:
        before = list(strip.buttons)
        strip.show_tiers(_tiers(count, tiers))
        kept = min(count, len(before))
        assert strip.buttons[:kept] == before[:kept] and len(strip.buttons) == count
        fresh = TierStrip()
        qtbot.addWidget(fresh)
        fresh.resize(strip.size())
        fresh.show_tiers(_tiers(count, tiers))
        assert _grab(strip) == _grab(fresh)



def _strip_in_a_window(qtbot, stretch: bool) -> tuple[QWidget, TierStrip, Events]:
    """A tier strip of six tiers shown in a 640 × 120 window, laid out, and the window's layout requests counted
    from then on."""
    parent = QWidget()
    qtbot.addWidget(parent)
    strip = TierStrip(parent)
    column = QVBoxLayout(parent)
    column.addWidget(strip)
    if stretch:
        column.addStretch(1)
    parent.resize(640, 120)
    parent.show()
    strip.show_tiers(_tiers(6, "ffffft"))
    _settle()
    events = Events(QEvent.Type.LayoutRequest)
    parent.installEventFilter(events)
    return parent, strip, events

def _settle() -> None:
    """A layout request posts the next one up: one turn of the event loop a level."""
    for _ in range(4):
        QApplication.processEvents()


def test_a_tier_buttons_new_text_asks_the_window_for_no_layout(qtbot):
    """TierStrip Rule 5: a tick's new tier figures relabel the buttons at the height they had, so the strip asks its
    parent for no layout (it laid the whole window out again on a third of a 70B drag's ctx ticks); a third line
    makes the buttons taller, and the strip asks for room. On screen, the pixels of a strip made for those tiers."""
    parent, strip, events = _strip_in_a_window(qtbot, stretch=True)
    relabelled = tuple(replace(cell, lines=(cell.lines[0], f"{cell.ctx / 1000:.1f} GiB")) for cell in _tiers(6, "ffffft"))
    strip.show_tiers(relabelled)
    _settle()
    assert events.seen[parent] == 0
    fresh = TierStrip()
    qtbot.addWidget(fresh)
    fresh.resize(strip.size())
    fresh.show_tiers(relabelled)
    assert _grab(strip) == _grab(fresh)
    height = strip.height()
    strip.show_tiers(tuple(replace(cell, lines=(cell.lines[0], f"{cell.lines[1]}\n33 L")) for cell in relabelled))
    _settle()
    assert events.seen[parent] >= 1 and strip.height() > height


def test_a_tier_joining_the_strip_at_its_height_asks_the_window_for_no_layout(qtbot):
    """row_box Rule 6: the largest ctx that fits joining or leaving the strip adds or drops a button of the same
    height; the strip's minimum width moves by a button and its spacing, well under the width it has, so it asks
    its parent for no layout (it laid the window out again, twice a 100-tick 70B drag). Squeezed under its new
    minimum width, it asks. On screen, the pixels of a strip made for those tiers."""
    parent, strip, events = _strip_in_a_window(qtbot, stretch=False)
    for count in (7, 6, 7):
        strip.show_tiers(_tiers(count, "ffffftw"))
        _settle()
    assert events.seen[parent] == 0
    fresh = TierStrip()
    qtbot.addWidget(fresh)
    fresh.resize(strip.size())
    fresh.show_tiers(_tiers(7, "ffffftw"))
    assert _grab(strip) == _grab(fresh)
    strip.resize(strip.minimumSizeHint().width() - 1, strip.height())
    _settle()
    assert events.seen[parent] >= 1 and strip.minimumSizeHint() == strip.inner.minimumSizeHint()


def test_a_ring_note_rewritten_in_as_many_lines_asks_the_knobs_for_no_layout(qtbot):
    """Knobs Rule 2: the ring note is a boxed row; a tick's new note of as many lines repaints the note alone (the
    old label laid the knobs and the side column out again), and an empty note hides its row."""
    knobs = Knobs()
    qtbot.addWidget(knobs)
    knobs.resize(360, 260)
    knobs.show()
    note = "requested {}, planned 1: 1 buffer pins more layers than {} buffers would"
    knobs.show_ring_note(note.format(8, 8))
    _settle()
    events = Events(QEvent.Type.LayoutRequest)
    knobs.installEventFilter(events)
    knobs.show_ring_note(note.format(7, 7))
    _settle()
    assert events.seen[knobs] == 0 and knobs.ring_note.text() == note.format(7, 7)
    knobs.show_ring_note("")
    _settle()
    assert events.seen[knobs] >= 1 and not knobs.ring_note.parentWidget().isVisible()


def test_a_summary_row_narrowed_with_no_layout_request_takes_the_lines_it_needs(qtbot):
    """The model summary's rows are boxed rows: narrowed by their column alone (a side column's scroll bar coming
    in asks nothing of its layout), each measures its own height at its new width, so it needs no outside relayout
    to grow a line (the ring note's relayout used to do it for them: boxed, the rows stayed one line tall)."""
    summary = ModelSummary()
    qtbot.addWidget(summary)
    rows = [label for label in summary.findChildren(QLabel) if label.text() == "—"]
    for label in rows:
        label.setText("Llama-3.1-70B-Instruct Q4_K_M (skeleton, header only)")
    summary.resize(700, 400)
    summary.show()
    _settle()
    assert all(label.height() == label.fontMetrics().height() for label in rows)  # one line each at 700 px
    summary.resize(260, summary.height())
    _settle()
    for label in rows:
        need = label.fontMetrics().boundingRect(0, 0, label.width(), 10_000, int(Qt.TextFlag.TextWordWrap),
                                                label.text()).height()
        assert need > label.fontMetrics().height() and label.height() >= need, (label.width(), label.height(), need)


def test_a_session_chart_gone_mid_drag_keeps_its_room_and_asks_its_panel_for_no_layout(qtbot):
    """session_chart Rule 1: once drawn, a fit whose session has no chart (every request refused, at the ctx slider's
    low end) blanks the chart in its room: the panel is not laid out again, nor the rows under it moved (the chart
    hid, and came back a tick later: twice a drag). A fit with no session, or another model's without a chart,
    hides it."""
    parent = QWidget()
    qtbot.addWidget(parent)
    chart = SessionChartView(parent)
    QVBoxLayout(parent).addWidget(chart)
    parent.resize(320, 200)
    parent.show()
    drawn = SessionChart(rss=(20 * GIB, None, 21 * GIB), worst=22 * GIB, caption="resident after each of 3 requests")
    chart.set_chart(drawn)
    _settle()
    size = chart.size()
    events = Events(QEvent.Type.LayoutRequest)
    parent.installEventFilter(events)
    for shown in (None, drawn, None, replace(drawn, rss=(19 * GIB, 20 * GIB, None))):
        chart.set_chart(shown, session=True)
        _settle()
        assert chart.isVisible() and chart.size() == size and chart.plot.isVisible() is (shown is not None)
        assert chart.caption.isVisible() is (shown is not None)
    assert events.seen[parent] == 0
    chart.set_chart(None, session=False)  # another program than llama-server: no session, no room
    _settle()
    assert not chart.isVisible() and events.seen[parent] >= 1
    chart.set_chart(drawn, session=True)
    chart.forget()
    chart.set_chart(None, session=True)
    _settle()
    assert not chart.isVisible()


def test_ticks_at_the_same_usable_ram_mark_the_budget_slider_once(qtbot, make_window, monkeypatch):
    """The plan panel marks the machine's usable RAM on the budget slider (its words in the tooltip) when it changes,
    not on every tick (a ctx tick redid it: a byte count in words and a tooltip each time)."""
    window = make_window()
    window.show()
    open_model(qtbot, window, demo_model_path())
    budget = window.body.plan.budget
    marked: list[int | None] = []
    real = budget.set_usable
    monkeypatch.setattr(budget, "set_usable", lambda n: (marked.append(n), real(n))[1])
    ctx = window.findChild(QSlider, "ctxSlider")
    for value in (ctx.minimum(), ctx.maximum(), ctx.minimum()):
        ctx.setValue(value)
        settle(qtbot, window)
    assert marked == [] and budget.slider.mark() is not None  # marked once, when the model opened
    assert human_bytes(window.session.view.usable_ram) in budget.slider.toolTip()


def _columns(kv_mib: int) -> list[tuple[str, tuple[tuple[str, int], ...]]]:
    return [("This plan", (("base", 40 * MIB), ("kv", kv_mib * MIB), ("pinned", 600 * MIB))),
            ("Minimum configuration", (("base", 40 * MIB), ("kv", 8 * MIB)))]


def _drawn(chart: LedgerChart) -> tuple[QImage, QImage]:
    """(the chart on screen, the whole chart drawn as the exports draw it), in one format."""
    whole = QImage(chart.size(), QImage.Format.Format_RGB32)
    painter = QPainter(whole)
    chart.paint(painter, float(chart.width()), float(chart.height()))
    painter.end()
    return chart.grab().toImage().convertToFormat(QImage.Format.Format_RGB32), whole


def test_a_ledger_chart_whose_axis_holds_paints_only_its_bars_and_lines_again(qtbot, monkeypatch):
    """LedgerChart Rule 3: a tick that moves the bars under the same axis draws no axis label; what is on screen is
    the whole drawing (the exports'), before and after, and after a change of axis top and of palette."""
    chart = LedgerChart(LEDGER_LINES)
    qtbot.addWidget(chart)
    chart.resize(520, 320)
    chart.show()
    qtbot.waitExposed(chart)
    chart.show_ledgers(_columns(100), 900 * MIB, 48 * MIB)
    chart.grab()  # the screen's paint event, on an image
    top = chart.top()
    texts: list[str] = []
    real = QPainter.drawText
    monkeypatch.setattr(QPainter, "drawText", lambda self, *a: (texts.append(a[-1]), real(self, *a))[1])
    chart.show_ledgers(_columns(140), 900 * MIB, 48 * MIB)
    chart.grab()
    assert chart.top() == top
    assert texts == [label for _, label in chart.mark_labels()]
    shown, whole = _drawn(chart)
    assert shown == whole
    chart.show_ledgers(_columns(4000), 900 * MIB, 48 * MIB)  # a taller column: a new axis
    assert chart.top() > top
    shown, whole = _drawn(chart)
    assert shown == whole
    palette = chart.palette()
    palette.setColor(QPalette.ColorRole.Base, QColor("#202830"))
    chart.setPalette(palette)
    shown, whole = _drawn(chart)
    assert shown == whole


class PaintRegions(QObject):
    """The region each paint event of the watched widget covers."""

    def __init__(self) -> None:
        super().__init__()
        self.regions: list[QRegion] = []

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Paint:
            self.regions.append(QRegion(event.region()))
        return False


def _strip_image(strip: LayerStrip, image: QImage | None = None, region: QRegion | None = None) -> QImage:
    """The strip drawn on `image` (a new one by default) over a white ground, in `region` only (default: all of it),
    as the window paints a region: its ground there, then the strip."""
    if image is None:
        image = QImage(strip.size(), QImage.Format.Format_RGB32)
    region = QRegion(image.rect()) if region is None else region
    painter = QPainter(image)
    painter.setClipRegion(region)
    painter.fillRect(image.rect(), QColor("white"))
    painter.end()
    strip.render(image, region.boundingRect().topLeft(), region)  # the region's corner goes to the offset
    return image


@pytest.mark.parametrize("layers, before, after", [(80, 40, 43), (80, 43, 40), (80, 0, 80), (32, 10, 11), (200, 5, 6)])
def test_a_new_pinned_count_repaints_the_cells_that_changed_and_draws_what_a_whole_paint_draws(
        qtbot, layers, before, after):
    """layer_strip Rule 1: a budget tick that pins a few more layers repaints those cells (the old strip repainted
    all of them); what it leaves on screen is what painting the whole strip draws."""
    parent = QWidget()
    qtbot.addWidget(parent)
    strip = LayerStrip(parent)
    QVBoxLayout(parent).addWidget(strip)
    parent.resize(613, 60)
    parent.show()
    qtbot.waitExposed(parent)
    sizes = tuple(100 + i for i in range(layers))
    strip.set_layers(sizes, before)
    QApplication.processEvents()
    old = _strip_image(strip)
    painted = PaintRegions()
    strip.installEventFilter(painted)
    strip.set_layers(sizes, after)
    qtbot.waitUntil(lambda: painted.regions != [])
    region = painted.regions[0]
    cell = strip.width() / layers
    assert len(painted.regions) == 1 and region.boundingRect().width() <= abs(after - before) * cell + 4
    assert _strip_image(strip, old, region) == _strip_image(strip)


def test_a_budget_tick_makes_the_tiers_and_the_full_loads_command_once(qtbot, make_window, monkeypatch):
    """main_window Rule 2, run_it_line Rule 3: a budget tick keeps the full load and its tiers (derive keeps them);
    their words are made once, not on every tick; a ctx tick makes them anew."""
    window = make_window()
    window.show()
    open_model(qtbot, window, demo_model_path())
    made: Counter[str] = Counter()
    for module, name in ((main_window, "tier_cells"), (run_it_line, "full_load_run")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _real=real, _name=name, **k: (made.update([_name]), _real(*a, **k))[1])
    budget, ctx = window.findChild(QSlider, "budgetSlider"), window.findChild(QSlider, "ctxSlider")
    load = window.session.view.full_load
    for step in (1, 2, 3):
        budget.setValue(budget.value() + step * budget.singleStep() * 16)
        settle(qtbot, window)
    assert window.session.view.full_load is load and made == Counter()
    ctx.setValue(ctx.minimum() if ctx.value() != ctx.minimum() else ctx.maximum())
    settle(qtbot, window)
    assert window.session.view.full_load is not load and made == Counter(tier_cells=1, full_load_run=1)
