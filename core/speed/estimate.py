"""Decode and prefill speed: bytes per token over the tiers' bandwidths, prompt FLOPs over the compute rate.

Estimates, calibrated against real llama.cpp runs (`calibration.py`), never measurements.

Rule 1: decode: seconds per token ≈ the host's part + the GPU's part; tokens/s = 1 / that. The
        host's: its bytes (RAM and stream tiers) / their bandwidths / the machine's
        `Calibration.decode` + its fixed time (`decode_overhead_s`: building the graph, waking
        threads, sampling) × the host's share of the token's bytes — the machine's own runs,
        measured on the CPU. The GPU's: its backend's line (`backend_speed` Rule 1: VRAM bytes /
        (bandwidth × that backend's share) + its fixed time × the GPU's share of the bytes),
        fitted on published llama.cpp runs; the CPU's efficiency is never applied to VRAM. A
        hybrid load (layers or MoE experts on the CPU) adds both, so moving layers to the CPU
        slows it by their bytes at the CPU's rate. Not a bound: a run may beat it or fall short,
        and texts say so.
Rule 2: a conversation reads the KV of the tokens so far: the estimate is given at the start
        (an empty cache) and at a full context (`ctx` tokens cached). More budget never slows the
        start: the start reads no KV, so a bigger ctx costs it nothing.
Rule 3: the stream tier reads from the page cache when the machine's available RAM holds the
        plan's peak and, beside it, everything that streams (the unpinned layers whole and a
        streamed head, `streamed_file_bytes`), else from disk. A layer pinned takes its bytes
        out of the stream as it adds them to the peak, so more pinned layers never push the
        stream to disk. No machine known: disk.
Rule 4: prefill: seconds ≈ max(prompt work (`TokenPrices.prompt_work`: FLOPs weighed by each
        weight type's kernel speed) / (compute rate × `Calibration.prefill`) + the
        prompt tokens × `Calibration.prefill_overhead_s`, the weights read once per ubatch of
        ENGINE_UBATCH tokens at the memory-bound decode rate); tokens/s =
        prompt tokens / seconds; the time to the first token is that prefill time. With layers
        on a GPU the GPU's share of the bytes is priced at its FP16 rate (`backend_speed` Rule 2:
        FLOPs / (rate × the backend's share × its speed on the model's main weight type)) and
        the host's share as above (conservative: llama.cpp may run a large batch's CPU-held
        matrices on the GPU, copying them over); a GPU without a known rate (no preset, nothing
        typed) gives no prefill estimate, and says so.
Rule 5: an impossible plan has no speed; a forced plan runs its minimum configuration; an
        unlimited plan reads everything from RAM. A full load has a speed only when the fit
        admits it (fits on GPU, split or CPU only) and its KV is known.
Rule 6: a budget plan's speed needs neither the full load's records nor the published GPU lines: those
        (`fit.types` for the annotations only, `backend_speed` where a GPU reads weights), so `plan`
        starts without either and `fit` on a machine without a GPU without the GPU lines
        (`tests/test_cli_imports.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from gguf_budget.core.machine.bandwidth import (
    Bandwidth, Bandwidths, Calibration, ComputeRate, for_machine, page_cache_bandwidth,
)
from gguf_budget.core.model.kv import ENGINE_UBATCH, kv_price
from gguf_budget.core.plan.types import MemoryPlan
from gguf_budget.core.speed.token_bytes import MoeFraction, TokenBytes, TokenPrices, experts_on_cpu, fit_token_bytes
from gguf_budget.core.vocab import TextEnum

if TYPE_CHECKING:
    from gguf_budget.core.gguf.constants import GGMLQuantizationType as Q
    from gguf_budget.core.fit.types import FitEstimate
    from gguf_budget.core.machine.snapshot import HardwareSnapshot
    from gguf_budget.core.speed.backend_speed import GpuFigures

DEFAULT_PROMPT_TOKENS = 1000
NO_GPU_PREFILL = "no prefill estimate: layers run on a GPU whose compute rate is not known (--gpu-tflops gives it)"


class StreamSource(TextEnum):
    NONE = "none"  # nothing streams
    PAGE_CACHE = "page_cache"
    DISK = "disk"


STREAM_WORDS = {StreamSource.NONE: "RAM only", StreamSource.PAGE_CACHE: "from the page cache",
                StreamSource.DISK: "from disk"}


@dataclass(frozen=True, kw_only=True)
class PrefillEstimate:
    """Rule 4 for a prompt of `prompt_tokens`."""

    prompt_tokens: int
    flops: int
    compute: ComputeRate
    compute_seconds: float
    read_seconds: float

    @property
    def seconds(self) -> float:
        return max(self.compute_seconds, self.read_seconds)

    @property
    def tok_s(self) -> float:
        return self.prompt_tokens / self.seconds if self.seconds > 0 else float("inf")

    @property
    def ttft_s(self) -> float:
        """Time to the first token: the prompt's prefill (its last step's logits give the first token)."""
        return self.seconds


@dataclass(frozen=True, kw_only=True)
class SpeedEstimate:
    """Bytes per token per tier at the start and at a full context, the figures used, and the speeds they give."""

    start: TokenBytes
    full: TokenBytes
    ctx: int
    ram: Bandwidth
    stream: Bandwidth | None
    stream_from: StreamSource
    vram: Bandwidth | None
    moe: MoeFraction | None
    calibration: Calibration
    prefill: PrefillEstimate | None
    gpu: GpuFigures | None = None

    @property
    def bytes(self) -> TokenBytes:
        """What a token reads at the start of a conversation (the headline figure)."""
        return self.start

    def memory_seconds(self, read: TokenBytes) -> float:
        """Σ bytes / bandwidth over the host's tiers: the time the host's reads alone take."""
        tiers = ((read.ram, self.ram), (read.stream, self.stream))
        return sum(n / bw.bytes_per_s for n, bw in tiers if n and bw is not None)

    def host_seconds(self, read: TokenBytes) -> float:
        """Rule 1: the host's part of a token."""
        share = (read.ram + read.stream) / read.total if read.total else 1.0
        return self.memory_seconds(read) / self.calibration.decode + self.calibration.decode_overhead_s * share

    def gpu_seconds(self, read: TokenBytes) -> float:
        """Rule 1: the GPU's part of a token (0 without VRAM reads)."""
        if not read.vram or self.vram is None or self.gpu is None:
            return 0.0
        return self.gpu.decode_seconds(read.vram, self.vram.bytes_per_s, read.vram / read.total)

    def seconds_at(self, read: TokenBytes) -> float:
        """Rule 1: seconds per token."""
        return self.host_seconds(read) + self.gpu_seconds(read)

    def tok_s_at(self, read: TokenBytes) -> float:
        """Rule 1."""
        seconds = self.seconds_at(read)
        return 1 / seconds if seconds > 0 else float("inf")

    @property
    def tok_s(self) -> float:
        """Decode tokens/s at the start of a conversation."""
        return self.tok_s_at(self.start)

    @property
    def seconds_per_token(self) -> float:
        """Decode seconds per token at the start of a conversation."""
        return 1 / self.tok_s

    @property
    def tok_s_full(self) -> float:
        """Decode tokens/s with a full context cached."""
        return self.tok_s_at(self.full)


