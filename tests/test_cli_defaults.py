"""The command line a new user meets (issue 17, item 8): help that names the window, defaults for
`plan --budget` and `sweep --budgets`, `--catalog` on every model command, fit notes that say what
the flags did, and errors that name options."""

from __future__ import annotations

import json

import pytest
from gguf_factory import ArchDesc

from gguf_budget.core import BudgetRequest, automatic_range, budget_range, load_model
from gguf_budget.core.machine.snapshot import hypothetical_machine

pytestmark = pytest.mark.usefixtures("measured_machine")  # conftest: this machine's figures measured once a run, not a test
GiB = 1 << 30
from gguf_budget.gui.cli import main
from gguf_budget.gui.cli.commands import plan_cmd

DENSE = ArchDesc(n_layer=4, n_vocab=2048, context_length=2048)
MOE = ArchDesc(arch="qwen2moe", n_layer=4, n_vocab=8192, n_expert=4, n_expert_used=2)
CATALOGUED = "llama-3.2-1b-instruct"


@pytest.fixture
def path(gguf_file):
    return str(gguf_file(DENSE, "header_only"))


def exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as e:  # argparse's --help and bad values
        return int(e.code or 0)


def test_top_level_help_names_the_window_and_its_screenshot_options(capsys):
    assert exit_code(["--help"]) == 0
    out = capsys.readouterr().out
    assert "gguf-budget [FILE]" in out and "open the desktop window" in out
    assert all(option in out for option in ("--screenshot", "--view", "--compare"))


def test_help_is_a_word_not_a_file(capsys):
    assert exit_code(["help"]) == 0
    captured = capsys.readouterr()
    assert "no such file" not in captured.err and "gguf-budget [FILE]" in captured.out
    assert exit_code(["help", "plan"]) == 0
    assert "--budget" in capsys.readouterr().out


def test_plan_without_a_budget_plans_for_this_machine_and_says_so(capsys, path):
    code = exit_code(["plan", path])
    first = capsys.readouterr().out.splitlines()[0]
    assert code in (0, 2, 3) and (code == 2 or first.startswith("Budget: this machine's usable RAM"))


def test_the_machine_budget_is_available_less_the_host_reserve(capsys, monkeypatch, path):
    monkeypatch.setattr(plan_cmd, "probe_host", lambda: hypothetical_machine(10 * GiB, captured_at=0.0))
    assert main(["plan", path, "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["budget"] == 4 * GiB
    assert captured.err.startswith("Budget: this machine's usable RAM, 4.00 GiB (10.00 GiB available − 6.00 GiB")


def test_a_machine_with_nothing_usable_asks_for_a_budget(capsys, monkeypatch, path):
    monkeypatch.setattr(plan_cmd, "probe_host", lambda: hypothetical_machine(5 * GiB, captured_at=0.0))
    assert main(["plan", path]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "give --budget SIZE" in err


def test_sweep_without_budgets_sweeps_the_windows_automatic_range(capsys, path):
    assert main(["sweep", path, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    expected = budget_range(automatic_range(load_model(path), BudgetRequest()))
    assert [r["budget"] for r in rows] == list(expected) and len(expected) > 10


@pytest.mark.parametrize("argv", [
    ["plan", "--catalog", CATALOGUED, "--budget", "2G", "--json"],
    ["sweep", "--catalog", CATALOGUED, "--budgets", "1G:2G:512M", "--json"],
    ["fit", "--catalog", CATALOGUED, "--host-available", "64G", "--no-gpu", "--json"],
    ["inspect", "--catalog", CATALOGUED, "--json"],
])
def test_every_model_command_takes_a_catalogue_name(capsys, argv):
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("command", ["plan", "sweep", "fit", "quants"])
def test_catalog_list_and_bad_names_work_for_every_model_command(capsys, command):
    assert main([command, "--catalog", "list"]) == 0
    assert CATALOGUED in capsys.readouterr().out
    assert main([command, "--catalog", "llama-2-7b"]) == 2
    assert "choose one of" in capsys.readouterr().err


def fit_json(capsys, *argv: str) -> dict:
    main(["fit", *argv, "--json"])
    return json.loads(capsys.readouterr().out)


def test_gpu_layers_on_a_machine_without_a_gpu_says_none_were_offloaded(capsys, path):
    d = fit_json(capsys, path, "--gpu-layers", "99", "--no-gpu")
    assert d["gpu_layers"] == 0
    assert any(n.startswith("99 GPU layers asked, none offloaded — no GPU") for n in d["notes"])


def test_a_context_beyond_the_trained_one_is_noted(capsys, path):
    notes = fit_json(capsys, path, "--ctx", "4096", "--host-available", "64G", "--no-gpu")["notes"]
    assert any("beyond the trained context of 2048" in n for n in notes)
    notes = fit_json(capsys, path, "--ctx", "2048", "--host-available", "64G", "--no-gpu")["notes"]
    assert not any("trained context" in n for n in notes)


def test_no_gpu_keeps_the_probed_ram_probed_and_offers_no_gpu_placement(capsys, gguf_file):
    moe = str(gguf_file(MOE, "header_only"))
    assert exit_code(["fit", moe, "--no-gpu"]) in (0, 3)
    out = capsys.readouterr().out
    assert "hypothetical" not in out and "probed" in out
    assert "the rest on the GPUs" not in out and "left out by --no-gpu" in out
    d = fit_json(capsys, moe, "--no-gpu")
    assert d["snapshot"]["source"] == "probe" and d["moe_cpu_experts"] is None


@pytest.mark.parametrize(("argv", "names"), [
    (["plan", "{path}", "--budget", "64M", "--buffers", "9"], ("--buffers", "1 to 8")),
    (["plan", "{path}", "--budget", "-1G"], ("--budget", "cannot be negative")),
    (["fit", "{path}", "--host-available", "-1G"], ("--host-available", "cannot be negative")),
    (["sweep", "{path}", "--buffers", "0"], ("--buffers", "1 to 8")),
    (["{path}", "--budget", "-1G"], ("--budget", "cannot be negative")),
])
def test_errors_name_the_option(capsys, path, argv, names):
    assert exit_code([a.format(path=path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and all(n in err for n in names)
    assert "n_buffers" not in err and "expected one argument" not in err
