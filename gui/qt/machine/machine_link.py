"""Keeps the machine the session judges in step with the probe and the what-if editor.

Rule 1: the probe runs off the GUI thread (`BackgroundCall`) at start and on Refresh; its
        backend is injected, so tests pass a function that returns a recorded snapshot. A probe
        that fails (it should answer with reasons, not raise) says why on the panel and
        leaves Refresh enabled, with the last snapshot still judged.
Rule 2: the probe's answer and the panel's choices go into the session (`Probed`, `SetMachine`:
        the hypothetical machine while its box is ticked, the reserves, the GPU split); the session
        decides which machine is judged (`session` Rule 8), and the panel draws that one.
Rule 3: the fit itself is the explorer view's (`derive`): the window hands the view's full load
        back to the panel.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, Signal

from gguf_budget.core.explorer.session import Probed, Session, SetMachine
from gguf_budget.core.machine.snapshot import HardwareSnapshot

from gguf_budget.gui.qt.workers.background import BackgroundCall
from gguf_budget.gui.qt.machine.machine_panel import HardwarePanel


class MachineLink(QObject):
    """Probe and panel → the session's machine.

    Signals:
        probed(): a probe answered and its snapshot is on screen.
        probeFailed(str): a probe failed; the panel says why (one line).
        changed(): the machine judged changed (a probe, the hypothetical machine, a reserve).
    """

    probed = Signal()
    probeFailed = Signal(str)
    changed = Signal()

    def __init__(self, panel: HardwarePanel, session: Session, probe_backend: Callable[[], HardwareSnapshot],
                 parent: QObject):
        super().__init__(parent)
        self._panel = panel
        self._session = session
        self._prober = BackgroundCall(probe_backend, parent=self)
        self._prober.succeeded.connect(self._answered)
        self._prober.failed.connect(self._probe_failed)
        panel.refreshRequested.connect(self.refresh)
        panel.changed.connect(self.machine_changed)

    def probing(self) -> bool:
        """True while a probe is under way."""
        return self._prober.busy

    def refresh(self) -> None:
        self._panel.refresh.setEnabled(False)
        self._prober.start()

    def machine_changed(self) -> None:
        """Rule 2: the panel's choices into the session, and the machine it judges onto the panel."""
        panel = self._panel
        self._session.apply(SetMachine(panel.hypothetical(), panel.reserves(), panel.requested_gpu_layers(),
                                       panel.requested_tensor_split()))
        machine = self._session.state.machine
        if machine is not None:
            panel.show_snapshot(machine)
        self.changed.emit()

    def _answered(self, snapshot: HardwareSnapshot) -> None:
        self._session.apply(Probed(snapshot))
        self._panel.refresh.setEnabled(True)
        self.machine_changed()
        self.probed.emit()

    def _probe_failed(self, message: str) -> None:
        self._panel.refresh.setEnabled(True)
        self._panel.show_probe_failure(message)
        self.probeFailed.emit(message)
