"""How fast each llama.cpp GPU backend decodes and prefills, fitted on published llama.cpp speed tables.

Rule 1: decode on a GPU: seconds per token = the bytes the token reads from the GPU's memory /
        (its spec-sheet bandwidth × `decode` × `decode_type` of the model's main weight type, F16
        = 1: a K-quant's dequantisation costs the GPU more per byte) + `decode_fixed_s` (kernel launches and
        synchronisation, which do not shrink with more GPU cores), per backend. Stacked memory
        (HBM: A100, H100) is read at `hbm_decode` of its bandwidth instead, whatever the backend:
        one token's matrix-vector products do not keep its many channels busy (the published
        A100 and H100 rows reach 0.4–0.6 of their bandwidth where GDDR cards reach 0.7–0.9). On a
        backend that runs several makers' GPUs (Vulkan), the share is also × `vendor_decode` of the
        GPU's maker (1 where not fitted): each maker's driver compiles the same shaders, and the
        published Intel Arc rows on Vulkan (A770 in two sources, B580) reach about 0.6 of the share
        AMD and NVIDIA cards reach there. The CPU's own figures are the machine's calibration
        (`core.speed.calibration`), never these.
Rule 2: prefill on a GPU: seconds per prompt token = its FLOPs (`TokenPrices.prompt_flops`) /
        (the GPU's FP16 matrix rate × `prefill` × the speed of the model's main block weight type
        on that backend relative to F16, `type_speed`). The CPU's kernel table
        (`core.speed.kernel_speed`) does not carry over: a GPU dequantises into its matrix units.
        An Apple GPU's rate is its cores × APPLE_CORE_FLOPS of its chip generation (a rate per
        core, constant within a generation; a generation without rows takes the nearest older
        one's); Metal's `prefill` is 1, the share being in that rate.
Rule 3: the constants below are fitted by `fit_backends` on benchmarks/data/llamacpp_published.csv
        (llama-bench pp512 and tg128/tg512 rows, each with its source URL) as
        `benchmarks/speed_published.py` prints them, rounded; tests/test_speed_published.py fits
        them again from the rows. Decode: the relative least-squares line of
        `core.speed.calibration` (t = x / e + t0, x = bytes / bandwidth over the type's decode speed),
        a line that would need a negative fixed time keeps none; the decode type speeds are fitted
        within rows of one device, backend and source (one build), so the device's and the build's
        own speed cancel, and only for a type MIN_DEVICES such groups compared with another (one
        build's slow kernel is not the backend's); line and type speeds are fitted in turn. A maker's
        `vendor_decode` is fitted only on a backend whose rows come from two makers or more, for a maker
        with MIN_DEVICES devices there (the median over its devices of their shares over the line's;
        the line is fitted on the rows with those factors taken out, in turn). Prefill: type speeds are each row's rate over the median of
        its own device's rows (so a GPU's own spec error cancels), the share the median of what is
        left. A backend with fewer than MIN_DEVICES devices takes the pooled GPU figures (POOLED).
Rule 4: a machine's GPU tier (`gpu_figures`) is the GPU whose bandwidth the VRAM figure is (the
        slowest that states one, else the first): backend typed, else its preset's, else its maker's
        (`machine.backend` Rule 2); FP16 rate typed, else its preset's (an Apple preset's cores ×
        its generation's per-core rate), else unknown (no GPU prefill estimate). Its decode is
        this machine's own line for that GPU where quiet runs with every layer on it are kept
        (`calibration.gpu_line`, named by the buffer llama.cpp prints: `CUDA0`, `MTL0`; its
        efficiency against the GPU's own bandwidth, so a typed what-if bandwidth still moves it),
        else Rule 1's line of its backend. This one function decides; the CPU's runs never enter.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

from gguf_budget.core.fit.buffers.backends import BACKENDS, GpuBackend
from gguf_budget.core.gguf.constants import GGMLQuantizationType as Q
from gguf_budget.core.machine.backend import Backend, vendor_backend
from gguf_budget.core.machine.bandwidth import Bandwidth, Bandwidths, BandwidthSource, ComputeRate
from gguf_budget.core.machine.gpu import VENDOR_NAMES, GpuInfo, Vendor
from gguf_budget.core.machine.presets import preset_of
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.speed.calibration import _line, gpu_line

MIN_DEVICES = 2
DECODE_ROUNDS = 3
TYPE_ROUNDS = 50
"""Rule 3: the decode line and the type speeds are fitted in turn this many times (the type speeds take the line's
fixed time out, the line weighs each row's bytes by its type's speed)."""


@dataclass(frozen=True, kw_only=True)
class BackendSpeed:
    """Rules 1–2 for one backend: decode share and fixed time, prefill share and weight-type speeds."""

    backend: Backend
    decode: float
    decode_fixed_s: float
    prefill: float
    type_speed: Mapping[Q, float] = field(default_factory=dict)
    devices: int = 0
    hbm_decode: float = 0.5
    decode_type: Mapping[Q, float] = field(default_factory=dict)
    vendor_decode: Mapping[Vendor, float] = field(default_factory=dict)

    def speed_of(self, ggml_type: Q | None) -> float:
        """Rule 2: a type's prefill speed relative to F16 here; 1 for a type the rows never ran."""
        return self.type_speed.get(ggml_type, 1.0) if ggml_type is not None else 1.0

    def decode_speed_of(self, ggml_type: Q | None) -> float:
        """Rule 1: a type's share of the bandwidth relative to F16 here; 1 for a type the rows never compared."""
        return self.decode_type.get(ggml_type, 1.0) if ggml_type is not None else 1.0

    def vendor_of(self, vendor: Vendor | None) -> float:
        """Rule 1: the share a maker's GPUs reach here relative to the line; 1 for a maker without a factor."""
        return self.vendor_decode.get(vendor, 1.0) if vendor is not None else 1.0

    def decode_seconds(self, vram_bytes: int, bandwidth: int, share: float = 1.0, hbm: bool = False,
                       ggml_type: Q | None = None, vendor: Vendor | None = None) -> float:
        """Rule 1 for `vram_bytes` of a model whose main weight type is `ggml_type`, read at `bandwidth` B/s (stacked
        memory when `hbm`) by a GPU of `vendor`; `share` of the fixed time (the GPU's part of a split)."""
        rate = (bandwidth * (self.hbm_decode if hbm else self.decode) * self.decode_speed_of(ggml_type)
                * self.vendor_of(vendor))
        return vram_bytes / rate + self.decode_fixed_s * share

    @property
    def text(self) -> str:
        fitted = f"fitted on {self.devices} devices' published llama.cpp runs" if self.devices else "pooled GPU figures"
        return (f"{self.backend.value}: {self.decode:.2f} of the bandwidth + {self.decode_fixed_s * 1e3:.2f} ms a token, "
                f"prefill {self.prefill:.2f} of FP16 ({fitted})")


