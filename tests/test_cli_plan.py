"""`gguf-budget plan` and `sweep`: exit codes 0 / 2 / 3, the JSON keys, and no Qt on the way."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from gguf_factory import ArchDesc

from gguf_budget.core import LEDGER_LINES
from gguf_budget.gui.cli import main

pytestmark = pytest.mark.usefixtures("measured_machine")  # conftest: this machine's figures measured once a run, not a test

BASE = 24 * 1024 * 1024
UNTIED = ArchDesc(n_layer=4, n_vocab=2048)
MINIMUM = BASE + 200_448  # test_planner_ledger.py: ctx 128, streamed head, one buffer
PLAN_KEYS = {"budget", "feasible", "overridden", "unlimited", "ctx", "ctx_capped", "stream_lm_head", "n_buffers",
             "n_pinned", "n_layer", "weight_ceiling", "ledger", "total", "minimum_required", "report"}


@pytest.fixture
def path(gguf_file):
    return str(gguf_file(UNTIED, "header_only"))


def run_json(capsys, *argv: str) -> tuple[int, dict]:
    code = main(list(argv) + ["--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("args", "code", "expect"), [
    (["--budget", "64M"], 0,
     {"feasible": True, "overridden": False, "unlimited": False, "ctx": 2048, "n_pinned": 4,
      "minimum_required": MINIMUM}),
    (["--budget", str(MINIMUM - 1)], 3,
     {"feasible": False, "overridden": False, "weight_ceiling": None, "ctx": 128, "total": MINIMUM}),
    (["--budget", str(MINIMUM - 1), "--force"], 0,
     {"feasible": False, "overridden": True, "weight_ceiling": None, "over_budget_by": 1}),
    (["--budget", "0"], 0, {"feasible": True, "unlimited": True, "weight_ceiling": None, "n_pinned": 4}),
    (["--budget", "64M", "--ctx", "640", "--buffers", "1", "--head", "stream", "--kv-type", "q8_0"], 0,
     {"ctx": 640, "ctx_explicit": True, "n_buffers": 1, "stream_lm_head": True, "kv_type": "q8_0",
      "weight_ceiling": 64 * 1024 * 1024 - (BASE + 3584 + 8192 + 4 * 640 * 4 + 640 * 64 * 4 + 4 * 640 * 68)}),
])
def test_plan_json_and_exit_codes(capsys, path, args, code, expect):
    got, d = run_json(capsys, "plan", path, *args)
    assert got == code
    assert PLAN_KEYS <= set(d) and tuple(d["ledger"]) == LEDGER_LINES
    assert d["total"] == sum(d["ledger"].values()) and d["n_layer"] == 4
    assert {k: d[k] for k in expect} == expect


def test_plan_text_is_the_report(capsys, path):
    assert main(["plan", path, "--budget", "25165824"]) == 3
    assert capsys.readouterr().out.startswith("RAM budget impossible: requested 24.00 MiB")
    assert main(["plan", path, "--budget", "1.5G"]) == 0
    assert capsys.readouterr().out.startswith("Execution Plan — contract: peak memory ≤ 1.50 GiB")


@pytest.mark.parametrize(("args", "message"), [
    (["--budget", "64M", "--buffers", "9"], "--buffers: a ring depth must be from 1 to 8 buffers, got 9"),
    (["--budget", "64M", "--ctx", "0"], "--ctx: a context must be from 1 to 16,777,216 tokens, got 0"),
    (["--budget", "lots"], "not a size"),
    (["--budget", "64M", "--kv-type", "q3_k"], "invalid choice"),
])
def test_bad_plan_input_exits_2(capsys, path, args, message):
    try:
        code = main(["plan", path, *args])
    except SystemExit as e:  # argparse rejects the value itself
        code = e.code
    assert code == 2 and message in capsys.readouterr().err


def test_a_tied_model_cannot_stream_its_head_exit_2(capsys, gguf_file):
    tied = str(gguf_file(ArchDesc(tied=True), "header_only"))
    assert main(["plan", tied, "--budget", "64M", "--head", "stream"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "tied" in err


def test_sweep_json_rows_and_thresholds(capsys, path):
    code, d = run_json(capsys, "sweep", path, "--budgets", "24M:27M:512K")
    assert code == 0 and len(d["rows"]) == 7
    assert set(d["rows"][0]) == {"budget", "feasible", "ctx", "n_pinned", "stream_lm_head", "n_buffers", "total",
                                 "ring_planned", "tok_s", "tok_s_full_context", "stream_bytes_per_token"}
    assert d["first_feasible"] == 24 * 1024 * 1024 + 512 * 1024 and d["all_pinned"] == 26 * 1024 * 1024
    assert main(["sweep", path, "--budgets", "24M:27M:512K", "--ctx", "512"]) == 0
    assert "Every layer pinned at ctx 512" in capsys.readouterr().out


@pytest.mark.parametrize("budgets", ["1M:2M", "0:1G:1M", "1:1T:1"])
def test_bad_sweep_ranges_exit_2(capsys, path, budgets):
    with pytest.raises(SystemExit) as info:
        main(["sweep", path, "--budgets", budgets])
    assert info.value.code == 2 and "--budgets" in capsys.readouterr().err


def test_the_real_command_exits_3_without_traceback_and_never_loads_qt(path):
    probe = ("import sys; from gguf_budget.gui.cli import main; code = main(sys.argv[1:]); "
             "assert not [m for m in sys.modules if m.startswith(('PySide6', 'pyqtgraph'))]; sys.exit(code)")
    result = subprocess.run([sys.executable, "-c", probe, "plan", path, "--budget", "24M"],
                            capture_output=True, text=True)
    assert result.returncode == 3 and result.stderr == ""
    assert "RAM budget impossible" in result.stdout
    missing = subprocess.run([sys.executable, "-m", "gguf_budget.gui.cli", "plan", path + ".gone", "--budget", "1G"],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1
    assert "Traceback" not in missing.stderr
