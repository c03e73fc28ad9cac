"""The "Run it" answers (issue 25, item 1): the Budget plan's runtime flags and the full load's llama-server
line, never a command for a configuration that does not fit — then what would fit, and that it does."""

from __future__ import annotations

from dataclasses import replace

import pytest
from command_parse import parse_llama_server
from hypothesis import given
from hypothesis import strategies as st

from gguf_budget.core import load_model
from gguf_budget.core.explorer.derive import derive
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.plan.search import plan_memory
from gguf_budget.core.ranges import BUDGET
from gguf_budget.core.units import parse_size, size_text
from gguf_budget.core.quant.ladder import LadderRequest, quant_ladder
from gguf_budget.core.quant.would_fit import smaller_quant, wants_smaller_quant
from gguf_budget.core.views.run_it import FORCE_FLAG, budget_plan_run, full_load_run
from gguf_budget.gui.cli import main

GiB = 1 << 30


@pytest.fixture(scope="module")
def eight_b():
    return load_model(str(catalogue_path(find_entry("llama-3.1-8b-instruct"))))


@pytest.fixture(scope="module")
def seventy_b():
    return load_model(str(catalogue_path(find_entry("llama-3.1-70b-instruct"))))


def host(gib: float):
    return hypothetical_machine(host_available=int(gib * GiB), host_total=int(gib * GiB) + 4 * GiB)


@given(st.integers(min_value=BUDGET.low, max_value=BUDGET.high))
def test_the_size_text_reads_back_as_the_same_budget(n):
    assert parse_size(size_text(n)) == n


def test_the_size_text_is_short_where_the_budget_is_round():
    assert [size_text(n) for n in (6 * GiB, 3 * GiB // 2, 512 << 20, 0, 1000)] == ["6G", "1536M", "512M", "0", "1000"]


def test_a_feasible_budget_plan_runs_with_its_budget_and_its_own_ctx(eight_b):
    view = derive(ExplorerState(model=eight_b, budget=Budget.of(6 * GiB)))
    run = budget_plan_run(view.plan)
    assert run.command == f"--ram-budget 6G --ctx {view.plan.ctx}"
    assert view.plan.ctx > 4096  # speed first grew ctx beyond 4096: the flag carries the plan's ctx, not a default
    assert f"ctx {view.plan.ctx:,}" in run.text


def test_an_impossible_plan_has_no_command_and_the_budget_it_names_fits(eight_b):
    plan = derive(ExplorerState(model=eight_b, budget=Budget.of(GiB), ctx=8192)).plan
    assert plan.impossible
    run = budget_plan_run(plan)
    assert run.command is None and run.text.startswith("no command — a budget of at least")
    assert "or a smaller ctx" in run.text  # the ctx was asked: lowering it would help too
    needed = plan.minimum_required
    again = plan_memory(eight_b, replace(derive(ExplorerState(model=eight_b, ctx=8192)).state.request(),
                                         budget=Budget.of(needed)))
    assert not again.impossible and budget_plan_run(again).command == f"--ram-budget {needed} --ctx 8192"


def test_a_forced_plan_runs_with_the_force_flag(eight_b):
    plan = derive(ExplorerState(model=eight_b, budget=Budget.of(100 << 20), force=True)).plan
    run = budget_plan_run(plan)
    assert run.command == f"--ram-budget 100M --ctx {plan.ctx} {FORCE_FLAG}"


def test_an_unlimited_budget_is_spelt_0(eight_b):
    plan = derive(ExplorerState(model=eight_b, budget=Budget.unlimited(), ctx=8192)).plan
    assert budget_plan_run(plan).command == "--ram-budget 0 --ctx 8192"


def test_a_full_load_that_fits_runs_the_fits_own_command(eight_b):
    load = derive(ExplorerState(model=eight_b, machine=host(48))).full_load
    run = full_load_run(load.choice, load.max_ctx)
    assert run.command == load.fit.recommended.shell
    parsed = parse_llama_server(run.command)
    assert parsed.ctx == load.ctx and run.text == f"fits CPU-only at ctx {load.ctx:,}"


def test_a_full_load_too_big_at_the_asked_ctx_names_a_ctx_that_fits(eight_b):
    load = derive(ExplorerState(model=eight_b, machine=host(16), ctx=200_000)).full_load
    assert not load.fit.verdict.admitted and not wants_smaller_quant(load.choice, load.max_ctx)
    run = full_load_run(load.choice, load.max_ctx)
    assert run.command is None and run.text == f"no command — ctx {load.max_ctx:,} would fit with 0 GPU layers"
    there = derive(ExplorerState(model=eight_b, machine=host(16), ctx=load.max_ctx)).full_load
    assert full_load_run(there.choice, there.max_ctx).command is not None


def test_a_full_load_nothing_rescues_but_a_smaller_quant_names_one_that_fits(seventy_b):
    machine = host(30)
    load = derive(ExplorerState(model=seventy_b, machine=machine)).full_load
    assert wants_smaller_quant(load.choice, load.max_ctx)
    assert full_load_run(load.choice, load.max_ctx).text.endswith("View ▸ Quants prices smaller types")
    smaller = smaller_quant(seventy_b, machine, LadderRequest())
    assert smaller is not None
    run = full_load_run(load.choice, load.max_ctx, smaller, priced=True)
    assert run.command is None and run.text.startswith(f"no command — {smaller} of this model would fit")
    row = quant_ladder(seventy_b, machine).row(smaller)
    assert row.fits_in_ram and row.mix.bits_per_weight < 4.5  # smaller than the Q4_K_M on disk


def test_when_no_quant_fits_either_the_line_says_so(seventy_b):
    machine = host(8)
    load = derive(ExplorerState(model=seventy_b, machine=machine)).full_load
    assert smaller_quant(seventy_b, machine, LadderRequest()) is None
    run = full_load_run(load.choice, load.max_ctx, None, priced=True)
    assert run.command is None and run.text.startswith("no command — no smaller ctx and no quant type") and \
        "host short by" in run.text


def test_the_cli_prints_the_same_commands_and_the_same_would_fit(capsys, eight_b, seventy_b):
    assert main(["plan", "--catalog", "llama-3.1-8b-instruct", "--budget", "6G", "--print-command"]) == 0
    plan = derive(ExplorerState(model=eight_b, budget=Budget.of(6 * GiB))).plan
    assert capsys.readouterr().out == budget_plan_run(plan).command + "\n"
    assert main(["plan", "--catalog", "llama-3.1-8b-instruct", "--budget", "100M", "--print-command"]) == 3
    out, err = capsys.readouterr()
    assert out == "" and "no command to print — a budget of at least" in err and err.count("\n") == 1
    args = ["fit", "--catalog", "llama-3.1-70b-instruct", "--host-available", "30G", "--no-measure", "--print-command"]
    assert main(args) == 3
    out, err = capsys.readouterr()
    assert out == "" and f"{smaller_quant(seventy_b, host(30), LadderRequest())} of this model would fit" in err
    assert "gguf-budget quants MODEL lists each type" in err and "dock" not in err and "View ▸" not in err
