"""The command line that runs a fit's placement: llama-server's flags, and what Ollama can say of them.

Flags as `LLAMA_CPP_SOURCE` reads them (common/arg.cpp).

Rule 1: `llama-server -m FILE -c CTX -ngl G [-ts a,b,…] [--n-cpu-moe N] [-ctk T -ctv T [-fa on]]`,
        then the server's own flags (`server` Rule 6: slots, prompt cache, checkpoints, projector, draft).
        -c and -ngl are always given, so llama.cpp's own `--fit` leaves them alone; -ts only when
        the fit used a user split (llama.cpp's default split by free memory needs none);
        --n-cpu-moe only for the MoE offload; the cache types only when not f16, with flash
        attention turned on for a quantized cache (llama.cpp needs it for a quantized V cache).
        The load mode is left to llama.cpp (`-lm auto`: mmap); no fit here assumes `-lm none`, this
        llama.cpp's spelling of no mmap (it has no `--no-mmap`).
Rule 2: FILE is the model's first shard (llama.cpp finds the others from it); every argument
        is quoted for a POSIX shell (`shlex.join`), so paths with spaces or quotes survive.
Rule 3: Ollama's equivalents are a Modelfile (`FROM`, `PARAMETER num_ctx`, `PARAMETER num_gpu`
        — Ollama's layer count, passed to llama.cpp as -ngl) and the server's environment
        (`OLLAMA_FLASH_ATTENTION=1`, `OLLAMA_KV_CACHE_TYPE`) for a quantized cache. What Ollama
        cannot express (a tensor split, --n-cpu-moe) is said in a note, never dropped silently;
        beside an expert offload Ollama gets the plain layer split's num_gpu, its nearest.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import PurePath

from gguf_budget.core.model.kv import KVType

SERVER = "llama-server"
OLLAMA_CACHES = ("f16", "q8_0", "q4_0")


@dataclass(frozen=True)
class ServerFlags:
    """What llama-server runs beside the model, as flags (`server` Rule 6), and Ollama's side of it."""

    argv: tuple[str, ...] = ()
    ollama_env: tuple[tuple[str, str], ...] = ()
    ollama_notes: tuple[str, ...] = ()


NO_SERVER_FLAGS = ServerFlags()


@dataclass(frozen=True)
class RunCommand:
    """One runnable placement: llama-server's arguments and Ollama's equivalents."""

    realises: str
    argv: tuple[str, ...]
    ollama_modelfile: str
    ollama_env: tuple[tuple[str, str], ...]
    ollama_notes: tuple[str, ...]
    priced_type: str | None = None
    """The quantization the model is priced as (`ModelSpec.priced_type`): argv names the file it was priced from,
    which is not the file to run (`views.remote_command` Rule 4)."""

    @property
    def shell(self) -> str:
        return shlex.join(self.argv)

    @property
    def ollama_create(self) -> str:
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.ollama_env)
        serve = f"{env} ollama serve  # the server's settings" if env else ""
        return "\n".join(x for x in (serve, f"ollama create {self.ollama_name} -f Modelfile") if x)

    @property
    def ollama_name(self) -> str:
        stem = PurePath(self.argv[2]).name.removesuffix(".gguf")
        return re.sub(r"[^a-z0-9._-]+", "-", stem.lower()).strip("-.") or "model"


def _modelfile_value(text: str) -> str:
    """A Modelfile value: bare when plain, else double-quoted with \\ and \" escaped (Ollama's parser)."""
    if not re.search(r'[\s"\\]', text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _split_text(shares: tuple[float, ...]) -> str:
    return ",".join(f"{x:g}" for x in shares)


def run_command(realises: str, model_path: str, ctx: int | None, gpu_layers: int, kv_type: KVType,
                tensor_split: tuple[float, ...] | None = None, n_cpu_moe: int | None = None,
                ollama_gpu_layers: int | None = None, server: ServerFlags = NO_SERVER_FLAGS,
                v_type: KVType | None = None, engine_argv: tuple[str, ...] = (),
                priced_type: str | None = None) -> RunCommand:
    """The command for one placement (Rules 1–3); `ollama_gpu_layers` is Ollama's nearest layer count
    where it cannot express the placement (the plain split beside an expert offload). `engine_argv` is what the
    person set of llama.cpp's engine (`EngineOptions.argv`), repeated as given."""
    ollama_gpu = gpu_layers if ollama_gpu_layers is None else ollama_gpu_layers
    v = KVType(v_type if v_type is not None else kv_type)
    argv = [SERVER, "-m", model_path]
    argv += ["-c", str(ctx)] if ctx else []
    argv += ["-ngl", str(gpu_layers)]
    argv += ["-ts", _split_text(tensor_split)] if tensor_split else []
    argv += ["--n-cpu-moe", str(n_cpu_moe)] if n_cpu_moe else []
    argv += ["-ctk", kv_type] if kv_type != "f16" else []
    argv += ["-ctv", v] if v != "f16" else []
    argv += ["-fa", "on"] if v.quantized and "-fa" not in engine_argv else []
    argv += engine_argv
    argv += server.argv
    lines = [f"FROM {_modelfile_value(model_path)}", *([f"PARAMETER num_ctx {ctx}"] if ctx else []),
             f"PARAMETER num_gpu {ollama_gpu}"]
    quantized = KVType(kv_type).quantized or v.quantized
    env = ((("OLLAMA_FLASH_ATTENTION", "1"), ("OLLAMA_KV_CACHE_TYPE", kv_type)) if quantized else ()) + server.ollama_env
    notes = list(server.ollama_notes)
    if tensor_split:
        notes.append(f"Ollama has no tensor split: it divides layers across GPUs itself (-ts {_split_text(tensor_split)})")
    if n_cpu_moe:
        notes.append(f"Ollama cannot keep experts on the CPU (--n-cpu-moe {n_cpu_moe}): its nearest is the plain "
                     f"layer split, num_gpu {ollama_gpu}")
    if kv_type not in OLLAMA_CACHES:
        notes.append(f"Ollama's cache types are f16, q8_0 and q4_0: {kv_type} has no equivalent")
    if v != kv_type:
        notes.append(f"Ollama has one cache type for K and V: -ctk {kv_type} -ctv {v} has no equivalent")
    if engine_argv:
        notes.append(f"Ollama chooses these itself: {shlex.join(engine_argv)}")
    return RunCommand(realises, tuple(argv), "\n".join(lines) + "\n", env, tuple(notes), priced_type)
