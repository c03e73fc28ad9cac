"""The calibration: real llama.cpp runs (the recorded logs of two real models) read as efficiencies, kept when a log
is imported or measured here, and the estimates then say they are calibrated on this machine."""

from __future__ import annotations

import json
import statistics

import pytest
from recorded_models import LOGS, model_of, write_recorded_models

from gguf_budget.core import load_model
from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.machine.bandwidth_store import host_key
from gguf_budget.core.machine.bandwidth import (
    DEFAULT_CALIBRATION, DEFAULT_CALIBRATION_RUNS, Bandwidth, BandwidthSource, ComputeRate,
)
from gguf_budget.core.measure.session import import_log
from gguf_budget.core.measure.store import EvidenceStore
from gguf_budget.core.model.kv import kv_price
from gguf_budget.core.regular_file import FileKind
from gguf_budget.core.speed.calibration import (
    MAX_RUNS, REFERENCE_COMPUTE, REFERENCE_RAM, RunTier, SpeedRun, calibrate, gpu_line, gpu_runs, measured_run, read_runs, remember_run, runs_path,
)
from gguf_budget.core.speed.machine_speed import speed_figures
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.gui.cli import main
from test_cli_evidence import SMOLLM2_ON_A_GPU

GiB = 1 << 30
RAM = Bandwidth(20 * GiB, BandwidthSource.MEASURED, "test", 1.0)
COMPUTE = ComputeRate(100 * 10**9, BandwidthSource.MEASURED, "test", 1.0)
TIMED_LOGS = sorted(p.name for p in LOGS.glob("*.log") if not p.name.startswith("fitparams"))


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("recorded")
    write_recorded_models(folder)
    return {"smollm2": load_model(str(folder / "smollm2-135m-instruct-q4_1.gguf")),
            "gemma3": load_model(str(folder / "gemma3-270m-q4_k_m.gguf"))}


def _run(models, name: str) -> SpeedRun:
    log = parse_llamacpp_log((LOGS / name).read_text())
    model = models[model_of(name)]
    return measured_run(model, log.run.settings.type_k, (log.eval.tokens_per_second, log.eval.tokens),
                        (log.prompt_eval.tokens_per_second, log.prompt_eval.tokens), 1.0)


def test_a_run_is_its_timings_and_the_bytes_and_flops_of_its_tokens(models):
    run = _run(models, "smollm2-135m-instruct-q4_1_ctx2048_f16.log")  # 35-token prompt, 8 tokens at 94.00 tok/s
    prices, model = TokenPrices.of(models["smollm2"]), models["smollm2"]
    assert run.decode_tok_s == 94.00 and run.prefill_tok_s == 339.92
    assert run.decode_bytes == prices.read_per_token(kv_price(model, "f16").at(35 + 4))
    assert run.prefill_work_per_token == prices.prompt_work(35) / 35
    assert run.decode_efficiency(RAM) == pytest.approx(94.00 * run.decode_bytes / (20 * GiB))
    assert run.prefill_efficiency(COMPUTE) == pytest.approx(339.92 * run.prefill_work_per_token / 1e11)


def test_the_defaults_are_the_recorded_runs_calibration_at_the_reference_figures(models):
    """Rule 3 of core.speed.calibration, recomputed: the shipped defaults are what the recorded logs give."""
    runs = tuple(_run(models, name) for name in TIMED_LOGS)
    ram = Bandwidth(REFERENCE_RAM, BandwidthSource.MEASURED, "reference", 1.0)
    compute = ComputeRate(REFERENCE_COMPUTE, BandwidthSource.MEASURED, "reference", 1.0)
    assert len(runs) == DEFAULT_CALIBRATION_RUNS
    fitted = calibrate(runs, ram, compute)
    assert (round(fitted.decode, 2), round(fitted.decode_overhead_s, 4)) == (DEFAULT_CALIBRATION.decode,
                                                                          DEFAULT_CALIBRATION.decode_overhead_s)
    assert (round(fitted.prefill, 2), fitted.prefill_overhead_s) == (DEFAULT_CALIBRATION.prefill,
                                                                   DEFAULT_CALIBRATION.prefill_overhead_s)


