"""A seeded sample of the fuzz run (`benchmarks/fuzz_io.py` runs tens of thousands): hostile GGUF headers,
llama.cpp logs, settings files and evidence records end in a result or one line — never a traceback, a
hang, NaN in JSON, a crash of Qt's settings reader, or a settings file repaired twice. The full run's
counts are in the issue's closing note."""

from __future__ import annotations

from collections import Counter

import pytest
from fuzz_io import RUNS, Context

SAMPLE = {"header": range(500_000, 500_150), "log": range(500_000, 500_040), "settings": range(500_000, 500_030),
          "record": range(500_000, 500_040)}


@pytest.mark.parametrize("surface", sorted(SAMPLE))
def test_a_sample_of_hostile_inputs_ends_in_a_result_or_one_line(tmp_path, surface):
    context = Context.make(tmp_path, (surface,))
    outcomes = {seed: RUNS[surface](seed, context) for seed in SAMPLE[surface]}
    bad = {seed: (o.kind, o.detail) for seed, o in outcomes.items() if o.kind not in ("ok", "one_line")}
    assert bad == {}
    assert Counter(o.kind for o in outcomes.values())["ok"] > 0  # the sample reaches a result too
