"""The headline's three tiers — fits, tight, won't — each with its cheapest fix, in the window's view and in `fit`.

A real GGUF header (tests/gguf_factory.py) on typed machines, at 32k tokens, CPU only (llama-server's need
468,859,940 B, peak 552,067,140 B with its prompt cache counted):
  fits:   8 GiB available − 6 GiB reserve = 2 GiB usable, far above the need;
  tight:  6 GiB + 500,000,000 B available: 500 MB usable, 31 MB (6 %) left after the need — under 10 %;
  paging: no reserve and 520,000,000 B available: admitted (the need fits) but the peak is above it;
  won't:  6.3 GiB available: 322 MB usable, short by 74 MiB — the cheapest fix is a smaller context.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from gguf_factory import ArchDesc

from gguf_budget.core import hypothetical_machine, load_model
from gguf_budget.core.explorer.derive import derive
from gguf_budget.core.explorer.headline import exact_size, plan_flags
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit.load_tier import PAGING, LoadTier
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.machine.usable import DEFAULT_HOST_RESERVE
from gguf_budget.core.plan.budget import Budget
from gguf_budget.gui.cli import main

GiB = 1 << 30
DESC = ArchDesc(name="tier-llama", n_layer=8, n_embd=1024, n_ff=2816, n_head=16, n_head_kv=4, n_vocab=16384,
                context_length=32768)
CTX = 32768
MACHINES = {  # name: (host available, host reserve, tier, why starts with)
    "fits": (8 * GiB, DEFAULT_HOST_RESERVE, LoadTier.FITS, "fits"),
    "tight": (6 * GiB + 500_000_000, DEFAULT_HOST_RESERVE, LoadTier.TIGHT, "tight: "),
    "paging": (520_000_000, 0, LoadTier.TIGHT, PAGING),
    "won't": (int(6.3 * GiB), DEFAULT_HOST_RESERVE, LoadTier.WONT, "won't fit: host short by"),
}


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    from gguf_factory import write_gguf
    return write_gguf(tmp_path_factory.mktemp("tiers") / "tier-llama.gguf", DESC, "header_only")[0]


def cli(capsys, path, available: int, reserve: int, *more: str) -> tuple[int, dict]:
    code = main(["fit", str(path), "--ctx", str(CTX), "--no-gpu", "--cpu-features", "none", "--no-measure",
                 "--host-available", str(available), "--host-reserve", str(reserve), "--json", *more])
    return code, json.loads(capsys.readouterr().out)


def view_of(path, available: int, reserve: int):
    machine = hypothetical_machine(available)
    state = ExplorerState(model=load_model(path), budget=Budget.of(4 * GiB), ctx=CTX, machine=machine,
                          reserves=Reserves(host=reserve))
    return derive(state)


@pytest.mark.parametrize("name", list(MACHINES))
def test_each_tier_is_said_alike_by_the_window_and_fit(capsys, path, name):
    available, reserve, tier, why = MACHINES[name]
    code, d = cli(capsys, path, available, reserve)
    answer = view_of(path, available, reserve).headline.load
    assert answer.tier is tier and d["peak_memory"]["tier"] == tier.value
    assert answer.why == d["peak_memory"]["why"] and answer.why.startswith(why)
    assert code == (3 if tier is LoadTier.WONT else 0)
    if tier is LoadTier.WONT:
        assert answer.plain.startswith("Does not fit at 32k context: host short by")
    else:
        assert answer.plain.startswith("Runs on the CPU alone, in RAM, at 32k context, ≈ ")
    if name == "paging":  # never "fits" beside a peak above the machine
        assert d["peak_memory"]["full"] > available and not _verdict_line(capsys, path, available).startswith("fits")


def _verdict_line(capsys, path, available: int) -> str:
    main(["fit", str(path), "--ctx", str(CTX), "--no-gpu", "--cpu-features", "none", "--no-measure",
          "--host-available", str(available), "--host-reserve", "0"])
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Verdict"))
    return line.removeprefix("Verdict").strip()


@pytest.mark.parametrize("name", ["tight", "paging", "won't"])
def test_a_load_that_is_not_fits_names_its_cheapest_fix_and_fit_at_that_fix_fits(capsys, path, name):
    available, reserve, _, _ = MACHINES[name]
    _, d = cli(capsys, path, available, reserve)
    view = view_of(path, available, reserve)
    fix = d["fix"]
    assert fix is not None and fix["reaches"] == "fits"
    assert view.fix is not None and (view.fix.knob.value, view.fix.change, view.fix.cost) == (
        fix["knob"], fix["change"], fix["cost"])
    assert view.headline.load.fix.startswith(f"cheapest fix: {fix['change']} (fits) — costs {fix['cost']}")
    asked = {"ctx": ("--ctx", str(fix["ctx"])), "kv type": ("--kv-type", "q8_0")}[fix["knob"]]
    code, at_fix = cli(capsys, path, available, reserve, *asked)
    assert code == 0 and at_fix["peak_memory"]["tier"] == "fits"


def test_a_load_that_fits_names_no_fix(capsys, path):
    available, reserve, _, _ = MACHINES["fits"]
    _, d = cli(capsys, path, available, reserve)
    view = view_of(path, available, reserve)
    assert d["fix"] is None and view.fix is None and view.headline.load.fix == ""


def test_the_plan_names_its_runtime_and_its_flags_with_exact_sizes(path):
    view = view_of(path, 8 * GiB, DEFAULT_HOST_RESERVE)  # a 4 GiB budget on 2 GiB usable: tight
    assert view.headline.plan.tier is LoadTier.TIGHT and view.headline.plan.why.startswith("tight: the budget is above")
    view = derive(replace(view.state, budget=Budget.of(GiB)))
    plan = replace(view.plan, budget=Budget.of(17_688_006_656), ctx=86_912)
    assert plan_flags(plan) == "--ram-budget 16.47 GiB (17,688,006,656 B) --ctx 86912"
    assert exact_size(17_688_006_656) == "16.47 GiB (17,688,006,656 B)"
    answer = view.headline.plan
    assert answer.title == "Budget plan — a runtime that streams layers under a RAM budget"
    assert answer.plain.startswith("Runs with all 8 layers in 1.00 GiB of RAM at 32k context")
    assert answer.tier is LoadTier.FITS and answer.glossary == "Budget plan" and answer.detail == view.headline.text


def test_when_the_answers_disagree_one_line_says_why(gguf_file):
    """A model whose weights (≈ 1 GB) the machine cannot hold: the plan fits its 500 MB budget by streaming layers,
    the full load does not fit 600 MB usable — the line says what each does."""
    big = ArchDesc(name="big-llama", n_layer=16, n_embd=2048, n_ff=8192, n_head=16, n_head_kv=4, n_vocab=16384,
                   context_length=4096)
    model = load_model(gguf_file(big, "header_only"))
    machine = hypothetical_machine(DEFAULT_HOST_RESERVE + 600_000_000)
    view = derive(ExplorerState(model=model, budget=Budget.of(500_000_000), ctx=4096, machine=machine))
    a, b = view.headline.plan, view.headline.load
    assert a.tier is not LoadTier.WONT and b.tier is LoadTier.WONT and view.plan.n_pinned < 16
    assert view.headline.differ.startswith(f"Why they differ: the Budget plan streams {16 - view.plan.n_pinned} of 16 "
                                           "layers from disk for every token")
    assert b.why in view.headline.differ
    agree = derive(replace(view.state, machine=hypothetical_machine(16 * GiB), budget=Budget.of(4 * GiB)))
    assert agree.headline.plan.tier is agree.headline.load.tier is LoadTier.FITS and agree.headline.differ == ""


def test_when_no_setting_rescues_it_the_fix_is_the_largest_smaller_quant_that_fits(gguf_file):
    """A Q8_0 file (1.03 GiB) on 900 MB usable at its whole 4k context: no slot, KV type or smaller context is
    enough, and Q4_K_M is still too big; Q3_K_M, priced as a full load of that quantization, fits."""
    big = ArchDesc(name="big-llama", n_layer=16, n_embd=2048, n_ff=8192, n_head=16, n_head_kv=4, n_vocab=16384,
                   context_length=4096)
    model = load_model(gguf_file(big, "header_only"))
    view = derive(ExplorerState(model=model, budget=Budget.of(500_000_000), ctx=4096,
                                machine=hypothetical_machine(DEFAULT_HOST_RESERVE + 900_000_000)))
    fix = view.fix
    assert view.headline.load.tier is LoadTier.WONT and fix is not None and fix.knob.value == "quant"
    assert fix.change.startswith("Q3_K_M (priced, not downloaded; was Q8_0)") and fix.reaches is LoadTier.FITS
    assert "bits per weight: lower quality, and a new download" in fix.cost
    assert fix.load.fit.verdict.admitted and fix.load.fit.weights.file_bytes < model.complete_file_bytes


@pytest.mark.parametrize("name", ["tight", "won't"])
def test_the_fix_search_searches_no_candidates_largest_ctx(monkeypatch, path, name):
    """load_fix Rule 2: a fix is told by its fit and ctx, so pricing the candidates runs no largest-ctx search (each
    is a dozen fits); the fix found is the one the answers above name."""
    from gguf_budget.core.explorer import full_load as full_load_module
    from gguf_budget.core.explorer.load_fix import cheapest_fix
    from gguf_budget.core.speed.token_bytes import TokenPrices

    available, reserve, *_ = MACHINES[name]
    model = load_model(path)
    state = ExplorerState(model=model, ctx=CTX, machine=hypothetical_machine(available), reserves=Reserves(host=reserve))
    load = full_load_module.full_load(model, state, TokenPrices.of(model))
    searched = []
    real = full_load_module.largest_ctx
    monkeypatch.setattr(full_load_module, "largest_ctx", lambda *a: searched.append(a) or real(*a))
    fix = cheapest_fix(model, state, load, TokenPrices.of(model))
    assert fix is not None and fix.reaches in (LoadTier.FITS, LoadTier.TIGHT)
    assert searched == []
