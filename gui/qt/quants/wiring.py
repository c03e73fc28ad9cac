"""The Quants dock in the explorer window: the open model's quant ladder, following the machine.

Rule 1: the composition root (`gui.qt.addons`) calls `install_quants(host, view_menu)` on a built
        window; the add-on reads only the explorer session the window draws (`host.session`),
        uses the window only through `QuantsHost`'s signals and hooks, and puts its switch in
        the View menu it is given. It never imports the window or reads its getters.
Rule 2: a newly loaded model is priced once (`price_types`, off the GUI thread) — when the
        dock shows, not before; a model the dock itself handed to the window (a priced
        quantization) keeps the ladder it came from.
Rule 3: the ladder is judged again (`quant_ladder`, off the GUI thread) when the machine, the
        ctx, the KV type, the budget or the bandwidths change — once the controls have been still for
        SETTLE_MS, and only while the dock shows (a hidden dock catches up when shown).
        The ladder is judged with `dock_inputs.ladder_request(state)`: the asked ctx, else
        llama.cpp's own default per row (`fit.ctx.auto_ctx`), the cap, KV type, reserves, budget,
        bandwidths, prompt and server of the session, so a row's figures are the ones `fit`
        and the window show for that model's full load.
Rule 4: double-clicking a row shows that quantization in the main view (`show_model`),
        labelled "priced, not downloaded" by its name.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QDockWidget, QMenu

from gguf_budget.core import ModelSpec
from gguf_budget.core.quant.ladder import LadderRequest, PricedTypes, QuantLadder, price_types, quant_ladder

from gguf_budget.gui.qt.quants.host import QuantsHost
from gguf_budget.gui.qt.quants.quants_view import QuantsView
from gguf_budget.gui.qt.workers.background import BackgroundCall

SETTLE_MS = 300


@dataclass(frozen=True)
class Quants:
    """The Quants parts installed on one window."""

    view: QuantsView
    dock: QDockWidget
    follower: _QuantsFollower


def _shows(dock: QDockWidget) -> bool:
    return dock.isVisible() and not dock.visibleRegion().isEmpty()


class _QuantsFollower(QObject):
    """Rules 2–4."""

    def __init__(self, host: QuantsHost, view: QuantsView, dock: QDockWidget):
        super().__init__(dock)
        self._session, self._view, self._dock = host.session, view, dock
        self._source: ModelSpec | None = None
        self._priced: PricedTypes | None = None
        self._judged: tuple[object, ...] | None = None
        self._pricer = BackgroundCall(price_types, (), self)
        self._pricer.succeeded.connect(self._priced_answer)
        self._judge = BackgroundCall(quant_ladder, (), self)
        self._judge.succeeded.connect(self._judged_answer)
        self.timer = QTimer(self, singleShot=True, interval=SETTLE_MS)
        self.timer.timeout.connect(self.judge_now)
        host.session.subscribe_models(lambda _model: self._model_loaded(), now=True)
        host.session.subscribe(lambda _view: self._changed())
        dock.visibilityChanged.connect(self._visibility)
        view.planRequested.connect(host.show_model)

    def ladder(self) -> QuantLadder | None:
        return self._view.model.ladder()

    def busy(self) -> bool:
        return self._pricer.busy or self._judge.busy or self.timer.isActive()

    def _model_loaded(self) -> None:
        model = self._session.state.model
        if model is None or (self._priced is not None and any(model is m for m in self._priced.models)):
            return
        self._source, self._priced, self._judged = model, None, None
        self._view.set_status("Pricing every quantization of this model…")
        self._price_if_shown()

    def _price_if_shown(self) -> None:
        if self._source is not None and self._priced is None and not self._pricer.busy and _shows(self._dock):
            self._pricer.start(self._source)

    def _priced_answer(self, priced: PricedTypes) -> None:
        if priced.source is not self._source:
            self._price_if_shown()
            return
        self._priced = priced
        self.judge_now()

    def _key(self, request: LadderRequest | None) -> tuple[object, ...]:
        return (self._priced, self._session.state.machine, request)

    def _request(self) -> LadderRequest | None:
        docks = self._session.view.docks  # None inside: knobs the planner refuses, the window says why
        return None if docks is None else docks.ladder

    def _changed(self) -> None:
        if self._priced is not None and self._judged != self._key(self._request()):
            self.timer.start()

    def judge_now(self) -> None:
        """Judge the priced ladder on the window's machine and request now (if the dock shows)."""
        self.timer.stop()
        snapshot = self._session.state.machine
        request = self._request()
        if self._priced is None or snapshot is None or request is None or not _shows(self._dock):
            return
        self._judged = self._key(request)
        self._judge.start(self._priced.source, snapshot, request, self._priced)

    def _judged_answer(self, ladder: QuantLadder) -> None:
        self._view.set_ladder(ladder)

    def _visibility(self, shown: bool) -> None:
        if not shown:
            return
        if self._priced is None:
            self._price_if_shown()
        elif self._judged != self._key(self._request()):
            self.judge_now()


def install_quants(host: QuantsHost, view_menu: QMenu) -> Quants:
    """Add the Quants view (a full-size view, its own window: `add_views`) and its switch in `view_menu`."""
    view = QuantsView(host.window())
    dock = QDockWidget("Quants")
    dock.setObjectName("quantsDock")
    dock.setWidget(view)
    host.add_views((dock,))
    view_menu.addAction(dock.toggleViewAction())
    return Quants(view, dock, _QuantsFollower(host, view, dock))