def stream_source(streamed: int, host_available: int | None, peak: int) -> StreamSource:
    """Rule 3."""
    if streamed == 0:
        return StreamSource.NONE
    if host_available is not None and host_available - peak >= streamed:
        return StreamSource.PAGE_CACHE
    return StreamSource.DISK


def _prefill(prices: TokenPrices, prompt_tokens: int, bandwidths: Bandwidths, weights_seconds: float,
             gpu: GpuFigures | None = None, gpu_share: float = 0.0) -> PrefillEstimate | None:
    """Rule 4; `weights_seconds` is one read of the weights at the decode rate, `gpu_share` the GPU's share of the
    token's bytes (its layers); None when that share runs on a GPU of unknown rate."""
    flops = prices.prompt_flops(prompt_tokens)
    host_share = 1.0 - gpu_share
    work = prices.prompt_work(prompt_tokens) * host_share
    rate = bandwidths.compute.flops_per_s * bandwidths.calibration.prefill
    ubatches = -(-prompt_tokens // ENGINE_UBATCH)
    fixed = prompt_tokens * bandwidths.calibration.prefill_overhead_s * host_share
    seconds = work / rate + fixed
    compute = bandwidths.compute
    if gpu_share > 0:
        if gpu is None or gpu.compute is None:
            return None
        speed = gpu.speed
        seconds += flops * gpu_share / (gpu.compute.flops_per_s * speed.prefill * speed.speed_of(prices.main_type))
        compute = gpu.compute
    return PrefillEstimate(prompt_tokens=prompt_tokens, flops=flops, compute=compute, compute_seconds=seconds,
                           read_seconds=ubatches * weights_seconds)


def budget_plan_speed(prices: TokenPrices, n_pinned: int, stream_head: bool, kv: tuple[int, int], ctx: int,
                      peak: int, bandwidths: Bandwidths, host_available: int | None,
                      prompt_tokens: int = DEFAULT_PROMPT_TOKENS) -> SpeedEstimate:
    """Rules 1–4 for one configuration of the budget plan; `kv` is the cache's bytes at the start and at ctx."""
    start, full = (prices.budget_plan(n_pinned, stream_head, k) for k in kv)
    cached = prices.streamed_file_bytes(n_pinned, stream_head) if start.stream else 0
    source = stream_source(cached, host_available, peak)
    stream = {StreamSource.NONE: None, StreamSource.PAGE_CACHE: page_cache_bandwidth(bandwidths.ram),
              StreamSource.DISK: bandwidths.disk}[source]
    speed = SpeedEstimate(start=start, full=full, ctx=ctx, ram=bandwidths.ram, stream=stream, stream_from=source,
                          vram=None, moe=prices.moe, calibration=bandwidths.calibration, prefill=None)
    weights = speed.memory_seconds(start) / bandwidths.calibration.decode
    return replace(speed, prefill=_prefill(prices, prompt_tokens, bandwidths, weights))


def plan_speed(prices: TokenPrices, plan: MemoryPlan, bandwidths: Bandwidths, host_available: int | None,
               prompt_tokens: int = DEFAULT_PROMPT_TOKENS) -> SpeedEstimate | None:
    """The budget plan's decode and prefill estimates (Rules 1–5); None when the plan is refused."""
    if plan.impossible:
        return None
    start_kv = 0 if prices.model is None else kv_price(prices.model, plan.kv_type).at(0)
    return budget_plan_speed(prices, plan.n_pinned, plan.stream_lm_head, (start_kv, plan.ledger.kv), plan.ctx,
                             plan.total, bandwidths, host_available, prompt_tokens)


def _gpu_figures(figures: Bandwidths, snapshot: HardwareSnapshot, weight_type: Q | None) -> GpuFigures:
    """Rule 6: the GPU's line (its own runs, else its backend's at the model's main weight type), imported only when
    a GPU reads weights."""
    from gguf_budget.core.speed.backend_speed import gpu_figures

    return gpu_figures(figures, snapshot, weight_type)


def fit_speed(prices: TokenPrices, fit: FitEstimate, bandwidths: Bandwidths,
              prompt_tokens: int = DEFAULT_PROMPT_TOKENS, start_tokens: int = 0) -> SpeedEstimate | None:
    """The full load's decode and prefill estimates (Rules 1, 2, 4, 5) on the fit's machine (`for_machine`);
    None when it does not fit or its KV is unknown. `start_tokens` moves the start from an empty cache to that
    many cached tokens (a real run's position, to compare with what it measured)."""
    if not fit.verdict.admitted or fit.kv.ctx is None:
        return None
    start, full = fit_token_bytes(prices, fit, min(start_tokens, fit.kv.ctx)), fit_token_bytes(prices, fit, fit.kv.ctx)
    if start is None or full is None:
        return None
    figures = for_machine(bandwidths, fit.snapshot)
    gpu = _gpu_figures(figures, fit.snapshot, prices.main_type) if full.vram else None
    speed = SpeedEstimate(start=start, full=full, ctx=fit.kv.ctx, ram=figures.ram, stream=None,
                          stream_from=StreamSource.NONE, vram=figures.vram if full.vram else None, moe=prices.moe,
                          calibration=figures.calibration, prefill=None, gpu=gpu)
    weights = speed.memory_seconds(start) / figures.calibration.decode
    if gpu is not None and speed.vram is not None and start.vram:
        weights += gpu.decode_seconds(start.vram, speed.vram.bytes_per_s, 0.0)
    share = start.vram / start.total if start.total else 0.0
    return replace(speed, prefill=_prefill(prices, prompt_tokens, figures, weights, gpu, share))


def experts_on_cpu_speed(prices: TokenPrices, fit: FitEstimate, n_cpu_moe: int, bandwidths: Bandwidths,
                         prompt_tokens: int = DEFAULT_PROMPT_TOKENS) -> SpeedEstimate | None:
    """Rules 1, 2, 4 for the fit's model with every slot on the GPUs and the routed experts of the first `n_cpu_moe`
    blocks in RAM (`token_bytes` Rule 9, `--n-cpu-moe`); None without a GPU, experts or a known KV."""
    if not fit.snapshot.gpus or prices.expert_prefix[-1] == 0 or fit.kv.ctx is None:
        return None
    kv = [prices.kv_split(fit.kv.kv_type, tokens, 0, fit.request.engine.swa_full) for tokens in (0, fit.kv.ctx)]
    if kv[0] is None or kv[1] is None:
        return None
    start, full = (experts_on_cpu(prices, n_cpu_moe, split[1]) for split in (kv[0], kv[1]))
    figures = for_machine(bandwidths, fit.snapshot)
    gpu = _gpu_figures(figures, fit.snapshot, prices.main_type)
    speed = SpeedEstimate(start=start, full=full, ctx=fit.kv.ctx, ram=figures.ram, stream=None,
                          stream_from=StreamSource.NONE, vram=figures.vram, moe=prices.moe,
                          calibration=figures.calibration, prefill=None, gpu=gpu)
    weights = speed.memory_seconds(start) / figures.calibration.decode
    weights += gpu.decode_seconds(start.vram, figures.vram.bytes_per_s, 0.0)
    share = start.vram / start.total if start.total else 0.0
    return replace(speed, prefill=_prefill(prices, prompt_tokens, figures, weights, gpu, share))
