"""Tier bandwidths: the records, which figure a machine's tier takes, the probes measuring this machine for real,
and the record that keeps them so every command reads the same figures."""

from __future__ import annotations

import json
import os
import time

import pytest
from gguf_factory import ArchDesc, write_gguf

from gguf_budget.core.errors import RequestError
from gguf_budget.core.machine.bandwidth import (
    DEFAULT_DISK, DEFAULT_RAM, DEFAULT_VRAM, Bandwidth, Bandwidths, BandwidthSource, ComputeRate, for_machine,
    typed_bandwidth, with_typed,
)
from gguf_budget.core.machine.bandwidth_probe import (
    DISK_CHUNK, llama_threads, measure_compute, measure_disk, measure_ram,
)
from gguf_budget.core.machine.bandwidth_store import (
    MachineRecord, Measurement, Probes, host_key, machine_bandwidths, read_record, record_path, write_record,
)
from gguf_budget.core.machine.presets import parse_presets, preset_machine, with_presets
from gguf_budget.core.machine.snapshot import gpu_from_nvml, hypothetical_machine, what_if
from gguf_budget.core.regular_file import FileKind

GB = 10**9
MiB = 1 << 20


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_a_bandwidth_must_be_positive_whole_bytes(bad):
    with pytest.raises(RequestError, match="positive"):
        Bandwidth(bad, BandwidthSource.TYPED, "x")


def test_defaults_are_labelled_assumed_and_typed_figures_win():
    assert {b.source for b in (DEFAULT_RAM, DEFAULT_DISK, DEFAULT_VRAM)} == {BandwidthSource.ASSUMED}
    typed = with_typed(Bandwidths(), ram=5 * GB, vram=None)
    assert typed.ram == typed_bandwidth(5 * GB) and typed.disk == DEFAULT_DISK and typed.vram == DEFAULT_VRAM
    assert "assumed" in DEFAULT_DISK.text and "GiB/s" in DEFAULT_DISK.text


def test_a_measured_figure_says_its_date():
    figure = Bandwidth(20 * GB, BandwidthSource.MEASURED, "probe", measured_at=1_764_720_000.0)
    assert "(measured on 2025-12-03: probe)" in figure.text


# ---- which figure a machine's tier takes ----

def test_a_preset_gpu_is_priced_at_its_cited_bandwidth_and_typed_figures_still_win():
    machine = with_presets("RTX 4090", hypothetical_machine(64 << 30))
    vram = for_machine(Bandwidths(), machine).vram
    assert vram.bytes_per_s == 1008 * GB and vram.source is BandwidthSource.CITED and "rtx-4090" in vram.detail
    typed = with_typed(Bandwidths(), vram=900 * GB)
    assert for_machine(typed, machine).vram == typed.vram


def test_the_slowest_gpu_stands_for_all_and_a_driver_reading_is_reported():
    nvml = (gpu_from_nvml(0, "NVIDIA A100-SXM4-40GB", 40 << 30, 40 << 30, 0, 5120, 1215),
            gpu_from_nvml(1, b"NVIDIA GeForce RTX 3090", 24 << 30, 24 << 30, 0, 384, 9751))
    vram = for_machine(Bandwidths(), what_if(hypothetical_machine(64 << 30), gpus=nvml)).vram
    assert vram.source is BandwidthSource.REPORTED and "RTX 3090" in vram.detail
    assert abs(vram.bytes_per_s - 936 * GB) / (936 * GB) < 0.01


def test_a_unified_memory_preset_reads_its_ram_at_the_cited_figure():
    m4 = preset_machine(parse_presets("M4 Max 128GB")[0])
    figures = for_machine(Bandwidths(), m4)
    assert figures.ram.bytes_per_s == figures.vram.bytes_per_s == 546 * GB
    assert figures.ram.source is BandwidthSource.CITED
    assert for_machine(with_typed(Bandwidths(), ram=100 * GB), m4).ram.source is BandwidthSource.TYPED
    gpu_preset = with_presets("RTX 4090", hypothetical_machine(64 << 30))
    assert for_machine(Bandwidths(), gpu_preset).ram == DEFAULT_RAM  # a card does not change the host's RAM