def test_runs_of_different_sizes_separate_a_fixed_time_from_the_rate():
    """Rule 2: three runs on the line t = x / 0.8 + 5 ms give that line back; one size keeps the default fixed time."""
    def run(n_bytes: int, tok_s: float) -> SpeedRun:
        return SpeedRun(recorded_at=1.0, model="m", decode_tok_s=tok_s, decode_bytes=n_bytes, prefill_tok_s=None,
                        prefill_work_per_token=0.0)

    sizes = (100 << 20, 400 << 20, 4 << 30)
    runs = tuple(run(n, 1 / (n / (20 * GiB) / 0.8 + 0.005)) for n in sizes)
    fitted = calibrate(runs, RAM, COMPUTE)
    assert fitted.decode == pytest.approx(0.8) and fitted.decode_overhead_s == pytest.approx(0.005)
    one = calibrate(runs[:1], RAM, COMPUTE)
    assert one.decode_overhead_s == DEFAULT_CALIBRATION.decode_overhead_s
    assert 1 / (sizes[0] / (20 * GiB) / one.decode + one.decode_overhead_s) == pytest.approx(runs[0].decode_tok_s)


def test_runs_of_one_size_calibrate_to_their_median_beside_the_default_fixed_time(models):
    runs = tuple(_run(models, name) for name in TIMED_LOGS[:3])  # three Gemma-3 runs: one size
    calibration = calibrate(runs, RAM, COMPUTE)
    assert calibration.runs == 3 and calibration.text == "calibrated on 3 runs on this machine"
    fixed = DEFAULT_CALIBRATION.decode_overhead_s
    assert calibration.decode_overhead_s == fixed
    assert calibration.decode == pytest.approx(statistics.median(
        r.decode_bytes / RAM.bytes_per_s / (1 / r.decode_tok_s - fixed) for r in runs))
    assert calibrate((), RAM, COMPUTE) == DEFAULT_CALIBRATION
    assert DEFAULT_CALIBRATION.text == f"default calibration from {DEFAULT_CALIBRATION_RUNS} real llama.cpp runs"


def test_an_imported_cpu_log_calibrates_every_later_estimate_once_adopted(models, private_data_dir, capsys):
    model = models["smollm2"]
    assert read_runs() == () and speed_figures(model.path, measure=False)[0].calibration == DEFAULT_CALIBRATION
    import_log(model, LOGS / "smollm2-135m-instruct-q4_1_ctx2048_f16.log", EvidenceStore())
    kept = read_runs()
    assert len(kept) == 1 and kept[0].decode_tok_s == 94.00 and runs_path() == private_data_dir / "speed-runs.json"
    assert kept[0].machine is None and kept[0].tier is RunTier.CPU  # where it ran is not known: not this machine's
    assert speed_figures(model.path, measure=False)[0].calibration == DEFAULT_CALIBRATION
    assert main(["hw", "--adopt-imported"]) == 0 and "1 imported run(s)" in capsys.readouterr().out
    figures, _ = speed_figures(model.path, measure=False)
    assert figures.calibration.runs == 1
    assert main(["plan", model.path, "--budget", "0", "--no-measure", "--json"]) == 0
    estimate = json.loads(capsys.readouterr().out)["tok_s_estimate"]
    assert estimate["text"].endswith("(estimate, calibrated on 1 run on this machine)")
    # the run's own speed back at its own position (the start reads no KV, so a little faster than 94 tok/s)
    c = figures.calibration
    at_start = 1 / (estimate["bytes_per_token"]["total"] / figures.ram.bytes_per_s / c.decode + c.decode_overhead_s)
    assert estimate["tok_s"] == pytest.approx(at_start)
    assert 1 / (kept[0].decode_bytes / figures.ram.bytes_per_s / c.decode + c.decode_overhead_s) == pytest.approx(94.00)


