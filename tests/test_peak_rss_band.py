"""Peak RSS as a band, per llama.cpp program: checked on every recorded run, short prompts and full contexts.

The runs are the 12 llama-cli runs of tests/data/llamacpp-logs (a copy of the shared logs) and
every run of tests/data/llamacpp-runs (llama-cli, llama-server, llama-completion,
llama-cpp-python; prompts of 5–35 tokens and of ~3.5–3.8k tokens in a 4096 context; `-lm none`,
`-fa off`; a zero-weight Llama-3.1-8B-shaped file). Each is compared with the estimate for its
own program, settings and tokens (`core.evidence.compare`). The process constants are fitted on
`FIT_ON` only (the module header of `core.fit.runtime_memory` says which, and why); every other
run is judged.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from recorded_models import LOGS, load_run_models, model_of

from gguf_budget.core.evidence.compare import compare
from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.fit.server.checkpoints import checkpoint_bytes
from gguf_budget.core.fit.estimate import FitRequest, estimate_fit
from gguf_budget.core.fit.runtime_memory import PROCESS_PER_TOKEN, PROFILES
from gguf_budget.core.fit.runtime_types import EngineSettings, Runtime
from gguf_budget.core.machine.snapshot import hypothetical_machine

MiB = 1 << 20
GiB = 1 << 30
RUNS = LOGS.parent / "llamacpp-runs"
SHARED = sorted(p.name for p in LOGS.glob("[gs]*.log"))
UNPRINTED = ("_np4", "_no-repack")
"""Runs whose settings the log does not print (the slot count, --no-repack): judged through their own commands
(tests/test_llama_words_runs.py), not through the log's printed settings."""
NEW = sorted(p.name for p in RUNS.glob("*.log") if not any(u in p.name for u in UNPRINTED))
FIT_ON: dict[Runtime, tuple[str, ...]] = {
    Runtime.LLAMA_CLI: tuple(SHARED),
    Runtime.LLAMA_COMPLETION: ("smollm2_completion_short.log",),
    Runtime.LLAMA_CPP_PYTHON: ("smollm2_python_short.log",),
}
TOLERANCE = {Runtime.LLAMA_CPP_PYTHON: 0.10}  # the interpreter's own allocations vary; else ±5 %


def _folder(name: str) -> Path:
    return LOGS if name in SHARED else RUNS


@pytest.fixture(scope="module")
def specs(tmp_path_factory):
    return load_run_models(tmp_path_factory.mktemp("recorded"))


def _compare(specs, name: str):
    key = "llama8b" if name.startswith("llama8b") else model_of(name)
    return compare(parse_llamacpp_log((_folder(name) / name).read_text()), specs[key])


def test_the_new_runs_are_many_and_documented():
    readme = (RUNS / "README.md").read_text()
    assert len(NEW) >= 30 and "record.py" in readme
    assert all(name.split("_")[0] in ("smollm2", "gemma3", "llama8b") for name in NEW)


@pytest.mark.parametrize("name", SHARED + NEW)
def test_peak_rss_is_predicted_for_the_runs_own_program_and_tokens(specs, name):
    """The issue's bounds: ±5 % for llama-cli, llama-server and llama-completion, ±10 % for llama-cpp-python,
    short prompts and full contexts alike; every buffer llama.cpp printed stays exact."""
    c = _compare(specs, name)
    runtime = c.request.engine.runtime
    assert abs(c.row("peak RSS").error) <= TOLERANCE.get(runtime, 0.05), runtime
    for component in ("weights", "repacked", "KV", "output"):
        assert c.row(component).error == 0.0, component


@pytest.mark.parametrize("name", NEW)
def test_each_run_is_read_as_the_program_that_made_it(name):
    log = parse_llamacpp_log((RUNS / name).read_text())
    program = {"cli": "llama-cli", "server": "llama-server", "completion": "llama-completion",
               "python": "llama-cpp-python"}[name.split("_")[1]]
    assert log.binary == program
    assert log.prompt_eval is not None and log.prompt_eval.tokens > 0


def _residual(c) -> float:
    """What the process itself held: peak RSS − every other resident item."""
    r = c.estimate.memory.short
    return c.log.peak_rss - (r.total - r.process)


def test_the_process_constants_are_the_fit_on_their_logs_only(specs):
    """llama-cli: base + per-token slope, least squares on the 12 shared llama-cli runs; llama-completion and
    llama-cpp-python: their base on one short smollm2 run each, the slope kept (llama-server's own base is fitted on
    its idle runs: tests/test_server_sessions.py)."""
    shared = [_compare(specs, n) for n in FIT_ON[Runtime.LLAMA_CLI]]
    a = np.array([[1.0, c.run.model.n_vocab] for c in shared])
    (base, slope), *_ = np.linalg.lstsq(a, np.array([_residual(c) for c in shared]), rcond=None)
    assert PROCESS_PER_TOKEN == round(slope)
    assert PROFILES[Runtime.LLAMA_CLI].process == round(base / 1024) * 1024
    for runtime in (Runtime.LLAMA_COMPLETION, Runtime.LLAMA_CPP_PYTHON):
        (c,) = [_compare(specs, n) for n in FIT_ON[runtime]]
        fitted = _residual(c) - PROCESS_PER_TOKEN * c.run.model.n_vocab
        assert PROFILES[runtime].process == round(fitted / 1024) * 1024, runtime