# Rule 3: fitted by benchmarks/speed_published.py on 318 rows of 61 devices (`--constants` prints this block).
HBM_DECODE = 0.535
POOLED = BackendSpeed(backend=Backend.VULKAN, decode=0.863, decode_fixed_s=0.00127, prefill=0.378, devices=0,
    hbm_decode=HBM_DECODE, type_speed={Q.Q4_0: 0.94, Q.Q4_K: 0.89, Q.F16: 1.0, Q.Q2_K: 0.72, Q.Q3_K: 0.71, Q.Q6_K: 0.54},
    decode_type={Q.F16: 1.0, Q.Q4_0: 0.81, Q.Q8_0: 0.92, Q.Q4_K: 0.86}, vendor_decode={})
BACKEND_SPEED: dict[Backend, BackendSpeed] = {
    Backend.CUDA: BackendSpeed(backend=Backend.CUDA, decode=0.848, decode_fixed_s=0.00151, prefill=0.38, devices=23,
        hbm_decode=HBM_DECODE, type_speed={Q.Q4_0: 0.96, Q.Q4_K: 0.91, Q.F16: 1.0, Q.Q2_K: 0.73, Q.Q3_K: 0.72},
        decode_type={Q.F16: 1.0, Q.Q4_K: 0.93}, vendor_decode={}),
    Backend.METAL: BackendSpeed(backend=Backend.METAL, decode=0.902, decode_fixed_s=0.00555, prefill=1.0, devices=29,
        hbm_decode=HBM_DECODE, type_speed={Q.Q8_0: 0.92, Q.Q4_0: 0.91, Q.Q4_K: 0.86, Q.F16: 1.0},
        decode_type={Q.F16: 1.0, Q.Q4_0: 1.0, Q.Q8_0: 1.01, Q.Q4_K: 0.79}, vendor_decode={}),
    Backend.ROCM: BackendSpeed(backend=Backend.ROCM, decode=0.658, decode_fixed_s=0.00159, prefill=0.414, devices=3,
        hbm_decode=HBM_DECODE, type_speed={Q.Q4_K: 0.92, Q.Q4_0: 1.08},
        decode_type={}, vendor_decode={}),
    Backend.VULKAN: BackendSpeed(backend=Backend.VULKAN, decode=0.786, decode_fixed_s=0.00097, prefill=0.156, devices=11,
        hbm_decode=HBM_DECODE, type_speed={Q.Q4_0: 2.12, Q.Q6_K: 1.0, Q.Q4_K: 0.76},
        decode_type={}, vendor_decode={Vendor.AMD: 1.05, Vendor.INTEL: 0.59, Vendor.NVIDIA: 0.98}),
}
APPLE_CORE_FLOPS: dict[str, int] = {'M1': 238511354077, 'M2': 256469294363, 'M3': 268580376400, 'M4': 318140708543, 'M5': 354873325883}
"""Rule 2: effective FP16 prefill FLOP/s per Apple GPU core, by chip generation ('M1' … 'M5')."""
def backend_speed(backend: Backend) -> BackendSpeed:
    """The backend's figures (Rules 1–3); POOLED, under the backend's name, where the rows were too few."""
    speed = BACKEND_SPEED.get(backend)
    return speed if speed is not None else replace(POOLED, backend=backend)


