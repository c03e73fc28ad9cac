"""Turn GGUF headers into a ModelSpec: `{arch}.*` facts plus the tensor-role inventory.

Rule 1: facts come from `{arch}.*` keys; n_ff / n_head / n_head_kv may be per-layer arrays.
Rule 2: a missing fact is None and listed in `unknown`; n_vocab falls back to the token
        list, then `{arch}.vocab_size`, then the rows of `token_embd`.
Rule 3: key/value head dims default to n_embd / n_head, as llama.cpp does.
Rule 4: sliding-window layers and their window follow llama.cpp's per-architecture rules
        (`swa_rules.SWA_RULES`: the `sliding_window_pattern` array or period, the architecture's
        period, sliding or dense first, default and forced windows). Architectures without a rule
        ignore `sliding_window`, as llama.cpp does (e.g. mistral v0.1, phi3).
Rule 5: recurrent layers: every layer of a pure recurrent architecture, the layers with
        head_count_kv == 0 in a hybrid, or all but every `full_attention_interval`-th layer.
        Their state is F32 and fixed in ctx (llama.cpp `n_embd_r` + `n_embd_s`).
Rule 6: MLA as llama.cpp 0c1e570 decides it (src/llama-hparams.cpp `llama_hparams::is_mla`): only a file
        with `attention.key_length_mla` and `attention.value_length_mla` (converted since PR 12801: one KV
        head of kv_lora_rank + rope dims) caches a latent row, and only K, V being a view of it
        (src/llama-kv-cache.cpp `llama_kv_cache::llama_kv_cache`: `has_v = !is_mla`, since PR 19067). An
        older file with `attention.kv_lora_rank` alone is decompressed to every head: full K and V rows.
Rule 7: every value is read through `Metadata`'s typed accessors: a key of the wrong type is
        a one-line error at the key's byte offset, never a `TypeError` further on; a fact that
        contradicts the tensor directory names its key's offset too. The architecture is a
        short name (at most `MAX_ARCH_CHARS`): every `{arch}.*` key and many messages embed it.
Rule 8: before any fact is built, the counts are checked as a whole (`fact_relations`): bounds,
        experts, heads, per-layer lengths and the tensor directory agree, so no work anywhere is
        sized by a count that breaks a relation.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from typing import Any, Mapping

from gguf_budget.core.gguf.constants import Keys

from gguf_budget.core.errors import GGUFFormatError
from gguf_budget.core.gguf.header import GGUFHeader, SkippedArray, SkippedString
from gguf_budget.core.gguf.metadata import Metadata
from gguf_budget.core.model.spec import (
    GlobalBytes,
    LayerAttention,
    LayerKind,
    ModelSpec,
    ModelTensor,
    SSMSizes,
)
from gguf_budget.core.model.fact_relations import check_counts
from gguf_budget.core.model.file_type import file_type_name
from gguf_budget.core.model.roles import BLOCK_ROLES, TensorRole, block_role, global_role, split_block_name
from gguf_budget.core.model.swa_rules import sliding_windows

RECURRENT_ARCHS = frozenset({"mamba", "mamba2", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7"})
F32_BYTES = 4
DISPLAY_ARRAY_MAX = 64
MAX_ARCH_CHARS = 128


class _Facts:
    """`{arch}.*` facts read through typed `Metadata`, recording which were missing."""

    def __init__(self, meta: Metadata, arch: str):
        self.meta = meta
        self.arch = arch
        self.unknown: list[str] = []

    def key(self, key: str) -> str:
        """`{arch}.block_count` → `llama.block_count`."""
        return key.format(arch=self.arch)

    def present(self, key: str) -> bool:
        return self.meta.present(self.key(key))

    def error(self, key: str, message: str) -> GGUFFormatError:
        return self.meta.error(self.key(key), message)

    def number(self, key: str, fact: str | None = None, required: bool = True) -> int | None:
        value = self.meta.count(self.key(key))
        if value is None and required and fact:
            self.unknown.append(fact)
        return value

    def per_layer(self, key: str, fact: str, n_layer: int) -> tuple[int, ...] | None:
        values = self.meta.counts_per_layer(self.key(key), n_layer)
        if values is None:
            self.unknown.append(fact)
        return values


def build_model_spec(headers: list[GGUFHeader]) -> ModelSpec:
    first = headers[0]
    md = first.metadata
    meta = Metadata(first)
    arch = meta.string(Keys.General.ARCHITECTURE, MAX_ARCH_CHARS)
    if not arch:
        raise meta.error(Keys.General.ARCHITECTURE, "is missing")
    f = _Facts(meta, arch)
    tensors = _tensors(headers)
    check_counts(meta, arch, len({t.layer for t in tensors if t.layer is not None}), tensors)
    n_layer = f.number(Keys.LLM.BLOCK_COUNT, "n_layer") or 0
    tensors = tuple(_as_global_if_beyond(t, n_layer) for t in tensors)
    layer_role_bytes = _layer_role_bytes(tensors, n_layer)
    gb = _global_bytes(tensors)
    n_embd = f.number(Keys.LLM.EMBEDDING_LENGTH, "n_embd")
    n_ff = f.per_layer(Keys.LLM.FEED_FORWARD_LENGTH, "n_ff", n_layer)
    n_head = f.per_layer(Keys.Attention.HEAD_COUNT, "n_head", n_layer)
    n_head_kv = _head_kv(f, n_head, n_layer)
    head_k, head_v = _head_dims(f, n_embd, n_head)
    n_vocab = _n_vocab(f, tensors)
    ctx = f.number(Keys.LLM.CONTEXT_LENGTH, "context_length")
    window = f.number(Keys.Attention.SLIDING_WINDOW, required=False)
    kv_lora = f.number(Keys.Attention.KV_LORA_RANK, required=False)
    mla = bool(f.number(Keys.Attention.KEY_LENGTH_MLA, required=False)
               and f.number(Keys.Attention.VALUE_LENGTH_MLA, required=False))
    rope_dim = f.number(Keys.Rope.DIMENSION_COUNT, required=False)
    ssm = _ssm(f)
    recurrent = _recurrent_layers(f, n_head_kv, n_layer)
    state = _recurrent_state_bytes(f, ssm, n_embd) if any(recurrent) else None
    if any(recurrent) and state is None:
        f.unknown.append("recurrent_state")
    layers = _layers(f, n_layer, n_head, n_head_kv, head_k, head_v, window, recurrent, mla)
    window = max((layer.window or 0 for layer in layers), default=0) or window  # llama.cpp's, where it fixes one
    file_type = f.number(Keys.General.FILE_TYPE, required=False)
    name = meta.display_string(Keys.General.NAME)
    return ModelSpec(
        path=first.path,
        shards=tuple(h.path for h in headers),
        gguf_version=first.version,
        architecture=arch,
        name=name,
        file_type=file_type,
        file_type_name=file_type_name(file_type, tensors),
        file_bytes=sum(h.file_bytes for h in headers),
        complete_file_bytes=sum(h.data_end for h in headers),
        tensor_bytes=sum(t.nbytes for t in tensors),
        header_only=any(h.header_only for h in headers),
        incomplete=any(h.incomplete for h in headers),
        n_params=sum(t.n_elements for t in tensors),
        n_layer=n_layer,
        n_embd=n_embd,
        n_vocab=n_vocab,
        context_length=ctx,
        n_ff=n_ff,
        n_head=n_head,
        n_head_kv=n_head_kv,
        head_dim_k=head_k,
        head_dim_v=head_v,
        sliding_window=window,
        layers=layers,
        recurrent_state_bytes=state,
        expert_count=f.number(Keys.LLM.EXPERT_COUNT, required=False),
        expert_used_count=f.number(Keys.LLM.EXPERT_USED_COUNT, required=False),
        expert_shared_count=f.number(Keys.LLM.EXPERT_SHARED_COUNT, required=False),
        kv_lora_rank=kv_lora,
        q_lora_rank=f.number(Keys.Attention.Q_LORA_RANK, required=False),
        rope_dim=rope_dim,
        ssm=ssm,
        tied_embeddings=gb.output is None,
        layer_bytes=tuple(sum(r.values()) for r in layer_role_bytes),
        layer_role_bytes=layer_role_bytes,
        global_bytes=gb,
        tensors=tensors,
        metadata=_display_metadata(md),
        unknown=tuple(dict.fromkeys(f.unknown)),
    )


def with_tensors(model: ModelSpec, tensors: tuple[ModelTensor, ...]) -> ModelSpec:
    """The same model holding other tensor types and bytes (a re-priced quantization): the
    per-layer and global inventories follow the tensors, every fact stays."""
    layer_role_bytes = _layer_role_bytes(tensors, model.n_layer)
    return replace(model, tensors=tensors, tensor_bytes=sum(t.nbytes for t in tensors), layer_role_bytes=layer_role_bytes,
                   layer_bytes=tuple(sum(r.values()) for r in layer_role_bytes), global_bytes=_global_bytes(tensors))


def _tensors(headers: list[GGUFHeader]) -> tuple[ModelTensor, ...]:
    out = []
    for shard, h in enumerate(headers):
        for t in h.tensors:
            blk = split_block_name(t.name)
            role = block_role(blk[1]) if blk else global_role(t.name)
            out.append(ModelTensor(name=t.name, shape=t.shape, ggml_type=t.ggml_type, nbytes=t.nbytes,
                                   n_elements=t.n_elements, shard=shard, role=role, layer=blk[0] if blk else None))
    return tuple(out)


def _as_global_if_beyond(t: ModelTensor, n_layer: int) -> ModelTensor:
    """Blocks past block_count (e.g. next-token-prediction heads) are loaded but not run."""
    if t.layer is None or t.layer < n_layer:
        return t
    return ModelTensor(name=t.name, shape=t.shape, ggml_type=t.ggml_type, nbytes=t.nbytes, n_elements=t.n_elements,
                       shard=t.shard, role=TensorRole.OTHER, layer=None)


def _layer_role_bytes(tensors: tuple[ModelTensor, ...], n_layer: int) -> tuple[Mapping[TensorRole, int], ...]:
    per: list[dict[TensorRole, int]] = [dict.fromkeys(BLOCK_ROLES, 0) for _ in range(n_layer)]
    for t in tensors:
        if t.layer is not None:
            per[t.layer][t.role] += t.nbytes
    return tuple(per)


def _global_bytes(tensors: tuple[ModelTensor, ...]) -> GlobalBytes:
    sums: dict[TensorRole, int] = defaultdict(int)
    present: set[TensorRole] = set()
    for t in tensors:
        if t.layer is None:
            sums[t.role] += t.nbytes
            present.add(t.role)
    return GlobalBytes(
        token_embd=sums[TensorRole.TOKEN_EMBD],
        output=sums[TensorRole.OUTPUT] if TensorRole.OUTPUT in present else None,
        output_norm=sums[TensorRole.OUTPUT_NORM],
        position_embd=sums[TensorRole.POSITION_EMBD] if TensorRole.POSITION_EMBD in present else None,
        other=sums[TensorRole.OTHER],
    )


def _head_kv(f: _Facts, n_head: tuple[int, ...] | None, n_layer: int) -> tuple[int, ...] | None:
    if not f.present(Keys.Attention.HEAD_COUNT_KV):
        return n_head  # llama.cpp: no GQA key means one KV head per query head
    return f.per_layer(Keys.Attention.HEAD_COUNT_KV, "n_head_kv", n_layer)


def _head_dims(f: _Facts, n_embd: int | None, n_head: tuple[int, ...] | None) -> tuple[int | None, int | None]:
    heads = max(n_head, default=0) if n_head else 0
    default = n_embd // heads if n_embd and heads else None
    k = f.number(Keys.Attention.KEY_LENGTH, required=False)
    v = f.number(Keys.Attention.VALUE_LENGTH, required=False)
    k, v = (k if k is not None else default), (v if v is not None else default)
    if k is None:
        f.unknown.append("head_dim_k")
    if v is None:
        f.unknown.append("head_dim_v")
    return k, v


def _n_vocab(f: _Facts, tensors: tuple[ModelTensor, ...]) -> int | None:
    tokens = f.meta.string_array_length(Keys.Tokenizer.LIST)
    if tokens is not None:
        return tokens
    vocab = f.number(Keys.LLM.VOCAB_SIZE, required=False)
    if vocab is not None:
        return vocab
    embd = next((t for t in tensors if t.name == "token_embd.weight"), None)
    if embd is not None and len(embd.shape) >= 2:
        return embd.shape[1]
    f.unknown.append("n_vocab")
    return None


SSM_KEYS: Mapping[str, str] = {
    "d_conv": Keys.SSM.CONV_KERNEL,
    "d_inner": Keys.SSM.INNER_SIZE,
    "d_state": Keys.SSM.STATE_SIZE,
    "dt_rank": Keys.SSM.TIME_STEP_RANK,
    "n_group": Keys.SSM.GROUP_COUNT,
}
"""`SSMSizes` fields (llama.cpp's `hparams.ssm_d_conv`…) → their GGUF keys."""


def _ssm(f: _Facts) -> SSMSizes | None:
    values = {name: f.number(key, required=False) for name, key in SSM_KEYS.items()}
    return SSMSizes(**values) if any(v is not None for v in values.values()) else None


def _recurrent_layers(f: _Facts, n_head_kv: tuple[int, ...] | None, n_layer: int) -> tuple[bool, ...]:
    if f.arch in RECURRENT_ARCHS:
        return (True,) * n_layer
    interval = f.number(Keys.LLM.FULL_ATTENTION_INTERVAL, required=False)
    if interval:
        return tuple((il + 1) % interval != 0 for il in range(n_layer))
    hybrid = f.present(Keys.SSM.STATE_SIZE) or f.present(Keys.ShortConv.L_CACHE)
    if hybrid and n_head_kv is not None:
        return tuple(kv == 0 for kv in n_head_kv)
    return (False,) * n_layer


def _recurrent_state_bytes(f: _Facts, ssm: SSMSizes | None, n_embd: int | None) -> int | None:
    """Per recurrent layer, F32: conv state (d_conv − 1)·(d_inner + 2·groups·d_state) + d_state·d_inner."""
    if ssm and ssm.d_conv is not None and ssm.d_inner is not None and ssm.d_state is not None:
        conv = max(ssm.d_conv - 1, 0) * (ssm.d_inner + 2 * (ssm.n_group or 0) * ssm.d_state)
        return (conv + ssm.d_state * ssm.d_inner) * F32_BYTES
    head = f.number(Keys.WKV.HEAD_SIZE, required=False)
    shift = f.number(Keys.LLM.TOKEN_SHIFT_COUNT, required=False) or 2
    if head is not None and n_embd:
        return (shift * n_embd + n_embd * head) * F32_BYTES
    l_cache = f.number(Keys.ShortConv.L_CACHE, required=False)
    if l_cache is not None and n_embd:
        return n_embd * max(l_cache - 1, 0) * F32_BYTES
    return None


def _layers(f: _Facts, n_layer: int, n_head: tuple[int, ...] | None, n_head_kv: tuple[int, ...] | None,
            head_k: int | None, head_v: int | None, window: int | None, recurrent: tuple[bool, ...],
            mla: bool) -> tuple[LayerAttention, ...]:
    windows = sliding_windows(f.arch, n_layer, window, f.meta.flags_or_count(f.key(Keys.Attention.SLIDING_WINDOW_PATTERN)))
    out = []
    for il in range(n_layer):
        nh = n_head[il] if n_head else None
        nkv = n_head_kv[il] if n_head_kv else None
        if recurrent[il]:
            out.append(LayerAttention(LayerKind.RECURRENT, nh, 0, 0, 0))
        elif nkv is None or head_k is None or head_v is None:
            out.append(LayerAttention(LayerKind.UNKNOWN, nh, nkv, head_k, head_v))
        elif mla:
            out.append(LayerAttention(LayerKind.FULL, nh, nkv, head_k, 0))
        else:
            out.append(LayerAttention(LayerKind.SWA if windows[il] else LayerKind.FULL, nh, nkv, head_k, head_v,
                                      windows[il]))
    return tuple(out)


def _display_metadata(md: Mapping[str, Any]) -> dict[str, Any]:
    """Metadata small enough to show; long arrays become a count."""
    out: dict[str, Any] = {}
    for k, v in md.items():
        if isinstance(v, SkippedString):
            out[k] = f"[{v.length} bytes, not kept]"
        elif isinstance(v, SkippedArray) or (isinstance(v, tuple) and len(v) > DISPLAY_ARRAY_MAX):
            n = v.count if isinstance(v, SkippedArray) else len(v)
            out[k] = f"[{n} items]"
        else:
            out[k] = v
    return out
