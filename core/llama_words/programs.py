"""The command an answer prints, for the program chosen: llama-server's words as llama-cli, llama-completion or a
llama-cpp-python `Llama(...)` call take them.

Rule 1: the llama-server command is the source (`fit.command.run_command`); for llama-cli and llama-completion
        each option is kept only where that program takes it (the option table, `options.Program`), and every
        option dropped is named — never silently.
Rule 2: llama-cpp-python gets a `Llama(...)` call with the same settings under its keyword names (llama-cpp-python
        0.3.36 `Llama.__init__`): `n_ctx`, `n_gpu_layers`, `flash_attn`, `n_batch`, `n_ubatch`, `type_k`/`type_v`
        (ggml type numbers), `use_mmap`, `use_mlock`, `n_threads`, `n_threads_batch`, `offload_kqv`,
        `op_offload`, `swa_full`, `split_mode`, `main_gpu`, `tensor_split`. Its own defaults differ from
        llama.cpp's programs (a 512-token context, no GPU layers, flash attention off), so every setting the
        answer rests on is written out. What it has no keyword for (the server's slots and caches, `-ot`) is named.
Rule 3: a model llama-server fetches (`-hf owner/repo[:QUANT]`, `-hfr`/`-hff`) is `Llama.from_pretrained(repo_id,
        filename)` (the file, or the glob `*QUANT*.gguf`, as llama-cpp-python matches it); one by URL (`-mu`),
        which llama-cpp-python cannot fetch, keeps the file's name and says to download it first.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Sequence

from gguf_budget.core.fit.runtime_types import Runtime
from gguf_budget.core.llama_words.options import SPELLINGS, Program
from gguf_budget.core.llama_words.reader import LlamaSettings, read_llama_args
from gguf_budget.core.model.kv import KV_TYPES

_SPLIT_MODES = {"none": 0, "layer": 1, "row": 2, "tensor": 3}


@dataclass(frozen=True)
class ProgramCommand:
    """What to run for one program, and what of llama-server's command it cannot say."""

    runtime: Runtime
    text: str
    dropped: tuple[str, ...]


def for_program(argv: Sequence[str], runtime: Runtime) -> ProgramCommand:
    """Rules 1–2 for the llama-server command `argv`."""
    if runtime is Runtime.LLAMA_SERVER:
        return ProgramCommand(runtime, shlex.join(argv), ())
    if runtime is Runtime.LLAMA_CPP_PYTHON:
        return _python(argv)
    program = Program(runtime.value)
    kept: list[str] = [program.value]
    dropped: list[str] = []
    words = list(argv[1:])
    i = 0
    while i < len(words):
        option, _ = SPELLINGS[words[i]]
        span = words[i:i + 1 + option.values]
        i += len(span)
        (kept if program in option.programs else dropped).extend(span)
    return ProgramCommand(runtime, shlex.join(kept), _pairs(dropped))


def _pairs(words: list[str]) -> tuple[str, ...]:
    out: list[str] = []
    for w in words:
        if w.startswith("-") or not out:
            out.append(w)
        else:
            out[-1] += f" {w}"
    return tuple(out)


def _python_model(s: LlamaSettings) -> tuple[str, list[tuple[str, str]], list[str]]:
    """Rule 3: the call that opens the model, its model keywords, and what it cannot fetch."""
    if s.hf_repo is not None:
        repo, _, quant = s.hf_repo.partition(":")
        filename = s.hf_file or (f"*{quant}*.gguf" if quant else "*.gguf")
        return "Llama.from_pretrained", [("repo_id", repr(repo)), ("filename", repr(filename))], []
    if s.model is None and s.model_url is not None:
        name = PurePosixPath(s.model_url.split("?")[0]).name
        return "Llama", [("model_path", repr(name))], [f"-mu {s.model_url} (download it first)"]
    return "Llama", [("model_path", repr(s.model))], []


def _python(argv: Sequence[str]) -> ProgramCommand:
    s = read_llama_args(argv).settings
    call, kwargs, fetch = _python_model(s)
    kwargs += [("n_ctx", str(s.ctx))] if s.ctx else []
    kwargs += [("n_gpu_layers", str(-1 if s.gpu_layers is not None and s.gpu_layers < -1 else s.gpu_layers or 0))]
    kwargs += [("flash_attn", str(bool(s.flash_attn)))]
    kwargs += [("n_batch", str(s.batch))] if s.batch else []
    kwargs += [("n_ubatch", str(s.ubatch))] if s.ubatch else []
    k, v = s.cache_type_k, s.cache_type_v  # unset: f16, llama.cpp's and llama-cpp-python's default alike
    kwargs += [("type_k", f"{int(KV_TYPES[k])},  # {k}")] if k is not None else []
    kwargs += [("type_v", f"{int(KV_TYPES[v])},  # {v}")] if v is not None else []
    if s.load_mode is not None:
        kwargs += [("use_mmap", str(s.load_mode.maps)), ("use_mlock", str(s.load_mode.locks))]
    kwargs += [("n_threads", str(s.threads))] if s.threads else []
    kwargs += [("n_threads_batch", str(s.threads_batch))] if s.threads_batch else []
    kwargs += [("offload_kqv", "False")] if s.kv_offload is False else []
    kwargs += [("op_offload", "False")] if s.op_offload is False else []
    kwargs += [("swa_full", str(s.swa_full))] if s.swa_full is not None else []
    kwargs += [("split_mode", str(_SPLIT_MODES[s.split_mode.value]))] if s.split_mode is not None else []
    kwargs += [("main_gpu", str(s.main_gpu))] if s.main_gpu else []
    kwargs += [("tensor_split", repr(list(s.tensor_split)))] if s.tensor_split else []
    body = "\n".join(f"    {name}={value}" + ("" if "#" in value else ",") for name, value in kwargs)
    text = f"from llama_cpp import Llama\n\nllm = {call}(\n{body}\n)"
    unsaid = [g.text for g in read_llama_args(argv).priced
              if g.option.detail in ("parallel", "kv_unified", "cache_ram", "ctx_checkpoints", "override_tensor",
                                     "n_cpu_moe", "mmproj", "draft_model", "device")]
    return ProgramCommand(Runtime.LLAMA_CPP_PYTHON, text, tuple(fetch + unsaid))
