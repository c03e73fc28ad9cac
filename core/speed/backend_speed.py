"""How fast each llama.cpp GPU backend decodes and prefills, fitted on published llama.cpp speed tables.

Rule 1: decode on a GPU: seconds per token = the bytes the token reads from the GPU's memory /
        (its spec-sheet bandwidth × `decode`) + `decode_fixed_s` (kernel launches and
        synchronisation, which do not shrink with more GPU cores), per backend. Stacked memory
        (HBM: A100, H100) is read at `hbm_decode` of its bandwidth instead, whatever the backend:
        one token's matrix-vector products do not keep its many channels busy (the published
        A100 and H100 rows reach 0.4–0.6 of their bandwidth where GDDR cards reach 0.7–0.9). The
        CPU's own figures are the machine's calibration (`core.speed.calibration`), never these.
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
        `core.speed.calibration` (t = x / e + t0, x = bytes / bandwidth), a line that would need a
        negative fixed time keeps none. Prefill: type speeds are each row's rate over the median of
        its own device's rows (so a GPU's own spec error cancels), the share the median of what is
        left. A backend with fewer than MIN_DEVICES devices takes the pooled GPU figures (POOLED).
Rule 4: a machine's GPU tier (`gpu_figures`) is the GPU whose bandwidth the VRAM figure is (the
        slowest that states one, else the first): backend typed, else its preset's, else its maker's
        (`machine.backend` Rule 2); FP16 rate typed, else its preset's (an Apple preset's cores ×
        its generation's per-core rate), else unknown (no GPU prefill estimate).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

from gguf_budget.core.gguf.constants import GGMLQuantizationType as Q
from gguf_budget.core.machine.backend import Backend, vendor_backend
from gguf_budget.core.machine.bandwidth import Bandwidths, BandwidthSource, ComputeRate
from gguf_budget.core.machine.presets import preset_of
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.speed.calibration import _line

MIN_DEVICES = 2


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

    def speed_of(self, ggml_type: Q | None) -> float:
        """Rule 2: a type's prefill speed relative to F16 here; 1 for a type the rows never ran."""
        return self.type_speed.get(ggml_type, 1.0) if ggml_type is not None else 1.0

    def decode_seconds(self, vram_bytes: int, bandwidth: int, share: float = 1.0, hbm: bool = False) -> float:
        """Rule 1 for `vram_bytes` read at `bandwidth` B/s (stacked memory when `hbm`); `share` of the fixed time
        (the GPU's part of a split)."""
        return vram_bytes / (bandwidth * (self.hbm_decode if hbm else self.decode)) + self.decode_fixed_s * share

    @property
    def text(self) -> str:
        fitted = f"fitted on {self.devices} devices' published llama.cpp runs" if self.devices else "pooled GPU figures"
        return (f"{self.backend.value}: {self.decode:.2f} of the bandwidth + {self.decode_fixed_s * 1e3:.2f} ms a token, "
                f"prefill {self.prefill:.2f} of FP16 ({fitted})")


# Rule 3: fitted by benchmarks/speed_published.py on 152 rows of 39 devices (`--constants` prints this block).
HBM_DECODE = 0.501
POOLED = BackendSpeed(backend=Backend.VULKAN, decode=0.783, decode_fixed_s=0.00171, prefill=0.369, devices=0,
    hbm_decode=HBM_DECODE, type_speed={Q.Q4_0: 1.04, Q.Q4_K: 0.89, Q.F16: 1.0, Q.Q2_K: 0.73, Q.Q3_K: 0.72, Q.Q6_K: 0.68})
