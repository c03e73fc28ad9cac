"""Which weights llama.cpp's CPU backend copies into its CPU_REPACK buffer, and how many bytes that takes.

ggml/src/ggml-cpu/repack.cpp `ggml_repack_get_optimal_repack_type` of `core.llama_cpp.LLAMA_CPP_SOURCE`:

Rule 1: a weight is repacked when its type has a layout for the CPU's features and its row
        count (ne[1]) is a multiple of the layout's rows — first match of `REPACK_RULES`. On x86:
        Q4_0, Q4_K, IQ4_NL, MXFP4 with AVX2 (8 rows), Q2_K with AVX-512 (8 rows); on Arm with
        NEON: Q4_0, Q4_K, Q5_K, Q6_K, Q8_0, IQ4_NL, MXFP4 with i8mm or dot-product.
Rule 2: only weights a matrix multiply reads (2-D, or 3-D experts) that stay in host RAM are
        candidates; the token and position embeddings are read by row lookups and never are.
        The blocks kept on the host and, unless offloaded, the output layer (`output.weight`) —
        or, where `-ot`/`--n-cpu-moe` keep weights of offloaded blocks in host RAM, exactly the
        weights the placement holds there (`host_names`: experts of GPU blocks are repacked too).
Rule 3: the repacked copy is as large as the tensor (32-byte aligned); with mmap it is held in
        addition to the mapped file, whose pages the load has already read (both count in RSS).
        Without mmap (`-lm none`, llama-cpp-python's `use_mmap=False`) a repacked tensor is
        loaded straight into CPU_REPACK and has no other copy: the CPU buffer holds the rest
        (src/llama-model.cpp `load_tensors` picks one buffer type per tensor; only a mapped file
        keeps the original as well).
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.gguf.constants import GGMLQuantizationType as Q

from gguf_budget.core.model.spec import ModelSpec, ModelTensor

ALIGNMENT = 32
NOT_MATMUL = ("token_embd.", "position_embd.", "per_layer_token_embd.")

# type → (features all required, rows multiple), first match wins (Rule 1)
REPACK_RULES: dict[Q, tuple[tuple[frozenset[str], int], ...]] = {
    Q.Q4_0: ((frozenset({"AVX2"}), 8), (frozenset({"NEON", "MATMUL_INT8"}), 4), (frozenset({"NEON", "DOTPROD"}), 4)),
    Q.Q4_K: ((frozenset({"AVX2"}), 8), (frozenset({"NEON", "MATMUL_INT8"}), 8), (frozenset({"NEON", "DOTPROD"}), 8)),
    Q.Q2_K: ((frozenset({"AVX512"}), 8),),
    Q.Q5_K: ((frozenset({"NEON", "MATMUL_INT8"}), 8), (frozenset({"NEON", "DOTPROD"}), 8)),
    Q.Q6_K: ((frozenset({"NEON", "MATMUL_INT8"}), 8), (frozenset({"NEON", "DOTPROD"}), 8)),
    Q.IQ4_NL: ((frozenset({"AVX2"}), 8), (frozenset({"NEON", "DOTPROD"}), 4)),
    Q.MXFP4: ((frozenset({"AVX2"}), 8), (frozenset({"NEON", "DOTPROD"}), 4)),
    Q.Q8_0: ((frozenset({"NEON", "MATMUL_INT8"}), 4), (frozenset({"NEON", "DOTPROD"}), 4)),
}


@dataclass(frozen=True)
class Repack:
    """The CPU_REPACK buffer: which tensors, how many bytes; `source_bytes`: the same tensors in the file."""

    tensors: tuple[str, ...]
    nbytes: int
    source_bytes: int = 0


def repacked(t: ModelTensor, features: frozenset[str]) -> bool:
    """Rules 1–2 for one tensor."""
    if len(t.shape) not in (2, 3) or t.name.startswith(NOT_MATMUL):
        return False
    return any(need <= features and t.shape[1] % rows == 0 for need, rows in REPACK_RULES.get(t.ggml_type, ()))


def repack_buffer(model: ModelSpec, features: frozenset[str], host_blocks: int, output_on_host: bool,
                  host_names: frozenset[str] | None = None) -> Repack:
    """The repacked copies of the host's weights (Rules 1–3); `host_names`, where given, are the weights in host RAM."""
    chosen = [t for t in model.tensors
              if (t.name in host_names if host_names is not None else
                  t.layer is not None and t.layer < host_blocks or t.layer is None and output_on_host)
              and repacked(t, features)]
    return Repack(tuple(t.name for t in chosen), sum(-(-t.nbytes // ALIGNMENT) * ALIGNMENT for t in chosen),
                  sum(t.nbytes for t in chosen))
