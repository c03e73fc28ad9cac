"""The per-backend speed model against published llama.cpp rows (benchmarks/data/llamacpp_published.csv).

The shipped constants are what a fresh fit of the rows gives; a few recorded rows are estimated
through the app's own path (a preset machine, `estimate_fit`, `fit_speed`) and land near what was
published and on the benchmark's own estimate; every preset says where its figures come from.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import pytest
from published_speeds import Published, decode_row, estimate, prefill_row, read_rows, shape

from gguf_budget.core import FitRequest, estimate_fit, hypothetical_machine
from gguf_budget.core.machine.backend import Backend
from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.core.machine.presets import PRESETS, find_preset, with_presets
from gguf_budget.core.gguf.constants import GGMLQuantizationType as Q
from gguf_budget.core.machine.gpu import Vendor
from gguf_budget.core.speed.backend_speed import (
    SHIPPED, DecodeRow, PrefillRow, backend_speed, fit_backends, fit_vendors, gpu_figures,
)
from gguf_budget.core.speed.estimate import fit_speed
from gguf_budget.core.speed.token_bytes import TokenPrices

GiB = 1 << 30


def fit_on(rows: list[Published]):
    decode: dict[Backend, list[DecodeRow]] = defaultdict(list)
    prefill: dict[Backend, list[PrefillRow]] = defaultdict(list)
    for r in rows:
        if r.decode:
            decode[r.backend].append(decode_row(r))
        else:
            prefill[r.backend].append(prefill_row(r))
    return fit_backends(decode, prefill)


def test_the_shipped_constants_are_the_fit_of_the_published_rows():
    rows = read_rows()
    assert len(rows) >= 140 and len({r.device for r in rows}) >= 30
    assert all(r.source.startswith("https://") for r in rows)
    assert fit_on(rows) == SHIPPED


def _row(device: str, model: str, quant: str, test: str) -> Published:
    return next(r for r in read_rows() if (r.device, r.model, r.quant, r.test) == (device, model, quant, test))


@pytest.mark.parametrize(("device", "model", "quant", "tests"), [
    ("RTX 4090", "llama2-7b", "Q4_0", ("tg128",)),                  # discussion 15013
    ("RTX 4090", "llama3-8b", "Q4_K_M", ("tg512", "pp512")),
    ("M2 Ultra 76-core 192GB", "llama3-8b", "Q4_K_M", ("tg512", "pp512")),
    ("RX 9070 XT", "qwen2.5-14b", "Q4_0", ("tg128", "pp512")),      # Vulkan
    ("H100 PCIe 80GB", "llama3-70b", "Q4_K_M", ("tg512",)),         # HBM
    ("Arc B580", "llama2-7b", "Q4_0", ("tg128",)),                  # Vulkan on an Intel GPU (discussion 10879)
    ("M1 Pro 14-core 16GB", "llama2-7b", "Q8_0", ("tg128", "pp512")),  # discussion 4167's full table
])
def test_the_app_estimates_a_published_row_as_the_benchmark_does(device, model, quant, tests):
    spec = shape(model, quant)
    machine = with_presets(device, hypothetical_machine(512 * GiB))
    backend = _row(device, model, quant, tests[0]).backend
    typed = Bandwidths(backend=backend) if backend is not find_preset(device).backend else Bandwidths()  # as it ran
    fit = estimate_fit(spec, machine, FitRequest(ctx=4096))
    assert fit.gpu_layers == spec.n_layer + 1 and fit.output_on_gpu  # every block and the output layer
    for test in tests:
        row = _row(device, model, quant, test)
        if row.decode:
            speed = fit_speed(TokenPrices.of(spec), fit, typed, start_tokens=row.tokens // 2)
            ours = speed.tok_s
        else:
            speed = fit_speed(TokenPrices.of(spec), fit, typed, prompt_tokens=row.tokens)
            assert speed.prefill is not None
            ours = speed.prefill.tok_s
        assert speed.gpu.speed.backend is row.backend
        bench = estimate(row, SHIPPED)
        assert ours == pytest.approx(bench, rel=0.03)  # the host's embedding row and fixed share aside
        assert 0.65 < bench / row.tok_s < 1.35


def test_every_preset_says_its_backend_compute_and_sources():
    names = [n.lower() for p in PRESETS for n in (p.name, *p.aliases)]
    assert len(names) == len(set(names))  # variants are named apart, aliases included
    for p in PRESETS:
        assert p.source and "http" in p.source and p.bandwidth > 0
        assert isinstance(p.backend, Backend) and p.backend is not Backend.CPU
        assert (p.fp16_flops or 0) > 0 or (p.gpu_cores and p.generation), p.name
        assert p.compute_source, p.name
    assert find_preset("A100 80GB").name == "A100 SXM 80GB" and find_preset("m2 ultra 192gb").gpu_cores == 76  # old names
    h100 = {p.name: p for p in PRESETS if p.name.startswith("H100")}
    assert set(h100) == {"H100 SXM 80GB", "H100 PCIe 80GB"} and h100["H100 SXM 80GB"].bandwidth > h100["H100 PCIe 80GB"].bandwidth


def _maker_row(device: str, vendor: Vendor, share: float) -> DecodeRow:
    """A row of 1 GB read at 1 TB/s (x = 1 ms) by a GPU reaching `share` of it, with no fixed time."""
    return DecodeRow(device=device, x=1e-3, t=1e-3 / share, vendor=vendor, main_type=Q.Q4_0, group=device)


@pytest.mark.parametrize(("rows", "expected"), [
    # one maker: its share is the line's own, whatever it is
    ([_maker_row("a", Vendor.NVIDIA, 0.8), _maker_row("b", Vendor.NVIDIA, 0.4)], {}),
    # two makers, Intel on one device only: no factor for Intel (one device's driver is not its maker's)
    ([_maker_row("a", Vendor.AMD, 0.8), _maker_row("b", Vendor.AMD, 0.8), _maker_row("c", Vendor.INTEL, 0.4)],
     {Vendor.AMD: 1.0}),
    # Intel on two devices at half the share AMD's two reach: 0.5 of the line AMD sets
    ([_maker_row("a", Vendor.AMD, 0.8), _maker_row("b", Vendor.AMD, 0.8), _maker_row("c", Vendor.INTEL, 0.4),
      _maker_row("d", Vendor.INTEL, 0.4)], {Vendor.AMD: 1.0, Vendor.INTEL: 0.5}),
    # the median device: one odd device (an old path) does not move its maker
    ([_maker_row("a", Vendor.NVIDIA, 0.8), _maker_row("b", Vendor.NVIDIA, 0.8), _maker_row("c", Vendor.NVIDIA, 0.2),
      _maker_row("d", Vendor.AMD, 0.8), _maker_row("e", Vendor.AMD, 0.8)], {Vendor.AMD: 1.0, Vendor.NVIDIA: 1.0}),
])
def test_a_makers_factor_needs_two_makers_and_two_of_its_devices(rows, expected):
    assert fit_vendors(rows, (0.8, 0.0), {}) == expected


def test_an_intel_gpu_on_vulkan_decodes_at_its_makers_share_and_says_so():
    """Backend Rule 1: the maker's factor applies to Vulkan's line (Intel's fitted from the A770 and B580 rows);
    CUDA, one maker's backend, has none."""
    vulkan = backend_speed(Backend.VULKAN)
    assert vulkan.vendor_of(Vendor.INTEL) < 0.75 < vulkan.vendor_of(Vendor.AMD) and backend_speed(Backend.CUDA).vendor_decode == {}
    arc = with_presets("Arc B580", hypothetical_machine(64 * GiB)).gpus
    figures = gpu_figures(Bandwidths(backend=Backend.VULKAN), replace(hypothetical_machine(64 * GiB), gpus=arc))
    assert figures.vendor is Vendor.INTEL and f"× {vulkan.vendor_of(Vendor.INTEL):.2f} on Intel GPUs" in figures.text
    assert figures.decode_share == pytest.approx(vulkan.decode * vulkan.vendor_of(Vendor.INTEL))
    plain = replace(figures, vendor=None)
    assert figures.decode_seconds(4 << 30, 456 * 10**9) > plain.decode_seconds(4 << 30, 456 * 10**9)
