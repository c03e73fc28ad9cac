"""Cache types llama.cpp refuses to make a context with: the load fails before any buffer is priced.

Pure; read off `core.llama_cpp.LLAMA_CPP_SOURCE` (src/llama-context.cpp `llama_init_from_model`, which returns no
context after logging the error quoted here).

Rule 1: a model whose cache keeps one latent row per token (MLA, `model_facts` Rule 6: K only, V a view of it) or a
        `deepseek4` model takes no V cache type apart from K's: "model does not support different K (q8_0) and V
        (f16) cache types" (`hparams.is_mla() || arch == LLM_ARCH_DEEPSEEK4` and `type_k != type_v`). So `-ctk q8_0`
        alone fails on such a model; `-ctk q8_0 -ctv q8_0` loads.
Rule 2: a block-quantized V cache with flash attention turned off (`-fa off`) fails: "quantized V cache requires
        flash_attn to be enabled" (with `-fa auto` llama.cpp turns it on instead, and that is priced).
"""

from __future__ import annotations

from gguf_budget.core.model.kv import KVType
from gguf_budget.core.model.spec import LayerKind, ModelSpec

LATENT_ONLY_ARCHS = frozenset({"deepseek4"})
"""Rule 1: architectures refused a V type apart from K's whatever their file says."""


def keeps_latent_row(model: ModelSpec) -> bool:
    """Rule 1: the cache keeps K only (an MLA file's latent row, `model_facts` Rule 6)."""
    return any(layer.kind is LayerKind.FULL and layer.v_dim == 0 and layer.k_dim for layer in model.layers)


def cache_refusal(model: ModelSpec, kv_type: KVType, v_type: KVType | None, flash_attn: bool | None) -> str | None:
    """Rules 1–2: llama.cpp's own error where it makes no context for these cache types, else None."""
    v = v_type or kv_type
    if v is not kv_type and (keeps_latent_row(model) or model.architecture in LATENT_ONLY_ARCHS):
        return (f"llama.cpp refuses the context — \"model does not support different K ({kv_type.value}) and V "
                f"({v.value}) cache types\" (its cache keeps one latent row: give -ctk and -ctv the same type)")
    if v.quantized and flash_attn is False:
        return ("llama.cpp refuses the context — \"quantized V cache requires flash_attn to be enabled\" "
                f"(-ctv {v.value} with -fa off: use -fa on or auto, or an f16 V cache)")
    return None