GPU_ONLY = (SMOLLM2_ON_A_GPU.replace("offloaded 20/31", "offloaded 31/31")
            .replace("load_tensors:   CPU_Mapped model buffer size =    32.10 MiB\n", "")
            .replace("llama_kv_cache:        CPU KV buffer size =    15.00 MiB\n", ""))
"""The recorded GPU log with every layer on CUDA0."""
NO_OFFLOAD_LINE = GPU_ONLY.replace("load_tensors: offloading 19 repeating layers to GPU\n", "").replace(
    "load_tensors: offloaded 31/31 layers to GPU\n", "")
"""The same run as a build that prints no `offloaded N/M` line: only its buffers say it ran on a GPU."""


def test_an_imported_gpu_log_changes_no_cpu_estimate_even_adopted(models, tmp_path, capsys):
    """Rule 5: a GPU or hybrid run is kept with its device and calibrates only that device; a dry run is not kept."""
    model = models["smollm2"]
    plan = ["plan", model.path, "--budget", "0", "--no-measure", "--json"]
    assert main(plan) == 0
    before = json.loads(capsys.readouterr().out)
    for name, text in (("partial.log", SMOLLM2_ON_A_GPU), ("gpu.log", GPU_ONLY), ("bare.log", NO_OFFLOAD_LINE)):
        (tmp_path / name).write_text(text)
        import_log(model, tmp_path / name, EvidenceStore())
    import_log(model, LOGS / "fitparams_smollm2-135m-instruct-q4_1_ctx2048_f16.log", EvidenceStore())
    assert main(["hw", "--adopt-imported"]) == 0 and "3 imported run(s)" in capsys.readouterr().out
    kept = read_runs()
    # newest first; without an `offloaded` line how many layers the GPU held is not known: hybrid
    assert [(r.tier, r.device) for r in kept] == [(RunTier.HYBRID, "CUDA0"), (RunTier.GPU, "CUDA0"),
                                                 (RunTier.HYBRID, "CUDA0")]
    assert main(plan) == 0
    after = json.loads(capsys.readouterr().out)
    assert after["tok_s_estimate"] == before["tok_s_estimate"] and after["ttft_s_estimate"] == before["ttft_s_estimate"]
    vram = Bandwidth(1008 * 10**9, BandwidthSource.CITED, "RTX 4090", None)
    assert gpu_line(gpu_runs(kept, host_key()), "CUDA0", vram, 0.0) == pytest.approx((119.05 * kept[1].decode_bytes / 1008e9, 0))
    assert gpu_line(gpu_runs(kept, host_key()), "CUDA1", vram, 0.0) is None
    assert gpu_runs(kept, "another machine") == ()


@pytest.mark.parametrize("damage", ["not json", "[]", '{"runs": 5}', '{"runs": [{"model": "m"}]}',
                                    '{"runs": [{"model": "m", "recorded_at": 1, "decode_bytes": -1}]}',
                                    '{"runs": [{"model": "m", "recorded_at": 1, "decode_bytes": 10, '
                                    '"prefill_flops_per_token": 1, "decode_tok_s": "fast"}]}',
                                    json.dumps({"runs": [], "pad": "x" * FileKind.RECORD.cap})])
def test_damaged_kept_runs_are_no_runs_and_the_defaults_stand(damage):
    path = runs_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(damage)
    assert read_runs() == ()
    assert calibrate(read_runs(), RAM, COMPUTE) == DEFAULT_CALIBRATION


def test_only_the_newest_runs_are_kept(models):
    run = _run(models, TIMED_LOGS[0])
    for i in range(MAX_RUNS + 3):
        assert remember_run(SpeedRun(**{**run.__dict__, "recorded_at": float(i + 1)}))
    kept = read_runs()
    assert len(kept) == MAX_RUNS and kept[0].recorded_at == MAX_RUNS + 3 and kept[-1].recorded_at == 4
