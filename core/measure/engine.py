"""Which llama.cpp can measure a model: a binary the user named, one on PATH, or llama-cpp-python.

Rule 1: a path the user set (preferences, `--llama`) wins; then the folder or binary in
        $GGUF_BUDGET_LLAMA_BIN; then PATH; then an importable `llama_cpp` module run by this
        Python. The first that exists is used; an explicit path that does not exist is an
        error, not a silent fall-through to something else.
Rule 2: among binaries, `llama-cli` is preferred (single turn, then exit: the tool the
        recorded logs come from, and its log always ends with llama.cpp's memory breakdown),
        then `llama-completion` (at 0c1e570 it sometimes loses the last lines of its `-v` log
        at exit; the buffer lines come long before), then `llama-server` (started, asked once
        over loopback, stopped) — ENGINE_ORDER.
Rule 3: the lookups are injected (`Lookups`), so the choice is tested without touching PATH.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from gguf_budget.core.vocab import TextEnum
from gguf_budget.core.errors import EngineError

ENV_BIN = "GGUF_BUDGET_LLAMA_BIN"


class EngineKind(TextEnum):
    """How the engine is driven; the value is the binary's name (or the module's)."""

    COMPLETION = "llama-completion"
    CLI = "llama-cli"
    SERVER = "llama-server"
    PYTHON = "llama_cpp"


ENGINE_ORDER = (EngineKind.CLI, EngineKind.COMPLETION, EngineKind.SERVER)
HOW_TO_GET_ONE = (
    "no llama.cpp found: put llama-cli, llama-completion or llama-server on PATH "
    f"(build llama.cpp, or run .ci/build_llamacpp.sh), set {ENV_BIN} to their folder, "
    "choose one with File ▸ llama.cpp location…, or pip install llama-cpp-python"
)


@dataclass(frozen=True)
class Engine:
    """A llama.cpp to run: its kind and the executable (the Python interpreter for `llama_cpp`)."""

    kind: EngineKind
    executable: str

    @property
    def label(self) -> str:
        if self.kind is EngineKind.PYTHON:
            return "llama-cpp-python (llama_cpp module)"
        return f"{self.kind.value} ({self.executable})"


@dataclass(frozen=True)
class Lookups:
    """Where engines are looked for: PATH search, the environment, files, and importable modules."""

    which: Callable[[str], str | None] = shutil.which
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    is_executable: Callable[[str], bool] = lambda p: os.path.isfile(p) and os.access(p, os.X_OK)
    has_module: Callable[[str], bool] = lambda name: importlib.util.find_spec(name) is not None
    python: str = sys.executable


def _binary_name(kind: EngineKind) -> str:
    return kind.value + (".exe" if os.name == "nt" else "")


def _kind_of(path: str) -> EngineKind | None:
    stem = Path(path).name.removesuffix(".exe")
    return next((k for k in ENGINE_ORDER if k.value == stem), None)


def _in_folder(folder: str, look: Lookups) -> Engine | None:
    for kind in ENGINE_ORDER:
        candidate = os.path.join(folder, _binary_name(kind))
        if look.is_executable(candidate):
            return Engine(kind, candidate)
    return None


def _at(path: str, look: Lookups, origin: str) -> Engine:
    """The engine a user-given path names: a binary of a known kind, or a folder holding one."""
    if look.is_executable(path):
        kind = _kind_of(path)
        if kind is None:
            names = ", ".join(k.value for k in ENGINE_ORDER)
            raise EngineError(f"{origin} {path!r} is not one of {names}")
        return Engine(kind, path)
    found = _in_folder(path, look)
    if found is None:
        raise EngineError(f"{origin} {path!r} is neither a llama.cpp binary nor a folder holding one")
    return found


def find_engine(explicit: str | None = None, look: Lookups | None = None) -> Engine:
    """The engine Rule 1 picks; raises `EngineError` (HOW_TO_GET_ONE) when there is none."""
    look = look or Lookups()
    if explicit:
        return _at(explicit, look, "llama.cpp location")
    from_env = look.environ.get(ENV_BIN)
    if from_env:
        return _at(from_env, look, ENV_BIN)
    for kind in ENGINE_ORDER:
        found = look.which(_binary_name(kind))
        if found:
            return Engine(kind, found)
    if look.has_module(EngineKind.PYTHON.value):
        return Engine(EngineKind.PYTHON, look.python)
    raise EngineError(HOW_TO_GET_ONE)
