"""The launcher's window, watched from a child process in the launcher's own import order.

A child that imported the app module itself to patch `open_window` would import Qt and the app before the launcher
does, and so would not measure or count the real launch. Instead `watch_open_window(wrap)` puts a finder first on
`sys.meta_path` that, when the launcher imports the app module, runs it and then replaces its `open_window` with
`wrap(open_window)`. This module imports nothing of the app, so importing it changes no order.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any, Callable

APP = "gguf_budget.gui.qt.app"


class _WatchApp:
    def __init__(self, wrap: Callable[[Any], Any]) -> None:
        self._wrap = wrap

    def find_spec(self, name: str, path: object = None, target: object = None) -> Any:
        if name != APP:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.loader is not None
        run_module = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            run_module(module)
            module.open_window = self._wrap(module.open_window)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def watch_open_window(wrap: Callable[[Any], Any]) -> None:
    """When the launcher imports the app, its `open_window` becomes `wrap(open_window)`."""
    sys.meta_path.insert(0, _WatchApp(wrap))


def app_env(folder: Path, **more: str) -> dict[str, str]:
    """The environment of an app run in a child process: offscreen, its settings, state, cache and data in `folder`."""
    return {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(folder / "config"),
            "XDG_STATE_HOME": str(folder / "state"), "XDG_CACHE_HOME": str(folder / "cache"),
            "XDG_DATA_HOME": str(folder / "data"), **more}
