"""The real llama.cpp the measuring tests run, and what its log says, read independently of the app.

In CI (`CI=true`; `.ci/run` builds llama.cpp and sets $GGUF_BUDGET_LLAMA_BIN) a missing
llama.cpp fails the test; on a developer's machine without one the test is skipped, saying how
to get one — never a silent pass.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NoReturn

import pytest

from gguf_budget.core.measure.engine import Engine, EngineError, EngineKind, find_engine

_BUFFER = re.compile(r"(?P<device>\S+) +(?P<kind>model|KV|RS|output|compute) buffer size = +(?P<mib>\d+\.\d+) MiB")
_NEW_LOAD = "llama_model_loader: loaded meta data"
ENV_PYTHON = "GGUF_BUDGET_LLAMA_PYTHON"


def llama_engine(kind: EngineKind | None = None) -> Engine:
    """The llama.cpp found the way `measure` finds it (of `kind` when given), or fail/skip."""
    try:
        engine = find_engine()
        if kind is not None and engine.kind is not kind:
            folder = Path(engine.executable).parent
            engine = find_engine(str(folder / kind.value))
    except EngineError as e:
        missing("a real llama.cpp", str(e))
    return engine


def missing(what: str, why: str) -> NoReturn:
    """In CI a missing engine fails the test; elsewhere the test is skipped, saying how to get one."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must measure with {what}: {why}")
    pytest.skip(f"needs {what}: {why}")


def llama_cpp_python_engine() -> Engine:
    """llama-cpp-python in the interpreter $GGUF_BUDGET_LLAMA_PYTHON names (.ci/build_llamacpp.sh makes
    one, on the same llama.cpp as the binaries), or fail in CI / skip elsewhere, saying how to get one."""
    python = os.environ.get(ENV_PYTHON, "")
    if python and os.access(python, os.X_OK):
        return Engine(EngineKind.PYTHON, python)
    missing("a real llama-cpp-python",
            f"set ${ENV_PYTHON} to a Python that can import llama_cpp (.ci/build_llamacpp.sh makes one: py/bin/python)")


def printed_buffers(log: str) -> list[tuple[str, str, str]]:
    """(kind, device, MiB) of every buffer line of the last model load in the raw log text."""
    last_load = log.rsplit(_NEW_LOAD, 1)[-1]
    return sorted((m["kind"], m["device"], m["mib"]) for m in _BUFFER.finditer(last_load))

