"""`--log-level LEVEL`: a global option, anywhere on the line; the app's log on stderr from that level up."""

from __future__ import annotations

import subprocess
import sys

import pytest
from gguf_factory import ArchDesc

from gguf_budget.gui.cli import main
from gguf_budget.gui.cli.launch import parse_launch_args
from gguf_budget.gui.cli.log_level import DEFAULT_LOG_LEVEL, log_to_stderr, split_log_level


@pytest.fixture(autouse=True)
def default_level_after():
    yield
    log_to_stderr(DEFAULT_LOG_LEVEL)


@pytest.fixture
def path(gguf_file) -> str:
    return str(gguf_file(ArchDesc(), "header_only"))


@pytest.mark.parametrize(("args", "level", "rest"), [
    (["plan", "m.gguf"], "WARNING", ["plan", "m.gguf"]),
    (["--log-level", "debug", "plan", "m.gguf"], "DEBUG", ["plan", "m.gguf"]),
    (["plan", "m.gguf", "--log-level=INFO", "--budget", "1G"], "INFO", ["plan", "m.gguf", "--budget", "1G"]),
    (["m.gguf", "--log-level", "error"], "ERROR", ["m.gguf"]),
])
def test_the_level_is_taken_out_wherever_it_stands(args, level, rest):
    assert split_log_level(args) == (level, rest)


def test_debug_shows_the_command_and_the_load_on_stderr(capsys, path):
    assert main(["--log-level", "DEBUG", "plan", path, "--budget", "1G"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("Execution Plan")
    assert "gguf-budget DEBUG gguf_budget.gui.cli: running plan" in captured.err
    assert f"gguf-budget DEBUG gguf_budget.core.model.loader: loaded {path}" in captured.err


def test_the_default_prints_nothing_extra_even_after_a_debug_run(capsys, path):
    assert main(["plan", path, "--budget", "1G", "--log-level", "debug"]) == 0
    assert "DEBUG" in capsys.readouterr().err
    assert main(["plan", path, "--budget", "1G"]) == 0
    assert capsys.readouterr().err == ""


def test_a_refused_input_is_logged_at_debug_with_its_traceback_and_said_in_one_line(capsys, path):
    assert main(["--log-level", "DEBUG", "fit", path, "--host-available", "8G", "--gpu-total", "8G",
                 "--gpu-free", "16G"]) == 2
    err = capsys.readouterr().err
    assert "fit refused its input" in err and "RequestError" in err
    assert err.splitlines()[-1].startswith("gguf-budget fit: hypothetical GPU free memory must lie")


def test_an_unknown_level_exits_2_in_one_line(capsys, path):
    with pytest.raises(SystemExit) as info:
        main(["--log-level", "loud", "plan", path, "--budget", "1G"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1 and "--log-level" in err and "'LOUD'" in err


@pytest.mark.parametrize("parse", [
    lambda: main(["--help"]),
    lambda: parse_launch_args(["--help"]),
])
def test_help_names_the_option(capsys, parse):
    with pytest.raises(SystemExit) as info:
        parse()
    assert info.value.code == 0 and "--log-level LEVEL" in capsys.readouterr().out


def test_the_real_command_logs_to_its_stderr(path):
    result = subprocess.run([sys.executable, "-m", "gguf_budget.gui.cli", "--log-level", "DEBUG", "inspect", path],
                            capture_output=True, text=True)
    assert result.returncode == 0 and "DEBUG gguf_budget.core.model.loader: loaded" in result.stderr
