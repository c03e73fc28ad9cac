"""A calibration nothing can poison (issue #34 item 4, #37's speed and machine records): a measurement taken while the
machine is busy is flagged and not kept, a run outside the physical band or an outlier calibrates nothing, a log from
another machine or a GPU calibrates no CPU, everything kept is listed and can be reset, and any bytes in the two kept
files give the right answer or the answer of no file."""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from recorded_models import LOGS, write_recorded_models

from gguf_budget.core import load_model
from gguf_budget.core.machine import bandwidth_store
from gguf_budget.core.machine.bandwidth import (
    DEFAULT_COMPUTE, DEFAULT_RAM, Bandwidth, BandwidthSource, Bandwidths, ComputeRate,
)
from gguf_budget.core.machine.bandwidth_store import (
    FAR_BELOW, MachineRecord, Measurement, Probes, Use, host_key, judged, machine_bandwidths, read_record,
    record_path, record_to_json, write_record,
)
from gguf_budget.core.machine.load import usable_cpus
from gguf_budget.core.measure.session import import_log
from gguf_budget.core.measure.store import EvidenceStore
from gguf_budget.core.speed.calibration import (
    SpeedRun, calibrate, judge_runs, read_runs, remember_run, run_to_json, runs_path,
)
from gguf_budget.core.speed.machine_speed import speed_figures
from gguf_budget.gui.cli import main

GB = 10**9
RAM = Bandwidth(20 * GB, BandwidthSource.MEASURED, "test", 1.0)
COMPUTE = ComputeRate(100 * GB, BandwidthSource.MEASURED, "test", 1.0)
SMOLLM2_LOG = LOGS / "smollm2-135m-instruct-q4_1_ctx2048_f16.log"


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory):
    return load_model(str(write_recorded_models(tmp_path_factory.mktemp("recorded"))["smollm2"]))


def run_at(tok_s: float, n_bytes: int = 100 << 20, *, at: float = 1.0, load: float | None = 0.5,
           machine: str | None = "this", prefill: float | None = None) -> SpeedRun:
    """A CPU run of this machine (unless said) reading `n_bytes` a token at `tok_s`."""
    return SpeedRun(recorded_at=at, model="m.gguf", decode_tok_s=tok_s, decode_bytes=n_bytes,
                    prefill_tok_s=prefill, prefill_work_per_token=2e8 if prefill else 0.0,
                    machine=host_key() if machine == "this" else machine, load=load, cores=2)


def estimates(capsys, model_path: str) -> dict[str, float]:
    """Every speed estimate `plan` and `fit` give for the model from the kept figures, measuring nothing."""
    out = {}
    for command in (["plan", model_path, "--budget", "0"], ["fit", model_path, "--ctx", "2048", "--no-gpu"]):
        assert main([*command, "--no-measure", "--json"]) in (0, 3)
        d = json.loads(capsys.readouterr().out)
        for key in ("tok_s", "tok_s_full_context"):
            out[f"{command[0]} {key}"] = d["tok_s_estimate"][key]
        out[f"{command[0]} ttft"] = d["ttft_s_estimate"]
    return out


# ---- a busy machine ----

def test_a_measurement_under_load_leaves_every_estimate_within_10_percent(smollm2, capsys, monkeypatch):
    """`hw --measure` beside real CPU-burning processes (one per usable CPU) changes no estimate by 10 %: the RAM
    bandwidth and compute rate it reads are flagged busy (load above the cores, or far below the quiet figure) and the
    quiet ones stay. The first measurement is told the machine is quiet (the test machine's neighbours are not the
    test's to control); the second reads the real load average."""
    with monkeypatch.context() as quiet:
        quiet.setattr(bandwidth_store, "load_average", lambda: 0.0)
        assert main(["hw", "--measure"]) == 0
    capsys.readouterr()
    before = estimates(capsys, smollm2.path)
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(usable_cpus())]
    try:
        assert main(["hw", "--measure"]) == 0
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    said = capsys.readouterr().out
    after = estimates(capsys, smollm2.path)
    assert {k: v / before[k] for k, v in after.items() if abs(v / before[k] - 1) > 0.10} == {}
    state = read_record()
    ram = judged(state.measurements, "ram")
    assert len(ram) == 2 and ram[1][1] is Use.USED  # the quiet one is the figure
    assert ram[0][1] is not Use.USED and ("the RAM bandwidth just measured" in said) is (ram[0][1] is not Use.QUIET)


