"""Keeps the machine the window judges in step with the probe and the what-if editor.

Rule 1: the probe runs off the GUI thread (`BackgroundCall`) at start and on Refresh; its
        backend is injected, so tests pass a function that returns a recorded snapshot. A probe
        that fails (it should answer with reasons, not raise) says why on the panel and
        leaves Refresh enabled, with the last snapshot still judged.
Rule 2: the machine judged is the hypothetical one while its box is ticked, else the probe's.
Rule 3: the fit itself is the explorer view's (`derive`): the window writes `inputs()` into
        its state on `changed` and hands the view's full load back to the panel (with the
        runtime-evidence claim the window holds for the model, never filled by the estimate).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from PySide6.QtCore import QObject, Signal

from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.machine.snapshot import HardwareSnapshot

from gguf_budget.gui.qt.workers.background import BackgroundCall
from gguf_budget.gui.qt.machine.machine_panel import HardwarePanel


@dataclass(frozen=True)
class MachineInputs:
    """What the panel's person chose about the machine: the explorer state's machine fields."""

    machine: HardwareSnapshot | None
    reserves: Reserves
    gpu_layers: int | None
    tensor_split: tuple[float, ...] | None


class MachineLink(QObject):
    """Probe → snapshot → (the window's state).

    Signals:
        probed(): a probe answered and its snapshot is on screen.
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
        self._prober = BackgroundCall(probe_backend, parent=self)
        self._prober.succeeded.connect(self._answered)
        self._prober.failed.connect(self._probe_failed)
        panel.refreshRequested.connect(self.refresh)
        panel.changed.connect(self.machine_changed)

    def snapshot(self) -> HardwareSnapshot | None:
        return self._panel.hypothetical() or self._probed

    def inputs(self) -> MachineInputs:
        panel = self._panel
        return MachineInputs(self.snapshot(), panel.reserves(), panel.requested_gpu_layers(),
                             panel.requested_tensor_split())

    def probing(self) -> bool:
        """True while a probe is under way."""
        return self._prober.busy

    def refresh(self) -> None:
        self._panel.refresh.setEnabled(False)
        self._prober.start()

    def machine_changed(self) -> None:
        snapshot = self.snapshot()
        if snapshot is not None:
            self._panel.show_snapshot(snapshot)
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