def test_no_machine_and_no_gpu_keep_the_figures():
    assert for_machine(Bandwidths(), None) == Bandwidths()
    assert for_machine(Bandwidths(), hypothetical_machine(8 << 30)) == Bandwidths()


# ---- the probes, for real ----

def test_the_ram_probe_reads_with_every_core_llama_cpp_would_use():
    threads = llama_threads()
    assert 1 <= threads <= (os.cpu_count() or 1)
    figure = measure_ram(size=64 * MiB, passes=3)
    assert isinstance(figure, Bandwidth) and figure.source is BandwidthSource.MEASURED
    assert figure.bytes_per_s > 10**8 and figure.detail.startswith(f"{threads}-thread read of 64.00 MiB, best of 3, ")
    assert figure.detail.split(", load average ")[1].replace(".", "").isdigit()  # a busy machine reads slower
    assert abs(figure.measured_at - time.time()) < 60


def test_the_probes_say_why_when_they_cannot_run():
    assert measure_ram(size=-8).startswith("RAM probe failed")
    assert measure_compute(n=-1).startswith("compute probe failed")


def test_the_compute_probe_times_a_matrix_multiply():
    rate = measure_compute(n=256, passes=2)
    assert isinstance(rate, ComputeRate) and rate.flops_per_s > 10**8 and "256×256" in rate.detail


def test_the_disk_probe_reads_a_file_with_data(tmp_path):
    path = tmp_path / "weights.bin"
    path.write_bytes(os.urandom(4 * DISK_CHUNK))
    figure = measure_disk(path)
    assert isinstance(figure, Bandwidth) and "uncached read" in figure.detail and "weights.bin" in figure.detail


def test_the_disk_probe_has_nothing_to_read_in_a_header_only_or_sparse_file(tmp_path):
    header_only = write_gguf(tmp_path / "skeleton.gguf", ArchDesc(n_layer=2), "header_only")[0]
    sparse = write_gguf(tmp_path / "sparse.gguf", ArchDesc(n_layer=2, n_embd=1024, n_vocab=32000), "sparse")[0]
    for path in (header_only, sparse):
        reason = measure_disk(path)
        assert isinstance(reason, str) and "no weights to read" in reason
    assert "cannot open" in measure_disk(tmp_path / "gone.gguf")
    os.mkfifo(tmp_path / "pipe")
    assert "not a regular file" in measure_disk(tmp_path / "pipe")  # opened without blocking, then refused


# ---- measured once, kept, read by every caller ----

class CountingProbes:
    """The real probes (small, so a test stays quick), counted: a kept figure must not be measured again. The load
    beside them reads quiet (`load`): how a busy machine is judged is tested on its own."""

    def __init__(self, load: float | None = 0.0):
        self.calls: list[str] = []
        self.load = load

    def probes(self) -> Probes:
        def ram():
            self.calls.append("ram")
            return measure_ram(size=16 * MiB, passes=2)

        def compute():
            self.calls.append("compute")
            return measure_compute(n=128, passes=2)

        def disk(path):
            self.calls.append("disk")
            return measure_disk(path)

        return Probes(ram, compute, disk, lambda: self.load, lambda: 2)


@pytest.fixture
def weights(tmp_path):
    path = tmp_path / "weights.gguf"
    path.write_bytes(os.urandom(4 * DISK_CHUNK))
    return path


def test_figures_are_measured_once_then_read_back_the_same(private_data_dir, weights):
    counted = CountingProbes()
    first, notes = machine_bandwidths(weights, probes=counted.probes())
    assert counted.calls == ["ram", "compute", "disk"] and notes == ()
    assert {first.ram.source, first.disk.source, first.compute.source} == {BandwidthSource.MEASURED}
    again, _ = machine_bandwidths(weights, probes=counted.probes())
    assert again == first and counted.calls == ["ram", "compute", "disk"]  # nothing measured the second time
    assert record_path() == private_data_dir / "machine-speed.json" and read_record().ram == first.ram


