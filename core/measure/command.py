"""How to run each kind of llama.cpp for a measurement: the command line, from the full-load settings.

Rule 1: a measurement runs the model as the full-load estimate places it: `ctx` (-c), GPU
        layers (-ngl, left to the engine when None) and the KV cache type for K and V
        (-ctk/-ctv); a quantized cache also asks for flash attention (`-fa on`), which
        llama.cpp needs for a quantized V cache.
Rule 2: it decodes N_PREDICT tokens of a fixed prompt with `-v` (without it llama.cpp logs
        only errors, and the buffer lines are what the evidence is read from), ignoring the
        end-of-text token so that every run decodes the same number of tokens.
Rule 3: one table per engine kind adds what that tool needs to run once and exit:
        llama-completion `-no-cnv`, llama-cli `-st` (stdin is closed), llama-server a loopback
        port (the runner asks it once and stops it), llama-cpp-python a short script.
Rule 4: llama.cpp's own engine options the person asked for (`-fa`, `-ub`, `--swa-full`, `-lm`, …)
        and a V cache type apart from K's are passed to the binary as given, after the tool's own
        tail, so the run measures what was asked; llama-cpp-python takes none of them (one line).
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.model.context import DEFAULT_CTX
from gguf_budget.core.errors import RequestError
from gguf_budget.core.fit.types import FitEstimate
from gguf_budget.core.measure.engine import Engine, EngineKind
from gguf_budget.core.model.kv import DEFAULT_KV_TYPE, KV_TYPES, KVType

N_PREDICT = 8
PROMPT = "The capital of France is"
LOOPBACK = "127.0.0.1"

_TAIL: dict[EngineKind, tuple[str, ...]] = {
    EngineKind.COMPLETION: ("-p", PROMPT, "-n", str(N_PREDICT), "--ignore-eos", "-no-cnv"),
    EngineKind.CLI: ("-p", PROMPT, "-n", str(N_PREDICT), "--ignore-eos", "-st"),
    EngineKind.SERVER: ("--host", LOOPBACK, "-np", "1"),
}

# llama-cpp-python: argv is model, ctx, gpu layers (-1 = all), ggml type of K and V.
PYTHON_SCRIPT = """\
import sys
from llama_cpp import Llama
model, ctx, ngl, kv = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
llm = Llama(model_path=model, n_ctx=ctx, n_gpu_layers=ngl, type_k=kv, type_v=kv, verbose=True)
llm(sys.argv[5], max_tokens=int(sys.argv[6]))
llm.close()
"""


@dataclass(frozen=True)
class MeasureSettings:
    """The full-load settings a measurement runs with."""

    ctx: int
    gpu_layers: int | None = None
    kv_type: KVType = DEFAULT_KV_TYPE
    v_type: KVType | None = None
    engine_argv: tuple[str, ...] = ()
    """llama.cpp's own engine options the person asked for (`EngineOptions.argv`), passed as given (Rule 4)."""

    def __post_init__(self) -> None:
        if self.ctx < 1:
            raise RequestError("context must be at least 1 token")
        if self.gpu_layers is not None and self.gpu_layers < 0:
            raise RequestError("GPU layers cannot be negative")
        if self.kv_type not in KV_TYPES:
            raise RequestError(f"KV cache type must be one of {', '.join(KV_TYPES)}")
        object.__setattr__(self, "kv_type", KVType(self.kv_type))

    def describe(self) -> str:
        gpu = "engine's default" if self.gpu_layers is None else str(self.gpu_layers)
        v = f", V {self.v_type}" if self.v_type is not None and self.v_type != self.kv_type else ""
        extra = f", {' '.join(self.engine_argv)}" if self.engine_argv else ""
        return f"ctx {self.ctx:,}, GPU layers {gpu}, KV {self.kv_type}{v}{extra}"


def measure_command(engine: Engine, model_path: str, settings: MeasureSettings, port: int | None = None) -> tuple[str, ...]:
    """The argv that runs `model_path` once under Rule 1–3 (`port` only for llama-server)."""
    if engine.kind is EngineKind.PYTHON:
        if settings.engine_argv or settings.v_type not in (None, settings.kv_type):
            raise RequestError("llama-cpp-python takes its settings as Python arguments: measure passes llama.cpp's "
                               "engine options and a separate V cache type to llama-cli, llama-completion and "
                               "llama-server only")
        ngl = -1 if settings.gpu_layers is None else settings.gpu_layers
        kv = int(KV_TYPES[settings.kv_type])
        return (engine.executable, "-c", PYTHON_SCRIPT, model_path, str(settings.ctx), str(ngl), str(kv),
                PROMPT, str(N_PREDICT))
    argv = [engine.executable, "-m", model_path, "-c", str(settings.ctx)]
    if settings.gpu_layers is not None:
        argv += ["-ngl", str(settings.gpu_layers)]
    v = KVType(settings.v_type if settings.v_type is not None else settings.kv_type)
    argv += ["-ctk", str(settings.kv_type), "-ctv", str(v)]
    if v.quantized and "-fa" not in settings.engine_argv:
        argv += ["-fa", "on"]
    argv += [*_TAIL[engine.kind], *settings.engine_argv, "-v"]
    if engine.kind is EngineKind.SERVER:
        if port is None:
            raise RequestError("llama-server needs a port")
        argv += ["--port", str(port)]
    return tuple(argv)


def completion_request() -> dict[str, object]:
    """The one request llama-server is asked (POST /completion)."""
    return {"prompt": PROMPT, "n_predict": N_PREDICT, "ignore_eos": True}


def default_measure_ctx(context_length: int | None) -> int:
    """The ctx `measure` runs at unless told: the trained context, at most `model.context.DEFAULT_CTX`
    (a 128k-context model at full context can need more RAM than the machine has)."""
    return min(context_length or DEFAULT_CTX, DEFAULT_CTX)


def settings_from_fit(fit: FitEstimate) -> MeasureSettings:
    """Rules 1 and 4: the settings of a full-load estimate (its ctx, GPU layers, cache types and engine options)."""
    r = fit.request
    return MeasureSettings(fit.kv.ctx or DEFAULT_CTX, fit.gpu_layers, r.kv_type, r.v_type, r.engine_argv)
