"""Measured against estimated: a llama.cpp log beside the fit estimate made with the log's own settings.

Rule 1: the log's settings become the request: ctx = n_ctx, the cache type, ubatch, batch, outputs =
        min(n_outputs_max, ubatch) (ubatch when the build does not print it: older builds reserved
        every row), flash attention (`auto` turns on on CPU), swa_full, mmap from the load mode,
        GPU layers from `offloaded N/M`, CPU features and threads from `system_info`, and — for the
        peak RSS — the program that ran (`runtime_of`), its checkpoint limit, and the prompt and
        generated tokens it timed (`workload_of`): like is compared with like.
Rule 2: the machine is a hypothetical one with room for everything (the question is what
        llama.cpp holds, not whether it is admitted), with one GPU per GPU buffer the log names.
Rule 3: the model must be the log's: the same tensor count and, where printed, the same size
        to the printed precision — `file size = 92.10 MiB` within 0.005 MiB, `= 4.58 GiB` within
        0.005 GiB (llama.cpp switches to GiB at 1 GiB); else `EvidenceMismatch`, one line naming both.
Rule 4: rows: weights (model buffers but the repacked copies), repacked copies, KV (and
        recurrent state), compute, output, total buffers (as reserved: what the log prints), peak
        RSS (resident at the end of the log's own workload: `RuntimeMemory.short`), decode and
        prefill tokens/s. The log
        prints MiB with two decimals: a difference within that rounding is no error. A dry run
        measured no weights, copies or KV (its 0.00 MiB are no measurement): those rows have none,
        and the total sums the rows that were measured.
Rule 5: speed: llama.cpp's `eval time` tokens/s (decode) and `prompt eval time` tokens/s
        (prefill) — measurements; a dry run and a run that timed nothing have none — beside the
        full load's estimates for the same request on the given figures, at the run's own
        position: `fit_speed` (the call `fit` and the window make) with the log's prompt length,
        decoding with the KV of its mean position cached (prompt tokens + half the generated
        ones). Both are calibrated estimates, judged like every row by their error, and each
        also by its `share` (measured / estimated).
Rule 6: a request asked in a person's words (the run's own command, read by `llama_words`) is
        compared as asked: only the CPU's features and the run's tokens come from the log.
Rule 7: a llama-server log: its slots and KV sharing are the request's (`n_slots`, `kv_unified`),
        and what it printed holding beyond the model — the draft's buffers, the projector's
        weights and compute, the most its prompt cache and its slots' checkpoints held — is added
        to the estimated peak RSS in place of one prompt's checkpoints: the traffic that filled
        them is not in the log, what they held is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from gguf_budget.core.errors import EvidenceMismatch
from gguf_budget.core.evidence.log_records import (
    SIZE_UNITS, MiB, BufferKind, BufferLine, LlamaCppLog, LoadRecord,
)
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.server.checkpoints import CTX_CHECKPOINTS
from gguf_budget.core.fit.runtime_types import (
    DEFAULT_RUNTIME, DEFAULT_THREADS, SHORT_WORKLOAD, EngineSettings, Runtime, Workload,
)
from gguf_budget.core.fit.server.types import ServerSettings
from gguf_budget.core.fit.types import FitEstimate, FitRequest
from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.model.kv import KV_TYPES, KVType
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.speed.estimate import DEFAULT_PROMPT_TOKENS, SpeedEstimate, fit_speed
from gguf_budget.core.speed.token_bytes import TokenPrices

RUNTIMES = frozenset(r.value for r in Runtime)
ROOMY = 1 << 50
TOKENS_PER_S = "tokens/s"
ROUNDING = 0.005 * MiB  # half the last printed digit of "%8.2f MiB"
FLASH_ON = frozenset({"auto", "enabled", "on", "1", "true"})
HOST_BUFFERS = ("CPU", "CPU_Mapped", "CUDA_Host", "ROCm_Host", "Vulkan_Host", "SYCL_Host")


@dataclass(frozen=True)
class ComparisonRow:
    """One component: what llama.cpp reported or the OS measured, what we estimated (bytes or tokens/s)."""

    name: str
    measured: float | None
    estimated: float | None
    unit: str = "bytes"
    resolution: float = 0.0

    @property
    def error(self) -> float | None:
        """(estimated − measured) / measured, 0 within the log's rounding (`resolution`); None when
        either is missing, or when llama.cpp measured 0 and we did not."""
        if self.measured is None or self.estimated is None:
            return None
        if abs(self.estimated - self.measured) <= self.resolution:
            return 0.0
        return (self.estimated - self.measured) / self.measured if self.measured else None

    @property
    def share(self) -> float | None:
        """Rule 5: measured / estimated for a speed row (1.0: the run matched the estimate); None otherwise."""
        if self.unit != TOKENS_PER_S or self.measured is None or not self.estimated:
            return None
        return self.measured / self.estimated


@dataclass(frozen=True)
class Comparison:
    log: LlamaCppLog
    run: LoadRecord
    request: FitRequest
    estimate: FitEstimate
    rows: tuple[ComparisonRow, ...]
    speed: SpeedEstimate | None

    def row(self, name: str) -> ComparisonRow:
        return next(r for r in self.rows if r.name == name)


def request_from_log(log: LlamaCppLog, run: LoadRecord) -> FitRequest:
    """Rule 1."""
    s = run.settings
    ubatch = s.n_ubatch or 512
    kv = KVType(s.type_k) if s.type_k in KV_TYPES else KVType.F16
    v = KVType(s.type_v) if s.type_v in KV_TYPES else kv
    engine = EngineSettings(
        runtime=runtime_of(log), ubatch=ubatch, outputs=min(s.n_outputs_max or ubatch, ubatch), batch=s.n_batch,
        flash_attn=(s.flash_attn or "auto").lower() in FLASH_ON, swa_full=s.swa_full, mmap=run.mmap is not False,
        cpu_features=log.cpu_features or None, threads=log.n_threads or DEFAULT_THREADS, short=workload_of(log),
        ctx_checkpoints=log.checkpoints[0] if log.checkpoints else CTX_CHECKPOINTS,
    )
    srv = log.server
    server = ServerSettings(n_parallel=srv.slots or 1, kv_unified=srv.kv_unified, cache_ram_mib=0,
                            ctx_checkpoints=engine.ctx_checkpoints)
    return FitRequest(ctx=s.n_ctx, gpu_layers=run.offloaded[0] if run.offloaded else 0, kv_type=kv,
                      v_type=None if v == kv else v, engine=engine, server=server)


def server_extras_held(log: LlamaCppLog) -> int:
    """Rule 7: what a llama-server log printed holding beyond its model's own buffers."""
    srv, draft = log.server, log.draft
    printed = sum(b.nbytes for b in draft.buffers) if draft is not None else 0
    return printed + srv.projector + srv.cache_held + srv.checkpoints_held