def test_measuring_again_adds_a_measurement_keeps_the_best_quiet_one_and_forgets_the_disks(weights):
    counted = CountingProbes()
    machine_bandwidths(weights, probes=counted.probes())
    redone, _ = machine_bandwidths(None, ("ram", "compute"), again=True, probes=counted.probes())
    assert counted.calls == ["ram", "compute", "disk", "ram", "compute"]
    record = read_record()
    assert record.disks == () and [m.tier for m in record.measurements] == ["ram", "ram", "compute", "compute"]
    assert redone.ram.bytes_per_s == max(m.rate for m in record.measurements if m.tier == "ram")


def test_no_measuring_reads_the_kept_figures_else_the_assumed_ones(weights):
    counted = CountingProbes()
    nothing, notes = machine_bandwidths(weights, measure=False, probes=counted.probes())
    assert nothing == Bandwidths() and notes == () and counted.calls == []
    measured, _ = machine_bandwidths(weights, probes=counted.probes())
    assert machine_bandwidths(weights, measure=False)[0] == measured


def test_only_the_tiers_asked_for_are_measured(tmp_path):
    header_only = write_gguf(tmp_path / "skeleton.gguf", ArchDesc(n_layer=2), "header_only")[0]
    counted = CountingProbes()
    figures, notes = machine_bandwidths(header_only, ("disk",), probes=counted.probes())
    assert figures.ram == DEFAULT_RAM and figures.disk == DEFAULT_DISK
    assert notes == ("DISK not measured: skeleton.gguf has no weights to read (header-only or sparse)",)
    assert counted.calls == ["disk"]


def _write_raw(text: str | bytes) -> None:
    path = record_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)


@pytest.mark.parametrize("damage", [
    "not json", "[]", '{"format": 3, "machine": "x"}', "{}", b"\xff\xfe",
    json.dumps({"format": 1, "host": "HOST", "ram": {"bytes_per_s": 10**10, "detail": "d", "measured_at": 1}}),
    json.dumps({"format": 2, "machine": "HOST", "measurements": [{"tier": "ram", "rate": -5, "detail": "d",
                                                                  "measured_at": 1, "load": 0.1, "cores": 2}]}),
    json.dumps({"format": 2, "machine": "HOST", "measurements": [{"tier": "ram", "rate": "fast"}]}),
    json.dumps({"format": 2, "machine": "HOST", "disks": []}),
    json.dumps({"format": 2, "machine": "HOST", "pad": "x" * FileKind.RECORD.cap}),
])
def test_a_damaged_record_is_no_record_and_is_measured_again(damage):
    text = damage.replace("HOST", host_key()) if isinstance(damage, str) else damage
    _write_raw(text)
    assert (read_record() or MachineRecord(host_key())).ram is None  # no record, or a record with no figure
    counted = CountingProbes()
    figures, _ = machine_bandwidths(None, ("ram",), probes=counted.probes())
    assert counted.calls == ["ram"] and figures.ram.source is BandwidthSource.MEASURED
    assert read_record() is not None  # written over the damage


def test_another_machines_record_is_not_read():
    ram = Measurement(tier="ram", rate=99 * GB, detail="elsewhere", measured_at=1.0, load=0.5, cores=64)
    assert write_record(MachineRecord("0123456789abcdef", (ram,))) is None
    assert read_record() is None
    assert write_record(MachineRecord(host_key(), (ram,))) is None
    assert read_record().ram == Bandwidth(99 * GB, BandwidthSource.MEASURED, "elsewhere", 1.0)
    assert len(host_key()) == 16 and host_key() == host_key()  # a hash, the same every time


def test_a_record_that_is_not_a_regular_file_is_refused_without_blocking():
    path = record_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    assert read_record() is None  # a FIFO would block a plain open() forever


def test_a_data_folder_that_cannot_be_written_keeps_the_figures_for_this_run_and_says_why(tmp_path):
    folder = tmp_path / "not-a-folder"
    folder.write_text("a file where the data folder should be")
    figures, notes = machine_bandwidths(None, ("ram",), folder=folder, probes=CountingProbes().probes())
    assert figures.ram.source is BandwidthSource.MEASURED
    assert len(notes) == 1 and notes[0].startswith("the measured figures could not be kept in")