def measurement(rate: int, load: float | None, at: float, tier: str = "ram") -> Measurement:
    return Measurement(tier=tier, rate=rate, detail="probe", measured_at=at, load=load, cores=2)


@pytest.mark.parametrize(("kept", "used", "words"), [
    # (rate in GB/s, load) oldest first → which one is the figure, and what each (newest first) is called
    ([(10, 0.5), (4, 0.5)], 10, [Use.BUSY_SLOW, Use.USED]),          # 4 < 0.7 × 10: far below the best
    ([(10, 0.5), (12, 5.0)], 10, [Use.BUSY_LOAD, Use.USED]),         # load 5 on 2 cores: busy, though faster
    ([(10, 0.5), (9, 0.5)], 10, [Use.QUIET, Use.USED]),              # quiet, below the best: the best stays
    ([(10, 0.5), (11, None)], 11, [Use.USED, Use.QUIET]),            # no load average (Windows): quiet
    ([(3, 7.0), (2, 9.0)], 3, [Use.BUSY_LOAD, Use.PROVISIONAL]),     # nothing quiet yet: the best, provisional
    ([(3, 7.0), (8, 0.1)], 8, [Use.USED, Use.BUSY_LOAD]),            # the first quiet one replaces it
])
def test_the_figure_kept_is_the_best_quiet_measurement(kept, used, words):
    assert FAR_BELOW == 0.7
    record = MachineRecord(host_key())
    for i, (rate, load) in enumerate(kept):
        record = record.adding(measurement(rate * GB, load, float(i + 1)))
    assert record.ram.bytes_per_s == used * GB
    assert [u for _, u in judged(record.measurements, "ram")] == words
    assert ("measured while busy" in record.ram.detail) is (Use.PROVISIONAL in words)


def test_a_busy_measurement_is_flagged_and_said(tmp_path):
    loads = iter([0.1, 0.1, 6.0, 6.0])
    rates = iter([10 * GB, 3 * GB])
    probes = Probes(lambda: Bandwidth(next(rates), BandwidthSource.MEASURED, "probe", 5.0), lambda: "no compute",
                    lambda _: "no disk", lambda: next(loads), lambda: 2)
    machine_bandwidths(None, ("ram",), probes=probes)
    figures, notes = machine_bandwidths(None, ("ram",), again=True, probes=probes)
    assert figures.ram.bytes_per_s == 10 * GB
    assert notes == ("the RAM bandwidth just measured (load average 6.0 on 2 cores) is flagged busy "
                     "(busy: load above the cores) and not kept as this machine's",)


# ---- runs: the physical band, outliers, machines ----

def test_a_run_outside_the_physical_band_or_an_outlier_calibrates_nothing():
    # 100 MiB a token at 20 GB/s: 0.37 efficiency is ~70 tok/s (with 3.5 ms fixed, ~57); the runs below say why not
    good = [run_at(60, at=1), run_at(58, at=2), run_at(61, at=3)]
    poison = {
        "tok/s 0.3": (run_at(0.3, at=4), "outside the physical band"),            # the 'efficiency 0.00' run
        "tok/s 250": (run_at(250, at=5), "outside the physical band"),            # faster than the memory
        "tok/s 12": (run_at(12, at=6), "outlier against the model"),              # 5× slower than the model
        "tok/s 30": (run_at(30, at=7), "outlier against the other runs"),         # half its peers' speed
        "busy": (run_at(20, at=8, load=6.0), "busy: load average 6.0"),
        "elsewhere": (run_at(60, at=9, machine="0123456789abcdef"), "another machine's run"),
        "imported": (run_at(60, at=10, machine=None), "imported, machine unknown"),
    }
    alone, _ = judge_runs(tuple(good), RAM, COMPUTE, host_key())
    for name, (bad, why) in poison.items():
        judged_runs, calibration = judge_runs((*good, bad), RAM, COMPUTE, host_key())
        assert judged_runs[-1].decode.startswith(why), name
        assert all(j.decode == "used" for j in judged_runs[:-1]), name
        assert calibration == calibrate(tuple(good), RAM, COMPUTE, host_key()), name
    assert [j.decode for j in alone] == ["used"] * 3


