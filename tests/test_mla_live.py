"""MLA's cache as llama.cpp allocates it: real runs of a tiny deepseek2 in both file formats, asked as `fit --command`.

The pinned llama.cpp (0c1e570, CPU) loads the same model converted the current way (`attention.key_length_mla`:
one KV head of kv_lora_rank + rope dims, K only) and the older way (every head's K and V, decompressed from
attn_kv_b), with flash attention on and off. The KV buffer it prints is predicted exactly (`model_facts` Rule 6),
and so is the compute buffer (`compute_graph` Rule 4 builds either format's graph node for node). Every test here
runs llama.cpp for real (see llama_support: CI fails without one).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from gguf_factory import write_gguf
from llama_support import llama_engine
from runnable_model import runnable_mla_desc

from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.explorer.llama_question import ask
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.llama_words.reader import read_llama_args, split_command
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.measure.engine import EngineKind
from gguf_budget.core.model.loader import load_model

MiB = 1024 * 1024
SLACK = 0.00501 * MiB  # half the last printed digit
CTX = 4096
LEGACY_KV = CTX * 2 * 4 * (96 + 64) * 2  # 2 layers, 4 heads of K 96 and V 64, f16
LATENT_KV = CTX * 2 * (128 + 32) * 2  # 2 layers, one latent row of kv_lora_rank 128 + rope 32, f16, no V


def _run(path: Path, fa: str, tries: int = 3) -> dict[str, int]:
    """The CPU KV and compute buffers of a real run; again (up to `tries`) while a run that succeeded printed only
    some of them — once in CI (2026-12-06, two test workers on two cores) a run's log lacked its compute line while
    its KV line was there; a missing line is the logger's, not a size, so only an absent line is asked again."""
    engine = llama_engine(EngineKind.COMPLETION)
    for _ in range(tries):
        done = subprocess.run([engine.executable, "-m", str(path), "-c", str(CTX), "-fa", fa, "-t", "2", "-p",
                               "The capital of France is", "-n", "2", "--no-warmup", "-v"],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        buffers = parse_llamacpp_log(done.stdout + done.stderr).loads[-1].buffers
        printed = {b.kind.value: b.nbytes for b in buffers if b.device == "CPU" and b.kind.value in ("KV", "compute")}
        if len(printed) == 2:
            break
    assert len(printed) == 2, (printed, done.stderr[-2000:])
    return printed


def _predicted(path: Path, fa: str) -> dict[str, int]:
    spec = load_model(path)
    machine = hypothetical_machine(64 * 1024 * MiB)
    question = ask(read_llama_args(split_command(f"llama-completion -m {path} -c {CTX} -fa {fa}")),
                   ExplorerState(model=spec, machine=machine), spec)
    memory = estimate_fit(spec, machine, question.state.fit_request(question.state.ctx)).memory
    assert memory is not None
    host = memory.devices[0]
    return {"KV": host.kv or 0, "compute": host.compute or 0}


@pytest.mark.parametrize("fa", ["on", "off"])
@pytest.mark.parametrize("absorbed", [True, False], ids=["mla-file", "legacy-file"])
def test_the_kv_and_compute_buffers_of_either_file_format_are_llama_cpps(tmp_path, absorbed, fa):
    path = write_gguf(tmp_path / "deepseek2.gguf", runnable_mla_desc(absorbed))[0]
    printed, predicted = _run(path, fa), _predicted(path, fa)
    assert printed["KV"] == (LATENT_KV if absorbed else LEGACY_KV)
    assert abs(predicted["KV"] - printed["KV"]) <= SLACK, (predicted["KV"] / MiB, printed["KV"] / MiB)
    assert abs(predicted["compute"] - printed["compute"]) <= SLACK, (predicted["compute"] / MiB, printed["compute"] / MiB)


def _run_until_said(path: Path, flags: list[str], error: str, tries: int = 3) -> subprocess.CompletedProcess[str]:
    """A short llama-completion run; again (up to `tries`) while it failed without its error line: its logger thread
    may not flush before a refused context exits, so one run's output can stop before the line that says why."""
    engine = llama_engine(EngineKind.COMPLETION)
    for _ in range(tries):
        done = subprocess.run([engine.executable, "-m", str(path), "-c", str(CTX), *flags, "-t", "2",
                               "-p", "The capital of France is", "-n", "2", "--no-warmup"],
                              capture_output=True, text=True, timeout=300)
        if done.returncode == 0 or error in done.stdout + done.stderr:
            break
    return done


def _verdict(path: Path, flags: str):
    spec = load_model(path)
    machine = hypothetical_machine(64 * 1024 * MiB)
    question = ask(read_llama_args(split_command(f"llama-completion -m {path} -c {CTX} {flags}")),
                   ExplorerState(model=spec, machine=machine), spec)
    return estimate_fit(spec, machine, question.state.fit_request(question.state.ctx))


@pytest.mark.parametrize("absorbed", [True, False], ids=["mla-file", "legacy-file"])
def test_a_v_cache_type_apart_from_k_is_refused_only_where_llama_cpp_refuses_it(tmp_path, absorbed):
    """`cache_refusal` Rule 1: the current MLA file keeps K only, so llama.cpp makes no context for `-ctk q8_0` alone;
    the older file caches every head's K and V and loads. The fit says what the real run does, in its words."""
    path = write_gguf(tmp_path / "deepseek2.gguf", runnable_mla_desc(absorbed))[0]
    llama_error = "does not support different K (q8_0) and V (f16) cache types"
    done = _run_until_said(path, ["-ctk", "q8_0", "-fa", "on"], llama_error)
    fit = _verdict(path, "-ctk q8_0 -fa on")
    if absorbed:
        assert done.returncode != 0 and llama_error in done.stdout + done.stderr
        assert fit.refused is not None and llama_error in fit.refused
        assert not fit.verdict.admitted
        assert _verdict(path, "-ctk q8_0 -ctv q8_0 -fa on").refused is None
    else:
        assert done.returncode == 0, done.stderr[-2000:]
        assert fit.refused is None and fit.verdict.admitted


def test_a_quantized_v_cache_with_flash_attention_off_is_refused(tmp_path):
    """`cache_refusal` Rule 2: llama.cpp needs flash attention for a quantized V cache; with `-fa off` it makes no
    context (with `-fa auto` it turns flash attention on, and that loads)."""
    path = write_gguf(tmp_path / "deepseek2.gguf", runnable_mla_desc(False))[0]
    llama_error = "quantized V cache requires flash_attn to be enabled"
    done = _run_until_said(path, ["-ctk", "q8_0", "-ctv", "q8_0", "-fa", "off"], llama_error)
    assert done.returncode != 0 and llama_error in done.stdout + done.stderr
    refused = _verdict(path, "-ctk q8_0 -ctv q8_0 -fa off").refused
    assert refused is not None and llama_error in refused
    assert _verdict(path, "-ctk q8_0 -ctv q8_0 -fa auto").refused is None
