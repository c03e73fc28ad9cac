"""Keeps the machine panel's fit estimate in step with the probe, the what-if editor and the plan.

Rule 1: the probe runs off the GUI thread (`BackgroundCall`) at start and on Refresh; its
        backend is injected, so tests pass a function that returns a recorded snapshot. A probe
        that fails (it should answer with reasons, not raise) says why on the panel and
        leaves Refresh enabled, with the last snapshot still judged.
Rule 2: the machine judged is the hypothetical one while its box is ticked, else the probe's.
Rule 3: the fit is re-estimated at the plan's ctx and KV type whenever the model, ctx or KV
        type of the plan, the machine, a reserve or the GPU layer override changes — not on a
        budget tick that leaves them alone (the hot path); `estimate_fit` computes every number.
Rule 4: the runtime-evidence claim is whatever evidence the window holds for the model
        (`set_evidence`); the estimate never fills it itself.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from PySide6.QtCore import QObject, Signal

from gguf_budget.core import ModelSpec
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.types import FitEstimate, FitRequest
from gguf_budget.core.machine.snapshot import HardwareSnapshot

from gguf_budget.gui.qt.workers.background import BackgroundCall
from gguf_budget.gui.qt.machine.machine_panel import HardwarePanel


class MachineLink(QObject):
    """Probe → snapshot → fit → panel.

    Signals:
        probed(): a probe answered and its snapshot (and fit) is on screen.
        probeFailed(str): a probe failed; the panel says why (one line).
        changed(): the machine judged changed (a probe, the hypothetical machine, a reserve).
    """

    probed = Signal()
    probeFailed = Signal(str)
    changed = Signal()

    def __init__(self, panel: HardwarePanel, probe_backend: Callable[[], HardwareSnapshot], parent: QObject):
        super().__init__(parent)
        self._panel = panel
        self._probed: HardwareSnapshot | None = None
        self._fit: FitEstimate | None = None
        self._model: ModelSpec | None = None
        self._ctx: int | None = None
        self._kv_type = "f16"
        self._evidence: str | None = None
        self._prober = BackgroundCall(probe_backend, parent=self)
        self._prober.succeeded.connect(self._answered)
        self._prober.failed.connect(self._probe_failed)
        panel.refreshRequested.connect(self.refresh)
        panel.changed.connect(self.machine_changed)

    def snapshot(self) -> HardwareSnapshot | None:
        return self._panel.hypothetical() or self._probed

    def fit(self) -> FitEstimate | None:
        return self._fit

    def refresh(self) -> None:
        self._panel.refresh.setEnabled(False)
        self._prober.start()

    def follow(self, model: ModelSpec, ctx: int | None, kv_type: str) -> None:
        """A new plan is on screen: estimate the fit for its model, ctx and KV type, if they moved."""
        if self._fit is not None and (model, ctx, kv_type) == (self._model, self._ctx, self._kv_type):
            return
        self._model, self._ctx, self._kv_type = model, ctx, kv_type
        self._estimate()

    def set_evidence(self, claim: str | None) -> None:
        """Rule 4: the runtime-evidence claim for the current model (None: none stored)."""
        self._evidence = claim
        if self._fit is not None:
            self._show(self._fit)

    def machine_changed(self) -> None:
        snapshot = self.snapshot()
        if snapshot is not None:
            self._panel.show_snapshot(snapshot)
        self._estimate()
        self.changed.emit()

    def _answered(self, snapshot: HardwareSnapshot) -> None:
        self._probed = snapshot
        self._panel.refresh.setEnabled(True)
        self.machine_changed()
        self.probed.emit()

    def _probe_failed(self, message: str) -> None:
        self._panel.refresh.setEnabled(True)
        self._panel.show_probe_failure(message)
        self.probeFailed.emit(message)

    def _estimate(self) -> None:
        snapshot = self.snapshot()
        if snapshot is None or self._model is None:
            return
        request = FitRequest(ctx=self._ctx, gpu_layers=self._panel.requested_gpu_layers(), kv_type=self._kv_type,
                             tensor_split=self._panel.requested_tensor_split(),
                             reserves=self._panel.reserves())
        self._show(estimate_fit(self._model, snapshot, request))

    def _show(self, fit: FitEstimate) -> None:
        self._fit = replace(fit, claims=replace(fit.claims, runtime_evidence=self._evidence))
        self._panel.show_fit(self._fit)