def test_an_imported_log_claiming_a_million_tokens_a_second_is_not_kept(smollm2, tmp_path):
    log = tmp_path / "boast.log"
    log.write_text(SMOLLM2_LOG.read_text().replace("94.00 tokens per second", "1000000.00 tokens per second"))
    import_log(smollm2, log, EvidenceStore())
    assert read_runs() == ()
    import_log(smollm2, SMOLLM2_LOG, EvidenceStore())
    assert [r.decode_tok_s for r in read_runs()] == [94.0]


# ---- listing and reset ----

def test_hw_calibration_lists_every_measurement_and_run_with_date_load_and_use(smollm2, capsys):
    record = MachineRecord(host_key()).adding(measurement(10 * GB, 0.4, 1_764_720_000.0)).adding(
        measurement(3 * GB, 5.5, 1_764_806_400.0))
    assert write_record(record) is None
    import_log(smollm2, SMOLLM2_LOG, EvidenceStore(), clock=lambda: 1_764_892_800.0)
    assert remember_run(run_at(0.3, at=1_764_979_200.0))
    assert main(["hw", "--calibration"]) == 0
    text = capsys.readouterr().out
    lines: list[str] = []
    for line in text.splitlines():  # a row wider than 100 columns continues on indented lines
        if line.startswith(" ") and lines:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line)
    rows = [line for line in lines if line.startswith("2025-12-")]
    assert len(rows) == 4
    assert "2025-12-03  RAM bandwidth" in text and "0.4 on 2 cores" in text and rows[1].endswith("used")
    assert "5.5 on 2 cores" in rows[0] and rows[0].endswith("busy: load above the cores")
    assert "imported, machine unknown" in text and "outside the physical band" in text
    assert main(["hw", "--calibration", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [(m["date"], m["load"], m["used"]) for m in d["measurements"]] == [("2025-12-04", 5.5, False),
                                                                            ("2025-12-03", 0.4, True)]
    assert [(r["date"], r["machine"], r["used"]) for r in d["runs"]] == [("2025-12-06", "this machine", False),
                                                                       ("2025-12-05", "imported", False)]
    assert d["speed"]["ram_bandwidth"]["bytes_per_s"] == 10 * GB


def test_reset_restores_the_shipped_defaults(smollm2, capsys, private_data_dir):
    fresh = estimates(capsys, smollm2.path)
    assert write_record(MachineRecord(host_key()).adding(measurement(10 * GB, 0.4, 1.0)).adding(
        measurement(90 * GB, 0.4, 2.0, "compute"))) is None
    import_log(smollm2, SMOLLM2_LOG, EvidenceStore())
    assert main(["hw", "--adopt-imported"]) == 0
    capsys.readouterr()
    assert speed_figures(None, measure=False)[0].calibration.runs == 1
    calibrated = estimates(capsys, smollm2.path)
    assert calibrated != fresh
    assert main(["hw", "--reset-calibration"]) == 0
    assert "shipped defaults" in capsys.readouterr().out
    assert estimates(capsys, smollm2.path) == fresh
    assert speed_figures(None, measure=False)[0] == Bandwidths()
    assert not record_path().exists() and not runs_path().exists()


# ---- any bytes in the kept files ----

JUNK = st.one_of(st.sampled_from([float("nan"), float("inf"), -float("inf"), 1e308, -1e308, 1e-308, 5e-324, 0, -1,
                                  0.0, True, False, "1", "", [], {}, [[[]]], {"a": {"b": []}}, 10**30, -(10**30),
                                  10**400, -(10**400)]),
                 st.recursive(st.none() | st.integers() | st.floats() | st.text(max_size=5),
                              lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                                         max_size=3), max_leaves=8))
"""Values no field may hold: non-finite, huge, tiny, zero, negative, of the wrong type, nested."""
HUGE = 10**400
ALWAYS_BAD = {"decode_bytes": [0, -1, 1.5, 10**30, HUGE, True, "1", None, float("nan")],
              "recorded_at": [float("nan"), float("inf"), -1, 1e308, HUGE, -HUGE, None, "1", True],
              "decode_tok_s": [float("nan"), float("inf"), 0, -1, 1e308, 1e-308, 5e-324, HUGE, "1", True, 1e7],
              "prefill_tok_s": [float("nan"), float("inf"), 0, -5, 1e308, 1e-308, 5e-324, HUGE, "fast", [], 1e8],
              "prefill_work_per_token": [float("nan"), -1, 1e308, HUGE, "x", None, True],
              "tier": ["gpu", 1, None], "model": [None, 5, "m" * 301], "device": [None, 1],
              "load": [float("nan"), -1, 1e300, HUGE, "1"], "cores": [0, -1, 1.5, 10**9, HUGE, "2", True]}
"""Per field, values that make the entry impossible (so the expected answer is the file without it)."""


def good_run(i: int) -> SpeedRun:
    return run_at(58 + i, at=float(i + 1), prefill=300.0 + 10 * i)


def _dump(value: object) -> bytes:
    return json.dumps(value, allow_nan=True).encode()


@st.composite
def run_files(draw) -> tuple[bytes, tuple[SpeedRun, ...]]:
    """A speed-runs.json of good runs and hostile entries, and the runs it holds."""
    entries, good = [], []
    for i in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["good", "field", "junk"]))
        run = good_run(i)
        entry = {"recorded_at": run.recorded_at, "model": run.model, "decode_tok_s": run.decode_tok_s,
                 "decode_bytes": run.decode_bytes, "prefill_tok_s": run.prefill_tok_s,
                 "prefill_work_per_token": run.prefill_work_per_token, "machine": run.machine, "tier": "CPU",
                 "device": "CPU", "load": run.load, "cores": run.cores}
        if kind == "good":
            good.append(run)
        elif kind == "field":
            key = draw(st.sampled_from(sorted(ALWAYS_BAD)))
            entry[key] = draw(st.sampled_from(ALWAYS_BAD[key]))
        else:
            entry = draw(JUNK)
        entries.append(entry)
    return _dump({"format": 2, "runs": entries}), tuple(good)


