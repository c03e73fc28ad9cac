"""The calibration: real llama.cpp runs (the recorded logs of two real models) read as efficiencies, kept when a log
is imported or measured here, and the estimates then say they are calibrated on this machine."""

from __future__ import annotations

import json
import statistics

import pytest
from recorded_models import LOGS, model_of, write_recorded_models

from gguf_budget.core import load_model
from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.machine.bandwidth import (
    DEFAULT_CALIBRATION, DEFAULT_CALIBRATION_RUNS, Bandwidth, BandwidthSource, ComputeRate,
)
from gguf_budget.core.measure.session import import_log
from gguf_budget.core.measure.store import EvidenceStore
from gguf_budget.core.model.kv import kv_price
from gguf_budget.core.regular_file import FileKind
from gguf_budget.core.speed.calibration import (
    MAX_RUNS, REFERENCE_COMPUTE, REFERENCE_RAM, SpeedRun, calibrate, measured_run, read_runs, remember_run, runs_path,
)
from gguf_budget.core.speed.machine_speed import speed_figures
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.gui.cli import main

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
    assert run.prefill_flops_per_token == prices.prompt_flops(35) / 35
    assert run.decode_efficiency(RAM) == pytest.approx(94.00 * run.decode_bytes / (20 * GiB))
    assert run.prefill_efficiency(COMPUTE) == pytest.approx(339.92 * run.prefill_flops_per_token / 1e11)


def test_the_defaults_are_the_median_of_the_recorded_runs_at_the_reference_figures(models):
    """Rule 3 of core.speed.calibration, recomputed: the shipped defaults are what the recorded logs give."""
    runs = tuple(_run(models, name) for name in TIMED_LOGS)
    ram = Bandwidth(REFERENCE_RAM, BandwidthSource.MEASURED, "reference", 1.0)
    compute = ComputeRate(REFERENCE_COMPUTE, BandwidthSource.MEASURED, "reference", 1.0)
    assert len(runs) == DEFAULT_CALIBRATION_RUNS
    assert round(statistics.median(r.decode_efficiency(ram) for r in runs), 2) == DEFAULT_CALIBRATION.decode
    assert round(statistics.median(r.prefill_efficiency(compute) for r in runs), 2) == DEFAULT_CALIBRATION.prefill


def test_the_calibration_is_the_median_of_the_runs_kept_here(models):
    runs = tuple(_run(models, name) for name in TIMED_LOGS[:3])
    calibration = calibrate(runs, RAM, COMPUTE)
    assert calibration.runs == 3 and calibration.text == "calibrated on 3 runs on this machine"
    assert calibration.decode == pytest.approx(statistics.median(r.decode_efficiency(RAM) for r in runs))
    assert calibrate((), RAM, COMPUTE) == DEFAULT_CALIBRATION
    assert DEFAULT_CALIBRATION.text == f"default calibration from {DEFAULT_CALIBRATION_RUNS} real llama.cpp runs"


def test_importing_a_cpu_log_calibrates_every_later_estimate(models, private_data_dir, capsys):
    model = models["smollm2"]
    assert read_runs() == () and speed_figures(model.path, measure=False)[0].calibration == DEFAULT_CALIBRATION
    import_log(model, LOGS / "smollm2-135m-instruct-q4_1_ctx2048_f16.log", EvidenceStore())
    kept = read_runs()
    assert len(kept) == 1 and kept[0].decode_tok_s == 94.00 and runs_path() == private_data_dir / "speed-runs.json"
    figures, _ = speed_figures(model.path, measure=False)
    assert figures.calibration.runs == 1 and figures.calibration.decode == pytest.approx(
        kept[0].decode_efficiency(figures.ram))
    assert main(["plan", model.path, "--budget", "0", "--no-measure", "--json"]) == 0
    estimate = json.loads(capsys.readouterr().out)["tok_s_estimate"]
    assert estimate["text"].endswith("(estimate, calibrated on 1 run on this machine)")
    # the run's own speed back, at its own read rate: eff × bandwidth / bytes at the start ≈ 94 tok/s
    assert estimate["tok_s"] == pytest.approx(94.00 * kept[0].decode_bytes / estimate["bytes_per_token"]["total"])


def test_a_gpu_run_or_a_dry_run_calibrates_nothing(models, tmp_path):
    from test_cli_evidence import SMOLLM2_ON_A_GPU

    gpu = tmp_path / "gpu.log"
    gpu.write_text(SMOLLM2_ON_A_GPU)
    import_log(models["smollm2"], gpu, EvidenceStore())
    import_log(models["smollm2"], LOGS / "fitparams_smollm2-135m-instruct-q4_1_ctx2048_f16.log", EvidenceStore())
    assert read_runs() == ()


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
