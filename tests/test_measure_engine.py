"""Which llama.cpp `measure` picks (engine.py Rules 1–3), with the lookups given as tables, not PATH."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gguf_budget.core.measure.engine import (
    ENV_BIN, HOW_TO_GET_ONE, Engine, EngineError, EngineKind, Lookups, find_engine,
)


def lookups(on_path: dict[str, str] | None = None, files: set[str] = frozenset(), env: dict[str, str] | None = None,
            modules: set[str] = frozenset()) -> Lookups:
    on_path = on_path or {}
    return Lookups(which=on_path.get, environ=env or {}, is_executable=lambda p: p in files,
                   has_module=lambda m: m in modules, python="/usr/bin/python3")


@pytest.mark.parametrize("on_path, expected", [
    # every kind on PATH: llama-cli first (Rule 2)
    ({"llama-cli": "/b/llama-cli", "llama-completion": "/b/llama-completion", "llama-server": "/b/llama-server"},
     Engine(EngineKind.CLI, "/b/llama-cli")),
    ({"llama-server": "/b/llama-server", "llama-completion": "/b/llama-completion"},
     Engine(EngineKind.COMPLETION, "/b/llama-completion")),
    ({"llama-server": "/b/llama-server"}, Engine(EngineKind.SERVER, "/b/llama-server")),
])
def test_path_search_prefers_cli_then_completion_then_server(on_path, expected):
    assert find_engine(look=lookups(on_path)) == expected


def test_llama_cpp_python_is_the_last_resort():
    assert find_engine(look=lookups(modules={"llama_cpp"})) == Engine(EngineKind.PYTHON, "/usr/bin/python3")
    assert find_engine(look=lookups({"llama-server": "/b/llama-server"}, modules={"llama_cpp"})).kind is EngineKind.SERVER


def test_nothing_found_says_how_to_get_one():
    with pytest.raises(EngineError) as e:
        find_engine(look=lookups())
    assert str(e.value) == HOW_TO_GET_ONE
    assert "PATH" in HOW_TO_GET_ONE and ENV_BIN in HOW_TO_GET_ONE and "llama-cpp-python" in HOW_TO_GET_ONE


def test_environment_folder_beats_path():
    look = lookups({"llama-cli": "/usr/bin/llama-cli"}, files={"/opt/ll/llama-server"}, env={ENV_BIN: "/opt/ll"})
    assert find_engine(look=look) == Engine(EngineKind.SERVER, os.path.join("/opt/ll", "llama-server"))


def test_explicit_binary_beats_everything_and_must_be_a_known_tool():
    look = lookups({"llama-completion": "/usr/bin/llama-completion"}, files={"/x/llama-server", "/x/python"},
                   env={ENV_BIN: "/opt/ll"})
    assert find_engine("/x/llama-server", look) == Engine(EngineKind.SERVER, "/x/llama-server")
    with pytest.raises(EngineError, match="is not one of llama-cli, llama-completion, llama-server"):
        find_engine("/x/python", look)


def test_explicit_path_that_holds_nothing_is_an_error_not_a_fall_through():
    look = lookups({"llama-completion": "/usr/bin/llama-completion"})
    with pytest.raises(EngineError, match="neither a llama.cpp binary nor a folder holding one"):
        find_engine("/nowhere", look)
    with pytest.raises(EngineError, match=ENV_BIN):
        find_engine(look=lookups(env={ENV_BIN: "/nowhere"}))


def test_real_filesystem_lookups_find_an_executable_in_a_folder(tmp_path: Path):
    binary = tmp_path / "llama-completion"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "llama-cli").write_text("not executable, so not a candidate")
    found = find_engine(look=Lookups(which=lambda _: None, environ={ENV_BIN: str(tmp_path)}))
    assert found == Engine(EngineKind.COMPLETION, str(binary))
