"""Rate-limit a redraw that follows a slider: at once, then at most once per interval.

A secondary view that follows every slider tick (the sweep's budget mark, the compare
table) would add its repaint to every frame. A Throttle runs its action at once when it has
been idle, and while requests keep coming (a drag) at most once per interval — the last
request always gets its run, so the view ends on the latest state.

A NextTurn runs its action once at the next turn of the event loop, however often it is asked
meanwhile, as a 0 ms single-shot timer would — but ahead of the repaint already queued: Qt posts
its repaint at low priority and fires timers after posted events, so a slider tick through a timer
painted twice (the slider's handle, then the view), and through a NextTurn paints once.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer

RUN = QEvent.Type(QEvent.registerEventType())


class Throttle(QObject):
    """`request()` runs `action` now, or once at the end of the running interval."""

    def __init__(self, interval_ms: int, action: Callable[[], None], parent: QObject | None = None):
        super().__init__(parent)
        self._action = action
        self._pending = False
        self.timer = QTimer(self, singleShot=True, interval=interval_ms)
        self.timer.timeout.connect(self._due)

    def request(self) -> None:
        if self.timer.isActive():
            self._pending = True
            return
        self._run()

    def _due(self) -> None:
        if self._pending:
            self._run()

    def _run(self) -> None:
        self._pending = False
        self._action()
        self.timer.start()


class NextTurn(QObject):
    """`start()` runs `action` at the next turn of the event loop, once; `stop()` cancels it (QTimer's names)."""

    def __init__(self, action: Callable[[], None], parent: QObject | None = None):
        super().__init__(parent)
        self._action = action
        self._pending = False

    def start(self) -> None:
        if not self._pending:
            self._pending = True
            QCoreApplication.postEvent(self, QEvent(RUN))

    def stop(self) -> None:
        self._pending = False

    def isActive(self) -> bool:  # noqa: N802 - QTimer's name
        return self._pending

    def event(self, event: QEvent) -> bool:
        if event.type() != RUN:
            return super().event(event)
        if self._pending:
            self._pending = False
            self._action()
        return True