def test_the_fitted_runs_are_a_minority_and_the_rest_are_judged():
    fitted = {n for names in FIT_ON.values() for n in names}
    judged = set(SHARED + NEW) - fitted
    assert fitted <= set(SHARED + NEW) and len(judged) > 2 * len(fitted) - len(SHARED)
    assert all(n in judged for n in NEW if not n.startswith("smollm2_") or "_full" in n)


def test_a_full_context_adds_what_a_short_run_never_touches(specs):
    """gemma3 in llama-server, 3.5k tokens: two SWA checkpoints (512 cells × 15 layers × 1 KiB ≈ 7.5 MiB each)
    and the whole compute buffer's worth of touched pages, beyond the short run."""
    c = _compare(specs, "gemma3_server_full.log")
    m = c.estimate.memory
    assert m.short.checkpoints == 2 * checkpoint_bytes(specs["gemma3"], "f16", 4096)
    assert 7.5 * MiB < checkpoint_bytes(specs["gemma3"], "f16", 4096) < 7.52 * MiB
    short = _compare(specs, "gemma3_server_short.log").estimate.memory.short
    assert short.compute < 2 * MiB < m.short.compute and short.checkpoints < 0.5 * MiB
    assert c.log.peak_rss - _compare(specs, "gemma3_server_short.log").log.peak_rss > 15 * MiB


def test_reserved_output_rows_are_not_resident(specs):
    """llama-completion reserves 512 logits rows in its compute buffer (512 MiB for gemma3's 262k vocabulary)
    and writes one: the reserved buffer is far above the peak, the prediction is not."""
    c = _compare(specs, "gemma3_completion_short.log")
    assert c.row("compute").measured > 500 * MiB > c.log.peak_rss
    assert c.estimate.memory.short.compute < 2 * MiB and abs(c.row("peak RSS").error) <= 0.05


def test_a_llama_cpp_python_run_predicts_its_repacked_copy(specs):
    c = _compare(specs, "gemma3_python_short.log")
    assert c.request.engine.runtime is Runtime.LLAMA_CPP_PYTHON
    assert c.row("repacked").measured == round(12.66 * MiB) and c.row("repacked").error == 0.0


def test_a_model_of_more_than_a_gib_is_compared_not_refused(specs):
    c = _compare(specs, "llama8b_cli_short.log")
    assert c.run.model.file_size.render() == "4.58 GiB" and specs["llama8b"].tensor_bytes > GiB
    assert c.row("weights").error == 0.0 and c.row("repacked").measured > 3 * GiB


def _band(spec, runtime: Runtime, ctx: int, **engine):
    machine = hypothetical_machine(64 * GiB)
    return estimate_fit(spec, machine, FitRequest(ctx=ctx, engine=EngineSettings(runtime=runtime, **engine))).memory


@given(ctx=st.integers(1, 40_000), runtime=st.sampled_from(list(Runtime)), fa=st.booleans())
@settings(max_examples=40, deadline=None)
def test_the_full_end_is_never_below_the_short_end(specs, ctx, runtime, fa):
    m = _band(specs["gemma3"], runtime, ctx, flash_attn=fa)
    assert m.peak_rss_short <= m.peak_rss == m.full.total
    assert m.full.workload.prompt == ctx


def test_fit_json_carries_both_ends_and_the_program(tmp_path, capsys):
    from gguf_budget.gui.cli import main

    path = tmp_path / "gemma3.gguf"
    from gguf_factory import write_gguf
    from recorded_models import GEMMA3
    write_gguf(path, GEMMA3, "header_only")
    base = ["fit", str(path), "--ctx", "4096", "--host-available", "16G", "--no-gpu", "--no-measure", "--json"]
    out = {}
    for runtime in ("llama-server", "llama-completion"):
        assert main([*base, "--runtime", runtime]) == 0
        out[runtime] = json.loads(capsys.readouterr().out)
    server, completion = out["llama-server"], out["llama-completion"]
    assert server["runtime"] == "llama-server" and completion["runtime"] == "llama-completion"
    assert server["peak_rss_short"] < server["runtime_memory"]["full"]["total"] <= server["peak_rss_full"]
    # the one peak figure: the band's top with the prompt cache and checkpoints llama-server's verdict counts
    assert server["peak_rss_full"] == server["peak_memory"]["full"]
    assert server["runtime_memory"]["full"]["checkpoints"] > 0 == completion["runtime_memory"]["full"]["checkpoints"]
    # llama-completion reserves 512 output rows (512 MiB of logits) that it never writes
    assert completion["runtime_memory"]["devices"][0]["compute"] > 500 * MiB
    assert completion["peak_rss_full"] < server["peak_rss_full"]
    assert main([*base[:-1]]) == 0
    text = capsys.readouterr().out
    assert "once the 4,096-token context has filled" in text and "after a short prompt" in text