def apple_core_flops(generation: str, table: Mapping[str, int] | None = None) -> int | None:
    """Rule 2: the per-core rate of `generation`, else of the nearest older generation with one, else the newest."""
    rates = APPLE_CORE_FLOPS if table is None else table
    if not rates:
        return None
    if generation in rates:
        return rates[generation]
    older = [g for g in rates if g < generation]
    return rates[max(older)] if older else rates[min(rates)]


@dataclass(frozen=True, kw_only=True)
class DecodeRow:
    """A published decode row: bytes per token over the bandwidth (x, seconds) and the seconds it took (t)."""

    device: str
    x: float
    t: float
    hbm: bool = False
    main_type: Q | None = None
    group: str = ""
    vendor: Vendor | None = None


@dataclass(frozen=True, kw_only=True)
class PrefillRow:
    """A published prefill row: its main weight type, FLOPs per token over the GPU's rate (x) and seconds per token (t).

    For an Apple GPU `x` is FLOPs per token over its cores (a rate per core is what is fitted) and `generation` says
    which table entry it feeds."""

    device: str
    main_type: Q
    x: float
    t: float
    generation: str | None = None


def fit_decode(rows: Sequence[DecodeRow], types: Mapping[Q, float] | None = None,
               vendors: Mapping[Vendor, float] | None = None) -> tuple[float, float]:
    """Rule 3: (share of the bandwidth, fixed seconds) for one backend's rows, each row's bytes weighed by its main
    type's decode speed (`types`) and its maker's factor (`vendors`)."""
    speed, makers = types or {}, vendors or {}
    line = _line([(r.x / _of(speed, r.main_type) / _of_vendor(makers, r.vendor), r.t) for r in rows if not r.hbm], 0.0)
    assert line is not None
    return line


def _of(speeds: Mapping[Q, float], ggml_type: Q | None) -> float:
    return speeds.get(ggml_type, 1.0) if ggml_type is not None else 1.0


def _of_vendor(factors: Mapping[Vendor, float], vendor: Vendor | None) -> float:
    return factors.get(vendor, 1.0) if vendor is not None else 1.0


def fit_vendors(rows: Sequence[DecodeRow], line: tuple[float, float], types: Mapping[Q, float]) -> dict[Vendor, float]:
    """Rule 3: each maker's share relative to the line (the median over its devices of each device's geometric mean, so
    one device's odd path does not move its maker), where the rows come from two makers or more and the maker has
    MIN_DEVICES devices; none otherwise."""
    share, fixed_s = line
    plain = [r for r in rows if not r.hbm and r.vendor is not None and r.t > fixed_s]
    devices: dict[Vendor, set[str]] = {}
    for r in plain:
        devices.setdefault(r.vendor, set()).add(r.device)  # type: ignore[arg-type]  # filtered above
    if len(devices) < 2:
        return {}

    def device_share(device: str) -> float:
        return statistics.fmean(math.log(r.x / _of(types, r.main_type) / (r.t - fixed_s) / share)
                                for r in plain if r.device == device)

    return {v: round(math.exp(statistics.median(device_share(d) for d in sorted(names))), 2)
            for v, names in sorted(devices.items()) if len(names) >= MIN_DEVICES}


