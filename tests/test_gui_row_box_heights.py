"""A boxed row keeps the height QLabel gave a text at a width (`row_box` Rule 7): a drag back over ctxs met before
gives the side panel's rows the texts they had, and QLabel lays each out again to answer (it keeps no height). The
height is always QLabel's own (a wrong one clips a row's last line or leaves a gap under it), for any texts, widths,
fonts and text interaction, and the row shows what a fresh row shows."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget

from gguf_budget.gui.qt.row_box import RowBox
from gguf_budget.gui.qt.selectable_label import SelectableLabel

WORDS = ("KV", "engine:", "1.25", "GiB", "(f16", "K", "and", "V,", "80", "layers", "×", "8", "heads", "4,096",
         "cells,", "64", "MiB", "a", "layer),", "server", "slots", "each", "1,024", "cells;", "unified", "—", "peak",
         "RSS", "·", "weights", "18.27", "+", "=", "23.39", "won't", "fit", "≈", "•", "fffff", "Tj", "WAVE", "10%",
         "e.g.", "needs", "placement", "(blocks", "x", "WWWWWWWWWW", "iiiiiiiiiiiiiiiiiiii", "37–79", "K/V", "…",
         "(10%)", "a-b", "“quoted”", "ı", "(", ")", "a\tb", "")
TEXTS = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=30).map(" ".join), min_size=1,
                 max_size=4).map("\n".join)


def _boxed(qtbot, label: QLabel, width: int) -> tuple[QWidget, RowBox]:
    parent = QWidget()
    qtbot.addWidget(parent)
    label.setParent(parent)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)  # as the side panel's rows
    box = RowBox(label, parent)
    QVBoxLayout(parent).addWidget(box)
    parent.resize(width, 600)
    parent.show()
    qtbot.waitExposed(parent)
    for _ in range(3):
        QApplication.processEvents()
    return parent, box


class Layouts:
    """Counts the label's own `heightForWidth` calls (each lays the whole text out)."""

    def __init__(self, label: QLabel):
        self.calls = 0
        real = label.heightForWidth

        def counted(width: int) -> int:
            self.calls += 1
            return real(width)

        label.heightForWidth = counted  # type: ignore[method-assign]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(TEXTS, min_size=1, max_size=6), width=st.integers(120, 520), selectable=st.booleans(),
       points=st.sampled_from((0, 9, 13)))
def test_a_boxed_rows_height_is_qlabels_for_any_texts(qtbot, texts, width, selectable, points):
    label = SelectableLabel("—") if selectable else QLabel("—")
    if points:
        font = label.font()
        font.setPointSize(points)
        label.setFont(font)
    parent, box = _boxed(qtbot, label, width)
    for text in texts:
        label.setText(text)
        for _ in range(3):
            QApplication.processEvents()
        assert box.height() == label.height() == QLabel.heightForWidth(label, box.width())


def test_a_text_met_before_keeps_its_height(qtbot):
    """Rule 7: a drag back over the ctxs it came through gives the rows texts they had; each is laid out once a
    width (old: each time it is set)."""
    label = QLabel("—")
    parent, box = _boxed(qtbot, label, 240)
    texts = [f"blocks {n}-79 and the output layer on GPU 0, {n * 0.52:.2f} GiB of weights with its K/V" for n in
             range(30, 40)]
    layouts = Layouts(label)
    for text in texts + texts[::-1]:
        label.setText(text)
        QApplication.processEvents()
        assert box.height() == QLabel.heightForWidth(label, box.width())
    assert layouts.calls == len(texts)


def _grab(widget: QWidget) -> QImage:
    for _ in range(3):
        QApplication.processEvents()
    return widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


def test_a_row_whose_height_was_kept_shows_what_a_fresh_row_shows(qtbot):
    label = QLabel("—")
    parent, box = _boxed(qtbot, label, 300)
    for cells in (4096, 8192, 131_072, 4096, 65_536):
        label.setText(f"0 B used · 6.00 GiB reserve · 122.00 GiB usable of 128.00 GiB; this placement needs "
                      f"{cells / 6000:.2f} GiB\n= weights 18.27 GiB + KV {cells / 25_000:.2f} GiB + compute 1.10 GiB")
    fresh_label = QLabel(label.text())
    fresh, _ = _boxed(qtbot, fresh_label, 300)
    assert _grab(parent) == _grab(fresh)


class Looked(dict):
    """A word-width table that counts the words looked up in it."""

    looked = 0

    def __getitem__(self, word: str) -> int:
        Looked.looked += 1
        return super().__getitem__(word)


def test_a_text_met_before_looks_up_none_of_its_words(qtbot):
    """Rule 7: a text's widest word is kept with it (old: each of its words looked up again each time it is set)."""
    label = QLabel("—")
    parent, box = _boxed(qtbot, label, 300)
    texts = [f"KV engine: {cells / 46.5:.2f} MiB (f16, {cells:,} cells)" for cells in (4096, 8192)]
    for text in texts:
        label.setText(text)
        QApplication.processEvents()
    box._advances = Looked(box._advances)
    Looked.looked = 0
    for text in texts:
        label.setText(text)
        QApplication.processEvents()
        assert box.height() == QLabel.heightForWidth(label, box.width())
    assert Looked.looked == 0
