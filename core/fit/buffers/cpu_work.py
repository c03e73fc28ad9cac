"""The CPU backend's work buffer: scratch a graph's nodes write into, the largest node's worth.

ggml-cpu keeps one buffer per backend and grows it to the largest `ggml_graph_plan` asks for
(ggml/src/ggml-cpu/ggml-cpu.c `ggml_graph_plan`, ggml-cpu.cpp `ggml_backend_cpu_graph_compute`:
`new uint8_t[cplan.work_size]`, never shrunk); a node writes from its start, so the resident part is
the largest node's need over the graphs the run computes. Rules of `core.llama_cpp.LLAMA_CPP_SOURCE`:

Rule 1: a matrix multiply converts its activations (`src1`, T rows of the weight's input width;
        an expert down-projection T × experts used) to the weight type's `vec_dot_type`
        (`type_traits_cpu`: Q8_0 for Q4_0/Q5_0/Q8_0/IQ4_NL/MXFP4, Q8_1 for Q4_1/Q5_1, F16 and BF16
        themselves, none for F32, Q8_K for the K- and I-quants; `_converted`); a repacked weight converts to
        its layout's `PARAM_TYPE`, the same sizes (ggml-cpu/repack.cpp `work_size`).
Rule 2: a K- or I-quant weight that is not repacked takes the tiled path from 8 rows up, with a
        512 KiB slot per thread ahead of the conversion (ggml-cpu/tiled `ggml_tiled_wdata_size`).
Rule 3: flash attention: per thread, a Q, KQ, mask, VKQ, V and K tile of 64 rows
        (`GGML_OP_FLASH_ATTN_EXT`: Dk·64 + 2·64·64 + 2·Dv·64 + Dk·64 floats).
        Without flash attention the two products convert to F16: Q (Dk·T·heads) and the soft-max
        of KQ (cells·T·heads) — the largest node of a long context (ggml's `soft_max` and `rope`
        rows, a few KiB per thread, are left out).
"""

from __future__ import annotations

from itertools import accumulate

from gguf_budget.core.model.per_model_cache import per_model
from gguf_budget.core.gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType as Q

from gguf_budget.core.model.spec import ModelSpec, ModelTensor

F32 = 4
FA_TILE = 64
TILED_SLOT = 512 * 1024
TILED_MIN_ROWS = 8
TILED_ALIGN = 64
VEC_DOT: dict[Q, Q] = {
    Q.F32: Q.F32, Q.F16: Q.F16, Q.BF16: Q.BF16,
    Q.Q4_0: Q.Q8_0, Q.Q5_0: Q.Q8_0, Q.Q8_0: Q.Q8_0, Q.IQ4_NL: Q.Q8_0, Q.MXFP4: Q.Q8_0,
    Q.Q4_1: Q.Q8_1, Q.Q5_1: Q.Q8_1,
}
TILED = frozenset({Q.Q2_K, Q.Q3_K, Q.Q4_K, Q.Q5_K, Q.Q6_K, Q.IQ4_XS, Q.IQ2_XXS, Q.IQ2_XS, Q.IQ2_S, Q.IQ3_XXS,
                   Q.IQ3_S, Q.IQ1_S, Q.IQ1_M})


def row_size(ggml_type: Q, n: int) -> int:
    """ggml_row_size: bytes of `n` elements of the type (whole blocks)."""
    block, size = GGML_QUANT_SIZES[ggml_type]
    return -(-n // block) * size


def _matmul(t: ModelTensor, rows: int, threads: int, repacked: bool, experts_used: int) -> int:
    """Rules 1–2 for one weight multiplying `rows` activations."""
    width = t.shape[0] * (experts_used if t.name.endswith("ffn_down_exps.weight") else 1)
    conversion = _converted(t.ggml_type, width * rows)
    tiled = not repacked and t.ggml_type in TILED and rows >= TILED_MIN_ROWS
    return conversion + (TILED_ALIGN + threads * TILED_SLOT if tiled else 0)


def _converted(ggml_type: Q, n: int) -> int:
    target = VEC_DOT.get(ggml_type, Q.Q8_K)
    return 0 if target is Q.F32 else row_size(target, n)


def attention_work(model: ModelSpec, rows: int, cells: int, flash_attn: bool, threads: int, kv_type: Q) -> int:
    """Rule 3 for the widest attention layer, the cache in `kv_type`."""
    heads = max((layer.n_head or 0 for layer in model.layers), default=0)
    dk = model.head_dim_k or 0
    dv = model.head_dim_v or 0
    if flash_attn:
        return F32 * threads * (FA_TILE * dk + 2 * FA_TILE * FA_TILE + 2 * FA_TILE * dv + FA_TILE * dk)
    return max(_converted(kv_type, dk * rows * heads), _converted(kv_type, cells * rows * heads))


def work_bytes(model: ModelSpec, host_layers: int, rows: int, outputs: int, cells: int, flash_attn: bool,
               threads: int, repacked: frozenset[str], kv_type: Q) -> int:
    """Rules 1–3: the work buffer the CPU backend writes for a ubatch of `rows` tokens at `cells` cells,
    `outputs` of them kept for the output layer; 0 when no block runs on the CPU."""
    if host_layers <= 0:
        return 0
    return max(attention_work(model, rows, cells, flash_attn, threads, kv_type),
               matmul_work(model, host_layers, rows, outputs, threads, repacked))


def matmul_work(model: ModelSpec, host_layers: int, rows: int, outputs: int, threads: int,
                repacked: frozenset[str]) -> int:
    """Rules 1–2: the largest matrix multiply's need over the weights the CPU runs (the first `host_layers`
    blocks and the output layer)."""
    below, output = _layer_needs(model, rows, outputs, threads, repacked)
    return max(below[min(max(host_layers, 0), len(below) - 1)], output)


@per_model(maxsize=64)
def _layer_needs(model: ModelSpec, rows: int, outputs: int, threads: int,
                 repacked: frozenset[str]) -> tuple[tuple[int, ...], int]:
    """(the largest need of the blocks below each layer count, the output layer's need). One walk of every tensor
    serves every split of the layers: a ctx tick that moves the GPU layers only looks a number up."""
    used = model.expert_used_count or 1
    blocks: dict[int, int] = {}
    output = 0
    for t in model.tensors:
        if len(t.shape) < 2 or t.name.startswith(("token_embd.", "position_embd.", "per_layer_token_embd.")):
            continue
        if t.layer is None:
            output = max(output, _matmul(t, outputs, threads, t.name in repacked, used))
        else:
            blocks[t.layer] = max(blocks.get(t.layer, 0), _matmul(t, rows, threads, t.name in repacked, used))
    per_layer = [0] + [blocks.get(il, 0) for il in range(max(blocks, default=-1) + 1)]
    below = list(accumulate(per_layer, max))
    return tuple(below), output