def _relative(points: Sequence[tuple[str, Q, float]]) -> dict[Q, float]:
    """Rule 3: each type's rate relative to F16 (else to the median type) where groups (a device in one build) ran it
    beside other types: log rate = the group's own + the type's, both fitted by least squares in turn (TYPE_ROUNDS),
    so a group's own speed cancels. A group of one type says nothing, and a type fewer than MIN_DEVICES groups
    compared with another keeps none (one build's kernel is not the backend's)."""
    by_group: dict[str, list[tuple[Q, float]]] = {}
    for group, ggml_type, rate in points:
        by_group.setdefault(group, []).append((ggml_type, math.log(rate)))
    rows = [(g, t, r) for g, items in by_group.items() for t, r in items]
    while True:
        types = {g: {t for gg, t, _ in rows if gg == g} for g in {g for g, _, _ in rows}}
        seen = {t: sum(t in kinds for kinds in types.values() if len(kinds) >= 2) for _, t, _ in rows}
        kept = [(g, t, r) for g, t, r in rows if len(types[g]) >= 2 and seen[t] >= MIN_DEVICES]
        if kept == rows:
            break
        rows = kept
    if not rows:
        return {}
    own: dict[Q, float] = {t: 0.0 for _, t, _ in rows}
    for _ in range(TYPE_ROUNDS):
        level = {g: statistics.fmean(r - own[t] for gg, t, r in rows if gg == g) for g in {g for g, _, _ in rows}}
        own = {t: statistics.fmean(r - level[g] for g, tt, r in rows if tt == t) for t in own}
    ref = own.get(Q.F16, statistics.median(own.values()))
    return {t: round(math.exp(v - ref), 2) for t, v in own.items()}


def fit_decode_types(rows: Sequence[DecodeRow], fixed_s: float) -> dict[Q, float]:
    """Rule 3: each main type's share of the bandwidth relative to F16, its fixed time taken out, within rows of one
    device in one build (`group`), so the device's and the build's own speed cancel."""
    return _relative([(r.group or r.device, r.main_type, r.x / (r.t - fixed_s)) for r in rows
                      if r.main_type is not None and r.t > fixed_s])


def fit_hbm(rows: Sequence[DecodeRow], speeds: Mapping[Backend, BackendSpeed], rows_backend: Mapping[int, Backend]) -> float | None:
    """Rule 1: the share stacked memory reaches, its backend's fixed time taken out (the median over HBM rows)."""
    shares = [r.x / speeds[rows_backend[id(r)]].decode_speed_of(r.main_type) / (r.t - speeds[rows_backend[id(r)]].decode_fixed_s)
              for r in rows if r.hbm and rows_backend[id(r)] in speeds and r.t > speeds[rows_backend[id(r)]].decode_fixed_s]
    return round(statistics.median(shares), 3) if shares else None


def fit_type_speeds(rows: Sequence[PrefillRow]) -> dict[Q, float]:
    """Rule 3: each type's rate relative to its device's median, F16 = 1 where F16 ran (else the median type)."""
    by_device: dict[str, list[PrefillRow]] = {}
    for r in rows:
        by_device.setdefault(r.device, []).append(r)
    relative: dict[Q, list[float]] = {}
    for device_rows in by_device.values():
        if len({r.main_type for r in device_rows}) < 2:
            continue
        mid = statistics.median(r.x / r.t for r in device_rows)
        for r in device_rows:
            relative.setdefault(r.main_type, []).append(r.x / r.t / mid)
    if not relative:
        return {}
    medians = {t: statistics.median(v) for t, v in relative.items()}
    ref = medians.get(Q.F16, statistics.median(medians.values()))
    return {t: round(v / ref, 2) for t, v in medians.items()}


