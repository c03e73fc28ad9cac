"""Where the app keeps its files: one module, over platformdirs, so every reader and writer agrees.

Rule 1: three folders, each overridable by an environment variable (tests and a portable
        install point them elsewhere): `data_dir()` (evidence, the machine's measured
        bandwidths) `$GGUF_BUDGET_DATA_DIR`, `config_dir()` (the library's folders)
        `$GGUF_BUDGET_CONFIG_DIR`, `cache_dir()` (remote headers) `$GGUF_BUDGET_CACHE_DIR`.
Rule 2: otherwise the platform's per-user folder named `APP_FOLDER` (XDG on Linux, Application
        Support on macOS, LocalAppData on Windows), as platformdirs names it.
Rule 3: nothing here creates a folder; writers create what they write into.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Literal, Mapping

from platformdirs import user_cache_dir, user_config_dir, user_data_dir

APP_FOLDER = "gguf-budget"
ENV_DATA_DIR = "GGUF_BUDGET_DATA_DIR"
ENV_CONFIG_DIR = "GGUF_BUDGET_CONFIG_DIR"
ENV_CACHE_DIR = "GGUF_BUDGET_CACHE_DIR"


def _folder(variable: str, platform_dir: Callable[[str, Literal[False]], str], environ: Mapping[str, str]) -> Path:
    """Rules 1–2."""
    return Path(environ.get(variable) or platform_dir(APP_FOLDER, False))


def data_dir(environ: Mapping[str, str] = os.environ) -> Path:
    return _folder(ENV_DATA_DIR, user_data_dir, environ)


def config_dir(environ: Mapping[str, str] = os.environ) -> Path:
    return _folder(ENV_CONFIG_DIR, user_config_dir, environ)


def cache_dir(environ: Mapping[str, str] = os.environ) -> Path:
    return _folder(ENV_CACHE_DIR, user_cache_dir, environ)
