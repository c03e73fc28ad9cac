"""The command line each engine kind runs for a measurement (command.py Rules 1–3)."""

from __future__ import annotations

import pytest

from gguf_budget.core.errors import RequestError
from gguf_budget.core.measure.command import (
    N_PREDICT, PROMPT, PYTHON_SCRIPT, MeasureSettings, completion_request, measure_command,
)
from gguf_budget.core.measure.engine import Engine, EngineKind
from gguf_budget.core.measure.runner import failure_line

COMPLETION = Engine(EngineKind.COMPLETION, "/b/llama-completion")
CLI = Engine(EngineKind.CLI, "/b/llama-cli")
SERVER = Engine(EngineKind.SERVER, "/b/llama-server")
PYTHON = Engine(EngineKind.PYTHON, "/usr/bin/python3")


@pytest.mark.parametrize("engine, settings, port, expected", [
    (COMPLETION, MeasureSettings(2048, 0, "f16"), None,
     "/b/llama-completion -m m.gguf -c 2048 -ngl 0 -ctk f16 -ctv f16 -p {P} -n 8 --ignore-eos -no-cnv -v"),
    # a quantized cache asks for flash attention; GPU layers left to the engine when None
    (CLI, MeasureSettings(512, None, "q8_0"), None,
     "/b/llama-cli -m m.gguf -c 512 -ctk q8_0 -ctv q8_0 -fa on -p {P} -n 8 --ignore-eos -st -v"),
    (SERVER, MeasureSettings(4096, 33, "f16"), 5555,
     "/b/llama-server -m m.gguf -c 4096 -ngl 33 -ctk f16 -ctv f16 --host 127.0.0.1 -np 1 -v --port 5555"),
])
def test_binary_command_lines(engine, settings, port, expected):
    argv = measure_command(engine, "m.gguf", settings, port)
    assert list(argv) == [PROMPT if word == "{P}" else word for word in expected.split()]


def test_llama_cpp_python_runs_a_script_with_ggml_type_numbers():
    argv = measure_command(PYTHON, "m.gguf", MeasureSettings(1024, None, "q8_0"))
    # -1 = every layer on the GPU (llama-cpp-python's convention); q8_0 is ggml type 8
    assert argv == ("/usr/bin/python3", "-c", PYTHON_SCRIPT, "m.gguf", "1024", "-1", "8", PROMPT, str(N_PREDICT))
    compile(PYTHON_SCRIPT, "<measure>", "exec")


def test_server_needs_a_port_and_is_asked_once():
    with pytest.raises(RequestError, match="port"):
        measure_command(SERVER, "m.gguf", MeasureSettings(512))
    assert completion_request() == {"prompt": PROMPT, "n_predict": N_PREDICT, "ignore_eos": True}


@pytest.mark.parametrize("kwargs, message", [
    ({"ctx": 0}, "at least 1"), ({"ctx": 8, "gpu_layers": -1}, "negative"), ({"ctx": 8, "kv_type": "q3"}, "one of"),
])
def test_settings_are_checked(kwargs, message):
    with pytest.raises(RequestError, match=message):
        MeasureSettings(**kwargs)


def test_settings_describe_themselves():
    assert MeasureSettings(2048, None, "q8_0").describe() == "ctx 2,048, GPU layers engine's default, KV q8_0"


@pytest.mark.parametrize("log, line", [
    # llama.cpp's last error-level line, not /usr/bin/time's block after it
    ("+ llama-cli …\n0.00.024.805 E llama_init_from_model: K cache type q8_0 does not divide 16\n"
     "0.00.039.247 E srv  llama_server: exiting due to model loading error\n"
     "\tCommand being timed: \"llama-cli\"\n\tExit status: 1\n",
     "0.00.039.247 E srv  llama_server: exiting due to model loading error"),
    # older logs without levels: a line naming an error
    ("llama_model_load: error loading model: bad magic\nmain: exiting\n", "llama_model_load: error loading model: bad magic"),
    ("just one line\n", "just one line"),
    ("", "(no output)"),
])
def test_failure_line_names_llama_cpps_own_reason(log, line):
    assert failure_line(log) == line
