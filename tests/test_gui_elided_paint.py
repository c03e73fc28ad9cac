"""An elided label repaints only when what it paints changes (elided_label Rule 3): a headline title whose exact
sizes change past the "…" on a ctx tick repainted its whole line on every tick, for the same pixels. What the
screen holds after any run of new texts and widths is what a label given the last text at once paints."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

from gguf_budget.gui.qt.elided_label import ElidedLabel

TITLE = "FITS · Budget plan — a runtime that streams layers under a RAM budget · --ram-budget"


class Paints(QObject):
    """Counts the paint events the watched label receives."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Paint:
            self.count += 1
        return False


def _window(qtbot, text: str, width: int) -> tuple[QWidget, ElidedLabel]:
    window = QWidget()
    qtbot.addWidget(window)
    label = ElidedLabel(window)
    QVBoxLayout(window).addWidget(label)
    window.setFixedWidth(width)
    label.setText(text)
    window.show()
    qtbot.waitExposed(window)
    _settle()
    return window, label


def _settle() -> None:
    for _ in range(3):
        QApplication.processEvents()


def _on_screen(window: QWidget) -> QImage:
    """What the window's backing store holds: the pixels its paints left, not a fresh paint's."""
    _settle()
    return QApplication.primaryScreen().grabWindow(window.winId()).toImage().convertToFormat(QImage.Format.Format_RGB32)


def test_a_new_text_that_differs_only_past_the_ellipsis_repaints_nothing(qtbot):
    """A title elided at its width: a new size after the "…" is no paint; the screen is what the new text paints."""
    window, label = _window(qtbot, f"{TITLE} 65934M --ctx 128", 260)
    assert label.is_elided()
    paints = Paints()
    label.installEventFilter(paints)
    label.setText(f"{TITLE} 65934M --ctx 4096")
    assert _on_screen(window) == _on_screen(_window(qtbot, f"{TITLE} 65934M --ctx 4096", 260)[0])
    assert paints.count == 0
    assert label.text() == label.toolTip() == label.accessibleName() == f"{TITLE} 65934M --ctx 4096"


def test_a_new_text_that_shows_repaints_the_line(qtbot):
    """A change before the "…" is painted."""
    window, label = _window(qtbot, f"FITS · {TITLE}", 260)
    before = _on_screen(window)
    paints = Paints()
    label.installEventFilter(paints)
    label.setText(f"TIGHT · {TITLE}")
    assert _on_screen(window) == _on_screen(_window(qtbot, f"TIGHT · {TITLE}", 260)[0]) != before
    assert paints.count == 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["", "FITS · ", "TIGHT · "]), st.integers(0, 99_999),
                          st.sampled_from([120, 260, 700])), min_size=1, max_size=6))
def test_any_run_of_texts_and_widths_leaves_what_the_last_text_paints(qtbot, steps):
    """New texts (changed before or after the "…", or not elided at all) and new widths, each settled: the screen
    holds what a label given the last text at the last width paints at once."""
    window, label = _window(qtbot, TITLE, 260)
    for head, size, width in steps:
        label.setText(f"{head}{TITLE} {size}M")
        window.setFixedWidth(width)
        _settle()
    head, size, width = steps[-1]
    assert _on_screen(window) == _on_screen(_window(qtbot, f"{head}{TITLE} {size}M", width)[0])
    window.close()


def test_a_new_font_set_inherited_or_from_a_style_sheet_elides_the_text_again(qtbot):
    """The painted line is kept per font: a larger font on the window, or a bold one from a style sheet, paints the
    text elided at the new font, as a label given that font first paints it."""
    text = f"{TITLE} 65934M --ctx 4096"
    window, label = _window(qtbot, text, 260)
    font = window.font()
    font.setPointSize(font.pointSize() + 3)
    window.setFont(font)
    label.setStyleSheet("QLabel { font-weight: bold; }")
    shown = label.shown_text()
    fresh, same = _window(qtbot, text, 260)
    fresh.setFont(font)
    same.setStyleSheet("QLabel { font-weight: bold; }")
    plain = _window(qtbot, text, 260)
    assert shown == same.shown_text() != plain[1].shown_text()
    assert _on_screen(window) == _on_screen(fresh)


def test_a_text_set_while_hidden_shows_when_the_line_is_shown_again(qtbot):
    """A hidden line paints nothing; shown again, it paints the text it was given while hidden."""
    text = f"TIGHT · {TITLE} 65934M"
    window, label = _window(qtbot, f"FITS · {TITLE}", 260)
    label.hide()
    _settle()
    label.setText(text)
    label.show()
    assert _on_screen(window) == _on_screen(_window(qtbot, text, 260)[0])
