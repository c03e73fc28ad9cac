"""A seeded sample of the fuzz run (`benchmarks/fuzz_net_facts.py` runs tens of thousands): hostile
HTTP answers and hostile header facts end in a model or one line — never a traceback, a hang, an
endless run of requests or unbounded work. The full run's counts are in the issue's closing note."""

from __future__ import annotations

from collections import Counter

import pytest
from fuzz_net_facts import FuzzServer, run_facts, run_http

SEEDS = range(1_000_000, 1_000_120)


@pytest.fixture(scope="module")
def server() -> FuzzServer:
    return FuzzServer()


def test_a_sample_of_hostile_http_answers_ends_in_a_model_or_one_line(server, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
    monkeypatch.setenv("HF_TOKEN", "hf_fuzz_token")
    outcomes = {seed: run_http(seed, server, tmp_path) for seed in SEEDS}
    bad = {seed: (o.kind, o.detail) for seed, o in outcomes.items() if o.kind not in ("ok", "one_line")}
    assert bad == {}
    assert Counter(o.kind for o in outcomes.values())["ok"] > 0  # the sample reaches a model too


def test_a_sample_of_hostile_header_facts_ends_in_bounded_work_or_one_line(tmp_path):
    outcomes = {seed: run_facts(seed, tmp_path) for seed in range(80)}
    bad = {seed: (o.kind, o.detail) for seed, o in outcomes.items() if o.kind not in ("ok", "one_line")}
    assert bad == {}
    assert Counter(o.kind for o in outcomes.values())["ok"] > 0
