"""Read a llama-server command line back the way llama.cpp's argument parser does, for the flags a fit emits.

Flag names and defaults as common/arg.cpp of the pinned llama.cpp has them (llama-server: `-np` -1 = auto,
`--cache-ram` 8192, `--ctx-checkpoints` 32, `-ngld` auto)."""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass

from gguf_budget.core.fit.server.types import ServerSettings
from gguf_budget.core.model.roles import TensorRole
from gguf_budget.core.model.spec import ModelSpec


@dataclass(frozen=True)
class Parsed:
    model: str
    ctx: int | None
    gpu_layers: int
    tensor_split: tuple[float, ...] | None
    n_cpu_moe: int
    cache_k: str
    cache_v: str
    flash_attn: str | None
    n_parallel: int = -1
    kv_unified: bool | None = None
    cache_ram: int = 8192
    ctx_checkpoints: int = 32
    mmproj: str | None = None
    mmproj_offload: bool = True
    draft: str | None = None
    spec_type: str | None = None
    draft_gpu_layers: str = "auto"
    draft_device: str | None = None
    draft_cache_k: str = "f16"
    draft_cache_v: str = "f16"


def parse_llama_server(shell: str) -> Parsed:
    argv = shlex.split(shell)
    assert argv[0] == "llama-server"
    p = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    p.add_argument("-m", "--model", required=True)
    p.add_argument("-c", "--ctx-size", type=int)
    p.add_argument("-ngl", "--gpu-layers", "--n-gpu-layers", type=int, required=True)
    p.add_argument("-ts", "--tensor-split")
    p.add_argument("-ncmoe", "--n-cpu-moe", type=int, default=0)
    p.add_argument("-ctk", "--cache-type-k", default="f16")
    p.add_argument("-ctv", "--cache-type-v", default="f16")
    p.add_argument("-fa", "--flash-attn")
    p.add_argument("-np", "--parallel", type=int, default=-1)
    unified = p.add_mutually_exclusive_group()
    unified.add_argument("-kvu", "--kv-unified", dest="kv_unified", action="store_true", default=None)
    unified.add_argument("-no-kvu", "--no-kv-unified", dest="kv_unified", action="store_false")
    p.add_argument("-cram", "--cache-ram", type=int, default=8192)
    p.add_argument("-ctxcp", "--ctx-checkpoints", "--swa-checkpoints", type=int, default=32)
    p.add_argument("-mm", "--mmproj")
    p.add_argument("--no-mmproj-offload", dest="mmproj_offload", action="store_false")
    p.add_argument("-md", "--model-draft", "--spec-draft-model")
    p.add_argument("--spec-type")
    p.add_argument("-ngld", "--gpu-layers-draft", "--n-gpu-layers-draft", "--spec-draft-ngl", default="auto")
    p.add_argument("-devd", "--device-draft", "--spec-draft-device")
    p.add_argument("-ctkd", "--cache-type-k-draft", "--spec-draft-type-k", default="f16")
    p.add_argument("-ctvd", "--cache-type-v-draft", "--spec-draft-type-v", default="f16")
    a = p.parse_args(argv[1:])  # unknown flags raise: the command must hold only these
    if a.parallel == 0:
        raise ValueError("-np 0 is refused by llama-server")
    split = tuple(float(x) for x in a.tensor_split.replace("/", ",").split(",")) if a.tensor_split else None
    return Parsed(a.model, a.ctx_size, a.gpu_layers, split, a.n_cpu_moe, a.cache_type_k, a.cache_type_v, a.flash_attn,
                  a.parallel, a.kv_unified, a.cache_ram, a.ctx_checkpoints, a.mmproj, a.mmproj_offload, a.model_draft,
                  a.spec_type, a.gpu_layers_draft, a.device_draft, a.cache_type_k_draft, a.cache_type_v_draft)


def gpu_weights_with_cpu_moe(model: ModelSpec, run: tuple[int, int], n_cpu_moe: int) -> int:
    """A GPU's weights for its slot run when blocks 0 … n − 1 keep their routed experts on the CPU (recomputed here)."""
    start, end = run
    total = 0
    for il in range(start, end):
        if il == model.n_layer:
            total += model.output_table_bytes + model.global_bytes.output_norm
        else:
            experts = model.layer_role_bytes[il].get(TensorRole.EXPERTS, 0)
            total += model.layer_bytes[il] - (experts if il < n_cpu_moe else 0)
    return total


def server_settings(back: Parsed, **files: object) -> ServerSettings:
    """The server settings a parsed command asks for (`files`: the projector and draft records its paths name)."""
    return ServerSettings(n_parallel=None if back.n_parallel < 0 else back.n_parallel, kv_unified=back.kv_unified,
                          cache_ram_mib=back.cache_ram, ctx_checkpoints=back.ctx_checkpoints,
                          projector_offload=back.mmproj_offload, **files)  # type: ignore[arg-type]
