"""Context tiers: the full load at 4k … 128k tokens and at the largest that fits, each exactly `fit --ctx N`."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from gguf_factory import MIXTRAL_8X7B

from gguf_budget.core.explorer.ctx_tiers import TIER_MARKS, tier_ctxs
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.speed import token_bytes
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.gui.cli import main

pytestmark = pytest.mark.usefixtures("measured_machine")  # conftest: this machine's figures measured once a run, not a test

MACHINE = ["--host-available", "32G", "--gpu-total", "12G", "--cpu-features", "none"]


@pytest.mark.parametrize("trained, tiers", [
    (2048, (2048,)), (4096, (4096,)), (32768, (4096, 8192, 16384, 32768)), (40960, (4096, 8192, 16384, 32768, 40960)),
    (1 << 20, (4096, 8192, 16384, 32768, 65536, 131072)), (None, (4096,)),
])
def test_the_tiers_run_by_doublings_up_to_the_trained_context(trained, tiers):
    assert tier_ctxs(trained) == tiers


@pytest.mark.parametrize("name", ["llama-3.1-8b-instruct", "gemma-3-12b-it"])
def test_each_tier_is_fit_at_that_ctx(capsys, name):
    path = str(catalogue_path(find_entry(name)))
    assert main(["fit", path, *MACHINE, "--json"]) in (0, 3)
    whole = json.loads(capsys.readouterr().out)
    tiers = whole["tiers"]
    assert [t["chosen"] for t in tiers].count(True) == 1
    assert [t for t in tiers if t["largest"]][0]["ctx"] == whole["max_ctx"]
    for tier in tiers:
        assert main(["fit", path, *MACHINE, "--json", "--ctx", str(tier["ctx"])]) in (0, 3)
        one = json.loads(capsys.readouterr().out)
        assert (tier["verdict"], tier["tier"], tier["gpu_layers"], tier["peak_rss"], tier["tok_s"]) == (
            one["verdict"], one["peak_memory"]["tier"], one["gpu_layers"], one["peak_memory"]["full"],
            one["tok_s_estimate"]["tok_s"] if one["tok_s_estimate"] else None)


def test_fit_tiers_prints_one_row_a_tier(capsys):
    path = str(catalogue_path(find_entry("llama-3.1-8b-instruct")))
    assert main(["fit", path, *MACHINE, "--tiers"]) == 0
    out = capsys.readouterr().out.split("Context tiers", 1)[1].splitlines()
    *rows, legend = [line for line in out[2:] if line.strip()]
    assert len(rows) >= 6 and sum("▶" in r[:4] for r in rows) == 1 and sum("★" in r[:4] for r in rows) == 1
    assert legend.strip() == TIER_MARKS and max(len(line) for line in out) <= 100


def test_a_models_token_prices_are_made_once_and_its_expert_share_found_once_a_sum(model, monkeypatch):
    """A ctx tick that moves the largest ctx re-derives the context tiers, and the tiers, the headline's fix and the
    plan view each ask for the model's token prices: they are made once a model object (a 70B's took 0.1 s a tick),
    and one pricing finds the routed experts' share once a sum, not once a tensor."""
    spec = model(MIXTRAL_8X7B)
    calls = Counter()
    real = token_bytes.moe_fraction

    def counted(m):
        calls[id(m)] += 1
        return real(m)

    monkeypatch.setattr(token_bytes, "moe_fraction", counted)
    first = TokenPrices.of(spec)
    assert first.moe is not None and TokenPrices.of(spec) is first and calls[id(spec)] <= 5
    again = model(MIXTRAL_8X7B)  # an equal model, another object: priced anew, as it may be another file's
    assert TokenPrices.of(again) == first and TokenPrices.of(again) is not first and calls[id(again)] <= 5