def _answer(folder) -> tuple[object, ...]:
    """What the commands use: the figures with their calibration (measuring nothing), all finite."""
    figures, _ = speed_figures(None, measure=False, folder=folder)
    c = figures.calibration
    numbers = (figures.ram.bytes_per_s, figures.compute.flops_per_s, c.decode, c.prefill, c.decode_overhead_s,
               c.prefill_overhead_s)
    assert all(math.isfinite(x) and x >= 0 for x in numbers)
    assert 0 < c.decode <= 1
    return figures.ram, figures.compute, c


def _bounded(read):
    """`read()`'s answer, checking it allocated at most 32 MiB (the files are capped at 1 MiB)."""
    tracemalloc.start()
    try:
        answer = read()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20
    return answer


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=run_files())
def test_any_speed_runs_file_gives_the_answer_of_its_good_runs(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("runs")
    content, good = data
    (folder / "speed-runs.json").write_bytes(content)
    assert _bounded(lambda: _answer(folder)) == (DEFAULT_RAM, DEFAULT_COMPUTE,
                                                 calibrate(good, DEFAULT_RAM, DEFAULT_COMPUTE, host_key()))


MEASUREMENT_BAD = {"rate": [0, -1, 1.5, 10**15, HUGE, float("nan"), "1", True, None, []],
                   "measured_at": [float("nan"), float("inf"), -1, 1e308, HUGE, -HUGE, None, "x", {}],
                   "load": [float("nan"), -1, 1e300, HUGE, "1", float("inf"), True],
                   "cores": [0, -1, 1.5, 10**9, HUGE, "2", True, None],
                   "tier": ["disk", "RAM", None, 1], "detail": [None, 5, "d" * 501]}
"""Per field of a measurement, values that make it impossible."""


@st.composite
def record_files(draw) -> tuple[bytes, Bandwidth]:
    """A machine-speed.json of good and hostile measurements, and the RAM figure it gives (the assumed one when the
    record is not this machine's)."""
    good, raw = MachineRecord(host_key()), []
    for i in range(draw(st.integers(0, 6))):
        m = measurement(draw(st.integers(1, 100)) * GB, draw(st.sampled_from([0.2, None, 9.0])), float(i + 1))
        entry = record_to_json(MachineRecord(host_key(), (m,)))["measurements"][0]
        kind = draw(st.sampled_from(["good", "field", "junk"]))
        if kind == "good":
            good = good.adding(m)
        elif kind == "field":
            key = draw(st.sampled_from(sorted(MEASUREMENT_BAD)))
            entry[key] = draw(st.sampled_from(MEASUREMENT_BAD[key]))
        else:
            entry = draw(JUNK)
        raw.append(entry)
    machine = draw(st.sampled_from(["this", "other", 5, None]))
    owner = {"this": host_key(), "other": "0123456789abcdef"}.get(machine, machine)
    expected = (good.ram or DEFAULT_RAM) if machine == "this" else DEFAULT_RAM
    return _dump({"format": 2, "machine": owner, "measurements": raw}), expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=record_files())
