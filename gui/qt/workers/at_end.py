"""What this run leaves to remove when it ends, however it ends.

The interactive run ends with `os._exit` (`quitting` Rule 3), which runs no `atexit` function: a
scratch settings folder registered with `atexit` was never removed. So such work is registered
here: `end_process` runs it before `os._exit`, and `atexit` runs it when the interpreter ends
normally (a test, a screenshot); each runs once.
"""

from __future__ import annotations

import atexit
from typing import Callable

_PENDING: list[Callable[[], None]] = []


def at_end(work: Callable[[], None]) -> None:
    """Run `work` (which must not raise) when this process ends."""
    _PENDING.append(work)


def run_at_end() -> None:
    """Run what is pending, last registered first, once."""
    while _PENDING:
        _PENDING.pop()()


atexit.register(run_at_end)
