"""Throttle: a follower's redraw runs at once, then at most once per interval, and always ends on the last request."""

from __future__ import annotations

from gguf_budget.gui.qt.throttle import Throttle


def test_a_burst_runs_once_now_and_once_at_the_end_of_the_interval(qtbot):
    runs: list[int] = []
    state = {"value": 0}
    throttle = Throttle(50, lambda: runs.append(state["value"]))
    for value in (1, 2, 3):
        state["value"] = value
        throttle.request()
    assert runs == [1] and throttle.timer.isActive()
    qtbot.waitUntil(lambda: runs == [1, 3])
    qtbot.waitUntil(lambda: not throttle.timer.isActive())
    assert runs == [1, 3]  # nothing pending: the interval ends without another run


def test_a_request_after_a_quiet_interval_runs_at_once(qtbot):
    runs: list[str] = []
    throttle = Throttle(20, lambda: runs.append("run"))
    throttle.request()
    qtbot.waitUntil(lambda: not throttle.timer.isActive())
    throttle.request()
    assert runs == ["run", "run"]