def fit_prefill(rows: Sequence[PrefillRow], types: Mapping[Q, float]) -> float:
    """Rule 3: the share of the FP16 rate left once the type speeds are taken out."""
    return statistics.median(r.x / r.t / types.get(r.main_type, 1.0) for r in rows)


def fit_apple(rows: Sequence[PrefillRow], types: Mapping[Q, float]) -> dict[str, int]:
    """Rule 2–3: the per-core rate of each generation with rows."""
    rates: dict[str, list[float]] = {}
    for r in rows:
        if r.generation is not None:
            rates.setdefault(r.generation, []).append(r.x / r.t / types.get(r.main_type, 1.0))
    return {g: int(statistics.median(v)) for g, v in sorted(rates.items())}


@dataclass(frozen=True, kw_only=True)
class Fitted:
    """Everything `fit_backends` fits: the backends' figures, the pooled ones, the Apple per-core rates."""

    speeds: dict[Backend, BackendSpeed]
    pooled: BackendSpeed
    apple: dict[str, int]

    def speed(self, backend: Backend) -> BackendSpeed:
        found = self.speeds.get(backend)
        if found is not None:
            return found
        return replace(self.pooled, backend=backend)


def _backend_fit(backend: Backend, decode: Sequence[DecodeRow], prefill: Sequence[PrefillRow],
                 by_vendor: bool = True) -> BackendSpeed:
    plain = [r for r in decode if not r.hbm]
    e, t0 = POOLED.decode, POOLED.decode_fixed_s
    decode_types: dict[Q, float] = {}
    vendors: dict[Vendor, float] = {}
    for _ in range(DECODE_ROUNDS if plain else 0):
        e, t0 = fit_decode(plain, decode_types, vendors)
        decode_types = fit_decode_types(decode, t0)
        vendors = fit_vendors(plain, (e, t0), decode_types) if by_vendor else {}
    types = fit_type_speeds(prefill)
    share = 1.0 if backend is Backend.METAL else (fit_prefill(prefill, types) if prefill else POOLED.prefill)
    devices = len({r.device for r in decode} | {r.device for r in prefill})
    return BackendSpeed(backend=backend, decode=round(e, 3), decode_fixed_s=round(t0, 5), prefill=round(share, 3),
                        type_speed=types, devices=devices, decode_type=decode_types, vendor_decode=vendors)


def fit_backends(decode: Mapping[Backend, Sequence[DecodeRow]], prefill: Mapping[Backend, Sequence[PrefillRow]]) -> Fitted:
    """Rule 3 over every backend's rows: a backend with MIN_DEVICES devices or more gets its own figures."""
    all_decode = [r for rows in decode.values() for r in rows]
    all_prefill = [r for b, rows in prefill.items() if b is not Backend.METAL for r in rows]
    pooled = _backend_fit(Backend.VULKAN, all_decode, all_prefill, by_vendor=False)  # makers apart are backends apart
    speeds: dict[Backend, BackendSpeed] = {}
    for backend in set(decode) | set(prefill):
        d, p = decode.get(backend, ()), prefill.get(backend, ())
        plain_devices = len({r.device for r in d if not r.hbm})
        if plain_devices >= MIN_DEVICES or len({r.device for r in p}) >= MIN_DEVICES:
            fitted = _backend_fit(backend, d, p)
            own_decode = plain_devices >= MIN_DEVICES
            speeds[backend] = replace(
                fitted, decode=fitted.decode if own_decode else pooled.decode,
                decode_fixed_s=fitted.decode_fixed_s if own_decode else pooled.decode_fixed_s,
                vendor_decode=fitted.vendor_decode if own_decode else {},
                prefill=fitted.prefill if len({r.device for r in p}) >= MIN_DEVICES else pooled.prefill)
    owner = {id(r): b for b, rows in decode.items() for r in rows}
    hbm = fit_hbm(all_decode, {**{b: pooled for b in decode}, **speeds}, owner)
    if hbm is not None:
        speeds = {b: replace(s, hbm_decode=hbm) for b, s in speeds.items()}
        pooled = replace(pooled, hbm_decode=hbm)
    apple = fit_apple(prefill.get(Backend.METAL, ()), speeds[Backend.METAL].type_speed if Backend.METAL in speeds else {})
    return Fitted(speeds=speeds, pooled=replace(pooled, devices=0), apple=apple)