BACKEND_SPEED: dict[Backend, BackendSpeed] = {
    Backend.CUDA: BackendSpeed(backend=Backend.CUDA, decode=0.819, decode_fixed_s=0.00149, prefill=0.38, devices=23,
        hbm_decode=HBM_DECODE, type_speed={Q.Q4_0: 0.96, Q.Q4_K: 0.91, Q.F16: 1.0, Q.Q2_K: 0.73, Q.Q3_K: 0.72}),
    Backend.METAL: BackendSpeed(backend=Backend.METAL, decode=0.773, decode_fixed_s=0.00415, prefill=1.0, devices=9,
        hbm_decode=HBM_DECODE, type_speed={Q.Q4_0: 0.84, Q.Q4_K: 0.85, Q.F16: 1.0}),
    Backend.ROCM: BackendSpeed(backend=Backend.ROCM, decode=0.658, decode_fixed_s=0.00159, prefill=0.414, devices=3,
        hbm_decode=HBM_DECODE, type_speed={Q.Q4_K: 0.92, Q.Q4_0: 1.08}),
    Backend.VULKAN: BackendSpeed(backend=Backend.VULKAN, decode=0.833, decode_fixed_s=0.00297, prefill=0.216, devices=5,
        hbm_decode=HBM_DECODE, type_speed={Q.Q4_0: 1.26, Q.Q6_K: 0.74}),
}
APPLE_CORE_FLOPS: dict[str, int] = {'M1': 223825501340, 'M2': 252991821131, 'M3': 285254334768, 'M4': 343937091169, 'M5': 384446103040}
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


def fit_decode(rows: Sequence[DecodeRow]) -> tuple[float, float]:
    """Rule 3: (share of the bandwidth, fixed seconds) for one backend's rows."""
    line = _line([(r.x, r.t) for r in rows if not r.hbm], 0.0)
    assert line is not None
    return line


def fit_hbm(rows: Sequence[DecodeRow], speeds: Mapping[Backend, BackendSpeed], rows_backend: Mapping[int, Backend]) -> float | None:
    """Rule 1: the share stacked memory reaches, its backend's fixed time taken out (the median over HBM rows)."""
    shares = [r.x / (r.t - speeds[rows_backend[id(r)]].decode_fixed_s) for r in rows
              if r.hbm and rows_backend[id(r)] in speeds and r.t > speeds[rows_backend[id(r)]].decode_fixed_s]
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


def _backend_fit(backend: Backend, decode: Sequence[DecodeRow], prefill: Sequence[PrefillRow]) -> BackendSpeed:
    plain = [r for r in decode if not r.hbm]
    e, t0 = fit_decode(plain) if plain else (POOLED.decode, POOLED.decode_fixed_s)
    types = fit_type_speeds(prefill)
    share = 1.0 if backend is Backend.METAL else (fit_prefill(prefill, types) if prefill else POOLED.prefill)
    devices = len({r.device for r in decode} | {r.device for r in prefill})
    return BackendSpeed(backend=backend, decode=round(e, 3), decode_fixed_s=round(t0, 5), prefill=round(share, 3),
                        type_speed=types, devices=devices)


def fit_backends(decode: Mapping[Backend, Sequence[DecodeRow]], prefill: Mapping[Backend, Sequence[PrefillRow]]) -> Fitted:
    """Rule 3 over every backend's rows: a backend with MIN_DEVICES devices or more gets its own figures."""
    all_decode = [r for rows in decode.values() for r in rows]
    all_prefill = [r for b, rows in prefill.items() if b is not Backend.METAL for r in rows]
    pooled = _backend_fit(Backend.VULKAN, all_decode, all_prefill)
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
    """Rule 4: what a full load's GPU tier runs at: its backend's figures, its FP16 rate (None: unknown), HBM or not."""

    speed: BackendSpeed
    compute: ComputeRate | None
    hbm: bool = False
    name: str = ""


def gpu_figures(bandwidths: Bandwidths, machine: HardwareSnapshot | None) -> GpuFigures:
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
    return GpuFigures(speed=backend_speed(backend), compute=compute, hbm=preset.hbm if preset is not None else False,
                      name=gpu.name if gpu is not None else "")


SHIPPED = Fitted(speeds=BACKEND_SPEED, pooled=POOLED, apple=APPLE_CORE_FLOPS)
"""The shipped constants as one `Fitted` (what tests/test_speed_published.py compares a fresh fit with)."""
