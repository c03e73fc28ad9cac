"""Read a llama-server command line back the way llama.cpp's argument parser does, for the flags a fit emits."""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass

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
    a = p.parse_args(argv[1:])  # unknown flags raise: the command must hold only these
    split = tuple(float(x) for x in a.tensor_split.replace("/", ",").split(",")) if a.tensor_split else None
    return Parsed(a.model, a.ctx_size, a.gpu_layers, split, a.n_cpu_moe, a.cache_type_k, a.cache_type_v, a.flash_attn)


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