@dataclass(frozen=True, kw_only=True)
class GpuFigures:
    """Rule 4: what a full load's GPU tier runs at: its backend's figures, its FP16 rate (None: unknown), HBM or not,
    the model's main weight type, and this machine's own line for that GPU (None: no runs of its own)."""

    speed: BackendSpeed
    compute: ComputeRate | None
    hbm: bool = False
    name: str = ""
    weight_type: Q | None = None
    own: tuple[float, float] | None = None
    device: str = ""
    vendor: Vendor | None = None

    def decode_seconds(self, vram_bytes: int, bandwidth: int, share: float = 1.0) -> float:
        """Rule 4's choice of Rule 1: this GPU's own line where it has one, else its backend's for the weight type and
        the GPU's maker."""
        if self.own is not None:
            return vram_bytes / (bandwidth * self.own[0]) + self.own[1] * share
        return self.speed.decode_seconds(vram_bytes, bandwidth, share, self.hbm, self.weight_type, self.vendor)

    @property
    def decode_share(self) -> float:
        """The share of the bandwidth a token reaches here (its own line's, else its backend's for the weight type and
        the maker)."""
        if self.own is not None:
            return self.own[0]
        return ((self.speed.hbm_decode if self.hbm else self.speed.decode) * self.speed.decode_speed_of(self.weight_type)
                * self.speed.vendor_of(self.vendor))

    @property
    def decode_fixed_s(self) -> float:
        return self.own[1] if self.own is not None else self.speed.decode_fixed_s

    @property
    def text(self) -> str:
        if self.own is None:
            factor = self.speed.vendor_of(self.vendor)
            if factor == 1.0 or self.vendor is None:
                return self.speed.text
            share, rest = self.speed.text.split(" of the bandwidth", 1)
            return f"{share} of the bandwidth (× {factor:.2f} on {VENDOR_NAMES[self.vendor]} GPUs){rest}"
        return (f"{self.device} on this machine: {self.own[0]:.2f} of the bandwidth + {self.own[1] * 1e3:.2f} ms a "
                f"token (its own runs); prefill {self.speed.text.split('prefill ', 1)[1]}")


def gpu_device(backend: Backend, gpu: GpuInfo) -> str:
    """Rule 4: the GPU's buffer name as llama.cpp prints it (`CUDA0`, `ROCm1`, `MTL0`), which its runs carry."""
    return BACKENDS[GpuBackend(backend.value.lower())].device_name(gpu.index, gpu.name)


def gpu_figures(bandwidths: Bandwidths, machine: HardwareSnapshot | None, weight_type: Q | None = None) -> GpuFigures:
    """Rule 4."""
    gpus = machine.gpus if machine is not None else ()
    stated = [g for g in gpus if g.bandwidth]
    gpu = min(stated, key=lambda g: g.bandwidth or 0) if stated else (gpus[0] if gpus else None)
    preset = preset_of(gpu) if gpu is not None else None
    backend = bandwidths.backend or (preset.backend if preset is not None else
                                     vendor_backend(gpu.vendor) if gpu is not None else Backend.CUDA)
    compute = bandwidths.gpu_compute
    if compute is None and preset is not None:
        flops = preset.fp16_flops
        if flops is None and preset.gpu_cores and preset.generation:
            rate = apple_core_flops(preset.generation)
            flops = None if rate is None else rate * preset.gpu_cores
        if flops:
            compute = ComputeRate(int(flops), BandwidthSource.CITED, f"{preset.name}: {preset.compute_source}")
    speed = backend_speed(backend)
    device = gpu_device(backend, gpu) if gpu is not None else ""
    own_bandwidth = Bandwidth(gpu.bandwidth, BandwidthSource.REPORTED, gpu.name) if gpu is not None and gpu.bandwidth \
        else bandwidths.vram
    own = gpu_line(bandwidths.gpu_runs, device, own_bandwidth, speed.decode_fixed_s) if device else None
    return GpuFigures(speed=speed, compute=compute, hbm=preset.hbm if preset is not None else False,
                      name=gpu.name if gpu is not None else "", weight_type=weight_type, own=own, device=device,
                      vendor=gpu.vendor if gpu is not None else None)


SHIPPED = Fitted(speeds=BACKEND_SPEED, pooled=POOLED, apple=APPLE_CORE_FLOPS)
"""The shipped constants as one `Fitted` (what tests/test_speed_published.py compares a fresh fit with)."""