def as_run(asked: FitRequest, log: LlamaCppLog) -> FitRequest:
    """Rule 6: what a command cannot say — the machine's CPU features, the tokens the run took — from the log."""
    engine = replace(asked.engine, cpu_features=log.cpu_features or None, short=workload_of(log))
    return replace(asked, engine=engine)


def runtime_of(log: LlamaCppLog) -> Runtime:
    """Rule 1: the program that made the log; llama-server (llama-cli's engine) when it cannot be told."""
    return Runtime(log.binary) if log.binary in RUNTIMES else DEFAULT_RUNTIME


def workload_of(log: LlamaCppLog) -> Workload:
    """Rule 1: the run's prompt and generated tokens as llama.cpp timed them (the short default without timings)."""
    if log.prompt_eval is None:
        return SHORT_WORKLOAD
    return Workload(prompt=log.prompt_eval.tokens, generated=log.eval.tokens if log.eval else 0)


def check_model(run: LoadRecord, model: ModelSpec) -> None:
    """Rule 3."""
    facts = run.model
    if facts.n_tensors is not None and facts.n_tensors != model.n_tensors:
        raise EvidenceMismatch(f"the log loaded {facts.n_tensors} tensors ({facts.path}), "
                               f"{model.path} has {model.n_tensors}: not the same model")
    size = facts.file_size
    if size is not None and not size.matches(model.tensor_bytes):
        ours = model.tensor_bytes / SIZE_UNITS[size.unit]
        raise EvidenceMismatch(f"the log's model holds {size.render()} of tensors ({facts.path}), "
                               f"{model.path} holds {ours:.2f} {size.unit}: not the same model")


def _gpu_buffers(run: LoadRecord) -> int:
    names = {b.device for b in run.buffers if b.device not in HOST_BUFFERS and not b.device.endswith("REPACK")
             and not b.device.endswith("AARCH64")}
    return len(names)


