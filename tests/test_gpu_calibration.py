"""A GPU's own runs price that GPU's tier and nothing else; the CPU's runs price the CPU's tier and nothing else.

`speed_figures` carries this machine's quiet runs with every layer on one GPU (`calibration.gpu_runs`);
`backend_speed.gpu_figures` is the one function that decides which decode line a GPU tier takes: the
device's own (its buffer name, `CUDA0`, matching the runs') or, without runs, its backend's published line.
"""

from __future__ import annotations

import time

import pytest
from published_speeds import shape

from gguf_budget.core import FitRequest, estimate_fit, hypothetical_machine
from gguf_budget.core.machine.bandwidth_store import host_key
from gguf_budget.core.machine.presets import with_presets
from gguf_budget.core.speed.calibration import RunTier, SpeedRun, remember_run
from gguf_budget.core.speed.estimate import fit_speed
from gguf_budget.core.speed.machine_speed import speed_figures
from gguf_budget.core.speed.token_bytes import TokenPrices

GiB = 1 << 30


@pytest.fixture(scope="module")
def model():
    return shape("llama3-8b", "Q4_K_M")


def _estimates(model, machine_text: str | None):
    """(the full load's estimate on an RTX 4090 machine, the same model's on a CPU-only one) with the kept runs."""
    figures, _ = speed_figures(None, measure=False)
    host = hypothetical_machine(512 * GiB)
    gpu = estimate_fit(model, with_presets(machine_text or "RTX 4090", host), FitRequest(ctx=4096))
    cpu = estimate_fit(model, host, FitRequest(ctx=4096, gpu_layers=0))
    prices = TokenPrices.of(model)
    return fit_speed(prices, gpu, figures), fit_speed(prices, cpu, figures)


def _run(tier: RunTier, device: str, tok_s: float, nbytes: int, machine: str | None = None, load: float = 0.1):
    return SpeedRun(recorded_at=time.time(), model="m", decode_tok_s=tok_s, decode_bytes=nbytes, prefill_tok_s=None,
                    prefill_work_per_token=0.0, machine=machine or host_key(), tier=tier, device=device, load=load,
                    cores=64)


def test_a_gpu_run_moves_its_gpu_tier_and_never_the_cpu(model):
    gpu0, cpu0 = _estimates(model, None)
    assert gpu0.gpu is not None and gpu0.gpu.own is None and gpu0.gpu.device == "CUDA0"
    vram = gpu0.start.vram
    # another machine's run, a busy one and one on another device calibrate nothing here
    remember_run(_run(RunTier.GPU, "CUDA0", 60.0, vram, machine="elsewhere"))
    remember_run(_run(RunTier.GPU, "CUDA0", 60.0, vram, load=200.0))
    remember_run(_run(RunTier.GPU, "CUDA1", 60.0, vram))
    remember_run(_run(RunTier.HYBRID, "CUDA0", 60.0, vram))
    gpu1, cpu1 = _estimates(model, None)
    assert gpu1 == gpu0 and cpu1 == cpu0
    remember_run(_run(RunTier.GPU, "CUDA0", 60.0, vram))  # this machine's 4090 decoded this model at 60 tok/s
    gpu2, cpu2 = _estimates(model, None)
    assert gpu2.gpu is not None and gpu2.gpu.own is not None and "its own runs" in gpu2.gpu.text
    assert gpu2.gpu_seconds(gpu2.start) == pytest.approx(1 / 60, rel=0.01)  # the run's own bytes at its own rate
    assert gpu0.gpu_seconds(gpu0.start) < 0.7 / 60  # the published CUDA line said much faster
    assert gpu2.host_seconds(gpu2.start) == gpu0.host_seconds(gpu0.start)
    assert cpu2 == cpu0  # the CPU's estimate does not move


def test_cpu_runs_move_the_cpu_tier_and_never_the_gpu(model):
    gpu0, cpu0 = _estimates(model, None)
    per_token = cpu0.start.total
    for tok_s, nbytes in ((2.0, per_token), (9.0, per_token // 5)):
        remember_run(_run(RunTier.CPU, "CPU", tok_s, nbytes))
    gpu1, cpu1 = _estimates(model, None)
    assert cpu1.calibration.runs == 2 and cpu1.tok_s != pytest.approx(cpu0.tok_s, rel=0.05)
    assert gpu1.gpu_seconds(gpu1.start) == gpu0.gpu_seconds(gpu0.start)
    assert gpu1.gpu == gpu0.gpu
