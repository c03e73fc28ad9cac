"""Tier bandwidths: the records, NVML readings parsed, and the probes measuring this machine for real.

NVML readings below are published figures for real boards (what `nvidia-smi -q` reports as the
memory bus width and the max memory clock), with the board's published bandwidth beside them.
"""

from __future__ import annotations

import os
import time
from types import SimpleNamespace

import pytest
from gguf_factory import ArchDesc, write_gguf

from gguf_budget.core.machine.bandwidth import (
    DEFAULT_DISK, DEFAULT_RAM, DEFAULT_VRAM, Bandwidth, Bandwidths, BandwidthSource, typed_bandwidth, vram_from_nvml,
    with_typed,
)
from gguf_budget.core.machine.bandwidth_probe import (
    DISK_CHUNK, RAM_PROBE_SECONDS, measure_disk, measure_ram, probe_bandwidths, read_vram,
)

GB = 10**9


@pytest.mark.parametrize(("bus", "clock", "published"), [
    (384, 9751, 936 * GB),  # GeForce RTX 3090, GDDR6X
    (5120, 1215, 1555 * GB),  # A100 40GB, HBM2
    (5120, 2619, 3.35e12),  # H100 SXM5 80GB, HBM3
])
def test_nvml_bus_width_and_memory_clock_give_the_published_bandwidth(bus, clock, published):
    figure = vram_from_nvml(bus, clock, "board")
    assert figure.source is BandwidthSource.MEASURED and f"{bus}-bit" in figure.detail
    assert abs(figure.bytes_per_s - published) / published < 0.03


@pytest.mark.parametrize(("bus", "clock"), [(0, 9751), (384, 0), (-1, 1)])
def test_a_zero_nvml_reading_is_no_reading(bus, clock):
    assert vram_from_nvml(bus, clock) is None


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_a_bandwidth_must_be_positive_whole_bytes(bad):
    with pytest.raises(ValueError, match="positive"):
        Bandwidth(bad, BandwidthSource.TYPED, "x")


def test_defaults_are_labelled_assumed_and_typed_figures_win():
    assert {b.source for b in (DEFAULT_RAM, DEFAULT_DISK, DEFAULT_VRAM)} == {BandwidthSource.ASSUMED}
    typed = with_typed(Bandwidths(), ram=5 * GB, vram=None)
    assert typed.ram == typed_bandwidth(5 * GB) and typed.disk == DEFAULT_DISK and typed.vram == DEFAULT_VRAM
    assert "assumed" in DEFAULT_DISK.text and "GiB/s" in DEFAULT_DISK.text


def test_the_ram_probe_measures_this_machine_within_its_time():
    start = time.perf_counter()
    figure = measure_ram()
    elapsed = time.perf_counter() - start
    assert isinstance(figure, Bandwidth) and figure.source is BandwidthSource.MEASURED
    assert figure.bytes_per_s > 10**8 and "one thread" in figure.detail
    assert elapsed < RAM_PROBE_SECONDS + 5  # allocation may be slow on a loaded machine; the loop itself stops


def test_the_ram_probe_says_why_when_it_cannot_allocate():
    assert measure_ram(size=-1).startswith("RAM probe failed")


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


class RecordedNvml:
    """A pynvml-shaped module answering with recorded readings (the boundary where the machine lacks a GPU)."""

    class NVMLError(Exception):
        pass

    def __init__(self, boards: list[tuple[str, int, int]], fail_init: bool = False):
        self.boards, self.fail_init, self.shut = boards, fail_init, False

    def nvmlInit(self):
        if self.fail_init:
            raise self.NVMLError("Driver Not Loaded")

    def nvmlShutdown(self):
        self.shut = True

    def nvmlDeviceGetCount(self):
        return len(self.boards)

    def nvmlDeviceGetHandleByIndex(self, i):
        return SimpleNamespace(board=self.boards[i])

    def nvmlDeviceGetName(self, h):
        return h.board[0].encode()

    def nvmlDeviceGetMemoryBusWidth(self, h):
        return h.board[1]

    def nvmlDeviceGetMaxClockInfo(self, h, clock_type):
        assert clock_type == 2  # NVML_CLOCK_MEM
        return h.board[2]


def test_vram_is_the_slowest_gpu_of_the_recorded_boards():
    nvml = RecordedNvml([("NVIDIA A100-SXM4-40GB", 5120, 1215), ("NVIDIA GeForce RTX 3090", 384, 9751)])
    figure = read_vram(nvml)
    assert isinstance(figure, Bandwidth) and "RTX 3090" in figure.detail and nvml.shut


@pytest.mark.parametrize(("nvml", "words"), [
    (RecordedNvml([], fail_init=True), "NVML did not start: Driver Not Loaded"),
    (RecordedNvml([]), "no NVIDIA GPU reported its memory bus"),
    (RecordedNvml([("odd", 0, 0)]), "no NVIDIA GPU reported its memory bus"),
    (SimpleNamespace(nvmlInit=lambda: None, nvmlShutdown=lambda: None), "NVML could not tell"),
])
def test_vram_probe_says_why_and_never_raises(nvml, words):
    assert words in read_vram(nvml)


def test_probe_bandwidths_keeps_the_base_where_nothing_was_measured(tmp_path):
    header_only = write_gguf(tmp_path / "skeleton.gguf", ArchDesc(n_layer=2), "header_only")[0]
    figures, reasons = probe_bandwidths(header_only, nvml=RecordedNvml([], fail_init=True))
    assert figures.ram.source is BandwidthSource.MEASURED
    assert figures.disk == DEFAULT_DISK and figures.vram == DEFAULT_VRAM
    assert [r.split(":")[0] for r in reasons] == ["DISK not measured", "VRAM not measured"]
    only_ram, none = probe_bandwidths(None, tiers=("ram",))
    assert only_ram.ram.source is BandwidthSource.MEASURED and none == ()
