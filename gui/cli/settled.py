"""Imports that make the process's lasting objects, with the cyclic garbage collector paused.

Rule 1: inside `settled_imports()` the collector does not run, and what was made is then frozen out of
        later collections (`gc.freeze`): an import makes tens of thousands of objects that live as long as
        the process and no garbage, and the collector walked them again and again (~10% of a `fit`'s CPU).
        A collector that was off stays off.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def settled_imports() -> Iterator[None]:
    """Rule 1."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if collecting:
            gc.enable()