def _repack(name: str) -> bool:
    return name.endswith("_REPACK") or name.endswith("_AARCH64")


def compare(log: LlamaCppLog, model: ModelSpec, bandwidths: Bandwidths | None = None,
            asked: FitRequest | None = None) -> Comparison:
    """Rules 1–5 for the log's run on `model`; the decode bound at `bandwidths` (default: the assumed figures).
    `asked` is the request a person's own question makes of the run (its command read as llama.cpp reads it, Rule 6)
    instead of the one the log's printed settings make."""
    run = log.run
    if run is None:
        raise EvidenceMismatch("the log holds no model load")
    check_model(run, model)
    request = request_from_log(log, run) if asked is None else as_run(asked, log)
    gpus = _gpu_buffers(run)
    machine = hypothetical_machine(ROOMY, gpu_count=gpus, gpu_total=ROOMY if gpus else 0)
    e = estimate_fit(model, machine, request)
    m = e.memory
    allocated = not run.dry_run
    measured: dict[str, tuple[float | None, int]] = {
        "weights": _measure(run, lambda b: b.kind is BufferKind.MODEL and not _repack(b.device), allocated),
        "repacked": _measure(run, lambda b: b.kind is BufferKind.MODEL and _repack(b.device), allocated),
        "KV": _measure(run, lambda b: b.kind in (BufferKind.KV, BufferKind.RECURRENT), allocated),
        "compute": _measure(run, lambda b: b.kind is BufferKind.COMPUTE, True),
        "output": _measure(run, lambda b: b.kind is BufferKind.OUTPUT, True),
    }
    estimated: dict[str, float | None] = dict.fromkeys(measured)
    if m is not None:
        estimated = {
            "weights": sum(d.mapped_weights + d.loaded_weights for d in m.devices),
            "repacked": sum(d.repack for d in m.devices),
            "KV": _sum(d.kv for d in m.devices), "compute": _sum(d.compute for d in m.devices),
            "output": sum(d.output for d in m.devices),
        }
    rows = [ComparisonRow(k, v, estimated[k], resolution=lines * ROUNDING) for k, (v, lines) in measured.items()]
    taken = [k for k, (v, _) in measured.items() if v is not None]
    rows.append(ComparisonRow("total buffers", _sum(measured[k][0] for k in taken), _sum(estimated[k] for k in taken),
                              resolution=sum(measured[k][1] for k in taken) * ROUNDING))
    if log.peak_rss is not None:
        short = m.short if m else None
        rows.append(ComparisonRow("peak RSS", log.peak_rss, None if short is None else short.total + (
            server_extras_held(log) - short.checkpoints if log.server.checkpoints_held else server_extras_held(log))))
    speed = run_speed(log, model, e, bandwidths or Bandwidths())
    prefill = None if speed is None else speed.prefill
    rows.append(ComparisonRow("decode", log.eval.tokens_per_second if log.eval else None,
                              speed.tok_s if speed else None, TOKENS_PER_S))
    rows.append(ComparisonRow("prefill", log.prompt_eval.tokens_per_second if log.prompt_eval else None,
                              prefill.tok_s if prefill else None, TOKENS_PER_S))
    return Comparison(log, run, request, e, tuple(rows), speed)


def run_speed(log: LlamaCppLog, model: ModelSpec, fit: FitEstimate, bandwidths: Bandwidths) -> SpeedEstimate | None:
    """Rule 5: the full load's estimates at the run's prompt length and mean decode position."""
    prompt = log.prompt_eval.tokens if log.prompt_eval else 0
    generated = log.eval.tokens if log.eval else 0
    return fit_speed(TokenPrices.of(model), fit, bandwidths, prompt or DEFAULT_PROMPT_TOKENS, prompt + generated // 2)


def _measure(run: LoadRecord, keep: Callable[[BufferLine], bool], allocated: bool) -> tuple[float | None, int]:
    """The bytes of the buffers `keep` picks and how many lines they are; None when not allocated."""
    picked = [b for b in run.buffers if keep(b)]
    return (sum(b.nbytes for b in picked) if allocated else None), len(picked)


def _sum(values: Iterable[float | None]) -> float | None:
    items = list(values)
    return None if any(v is None for v in items) else sum(v for v in items if v is not None)