def test_any_machine_record_gives_the_answer_of_its_good_measurements(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("record")
    content, expected = data
    (folder / "machine-speed.json").write_bytes(content)
    assert _bounded(lambda: _answer(folder))[0] == expected


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blob=st.binary(max_size=600), at=st.integers(0, 600), which=st.sampled_from(["speed-runs", "machine-speed"]))
def test_any_bytes_in_either_file_give_an_answer_or_the_answer_of_no_file(tmp_path_factory, blob, at, which):
    """Bytes spliced into a valid file: never a traceback, the figures finite and in band."""
    folder = tmp_path_factory.mktemp("bytes")
    runs = _dump({"format": 2, "runs": [run_to_json(good_run(0))]})
    record = _dump(record_to_json(MachineRecord(host_key(), (measurement(GB, 0.2, 1.0),))))
    valid = runs if which == "speed-runs" else record
    (folder / f"{which}.json").write_bytes(valid[:at] + blob + valid[at + len(blob):])
    _bounded(lambda: _answer(folder))
    assert read_record(folder) is None or read_record(folder).host == host_key()


def _poisoned_files(poison: str, old: bool) -> None:
    """Both kept files with `poison` in every number (@): in this format, or as the last version wrote them."""
    if old:
        figure = '{"bytes_per_s": @, "detail": "d", "measured_at": @}'
        record = (f'{{"format": 1, "host": "{platform.node()}/{os.cpu_count() or 0} CPUs", "ram": {figure}, '
                  f'"compute": {figure.replace("bytes_per_s", "flops_per_s")}, "disks": {{}}}}')
    else:
        entry = '{"tier": "ram", "rate": @, "detail": "d", "measured_at": @, "load": @, "cores": 2}'
        record = f'{{"format": 2, "machine": "{host_key()}", "measurements": [{entry}]}}'
    run = ('{"recorded_at": @, "model": "m", "decode_tok_s": @, "decode_bytes": 100000000, "prefill_tok_s": @, '
           '"prefill_work_per_token": @, "machine": "MACHINE", "tier": "CPU", "device": "CPU", "load": 0.1, '
           '"cores": 2}').replace("MACHINE", host_key())
    runs = f'{{"runs": [{run}]}}' if old else f'{{"format": 2, "runs": [{run}]}}'
    record_path().write_text(record.replace("@", poison))
    runs_path().write_text(runs.replace("@", poison))


@pytest.mark.parametrize("old", [False, True], ids=["this format", "the last format"])
@pytest.mark.parametrize("poison", ["NaN", "Infinity", "1e308", "5e-324", "0", "-1", "1" + "0" * 400, '"x"', "true"])
def test_a_poisoned_record_never_ends_a_command_in_a_traceback_and_hw_writes_no_nan_back(poison, old, capsys,
                                                                                         smollm2):
    _poisoned_files(poison, old)
    for command in (["hw", "--calibration", "--json"], ["plan", smollm2.path, "--budget", "0", "--json", "--no-measure"],
                    ["hw"]):
        assert main(command) == 0, command
    out = capsys.readouterr().out
    assert "NaN" not in out and "Infinity" not in out
    kept = record_path().read_text()
    assert "NaN" not in kept and "Infinity" not in kept and read_record().ram.bytes_per_s > 0
