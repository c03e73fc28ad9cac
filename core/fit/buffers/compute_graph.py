"""The graph llama.cpp reserves its compute buffer for, as a node list `graph_alloc` can replay.

The nodes of a decoder block as llama.cpp's graph builder emits them for one ubatch (read off
`GGML_SCHED_DEBUG=2` dumps of `core.llama_cpp.LLAMA_CPP_SOURCE`): only the tensors the allocator
places, with their sizes; weights and the KV cache live elsewhere.

Rule 1: inputs first: token ids, the embeddings input, positions, per cache a KQ mask (f16
        [cells, ubatch] with flash attention, f32 without) and K/V row indices (V indices cover
        every element of a row without flash attention, the cache being transposed — unless the cache was
        made for flash attention that `-fa auto` then resolved off, `v_flat`), the output
        ids, and the Hadamard matrices of a quantized cache (K: the largest power-of-two
        multiple of 64 dividing the head size, V: 64; only for head sizes that are multiples of 64).
Rule 2: a block: norm → Q, K, V projections (Q/K norms, rope, gemma's Q scale), K/V written to
        the cache, attention (flash: one output; else KQ [cells, ubatch, heads], soft-max in place,
        KQV and a contiguous copy; an untransposed V, `v_flat`, is first copied transposed in the cache's
        type: llama-graph.cpp `build_attn_mha`'s `v_cont`), output projection, residual, norm, FFN (gate, up, GLU, down;
        MoE: router, top-k, experts' gate/up/GLU/down, weighting, sum), residual. Norms, adds,
        scales and rope work in place, except where llama.cpp's dumps show a copy: the roped Q
        without flash attention and gemma's scaled Q.
Rule 3: the last block keeps only the output rows (`out_ids`) after attention; then the final
        norm and the logits [n_vocab, outputs], an output the allocator never frees.
Rule 4: an MLA layer of a file with the MLA lengths (`model_facts` Rule 6; its attn_k_b and attn_v_b give
        the ranks) is built as llama.cpp 0c1e570 builds it (src/models/deepseek2.cpp `graph`, MLA branch;
        src/llama-graph.cpp `build_attn` with a K-only input, `build_attn_mha`): Q (through q_lora_rank where
        the file has attn_q_a), the compressed KV and its rope part, Q's nope part absorbed through attn_k_b,
        Q and K concatenated to kv_lora_rank + rope dims, K alone written to the cache, attention with V a
        view of K (without flash attention V is copied transposed first, in the cache's type), then
        decompressed through attn_v_b; no V row indices and no Hadamard rotation (`k_only`). A deepseek2 file of the older format (attn_kv_b)
        as the graph's non-MLA branch builds it: the latent expanded to every head, then a standard
        attention. Recurrent layers are priced as their FFN plus a standard attention of their cache's row
        size — an approximation, said so by `approximate`.
Rule 5: the buffer's high-water mark repeats from block to block, so the replay takes each
        distinct block shape twice, in order, and the last block (checked: 2 and 30 blocks of
        smollm2, all 18 of gemma3, reserve the same); a 200,000-block model costs a few blocks.
        Blocks placed differently (another device, `sched`) are distinct: each run of blocks
        alike on the same devices keeps its first two and its last.
Rule 6: each node carries what llama.cpp's scheduler reads (`sched`): the weight an op
        multiplies (by its tensor name, with its size), the op and its batch (`offload_op`),
        which layer's KV cache a view belongs to, and a view's size (what a copy of it takes).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Mapping, Sequence

from gguf_budget.core.fit.buffers.affine import floor_times
from gguf_budget.core.fit.buffers.graph_alloc import Node
from gguf_budget.core.model.spec import LayerAttention, LayerKind, ModelSpec
from gguf_budget.core.model.per_model_cache import per_model

BLOCK_WEIGHTS = ("attn_norm", "attn_q", "attn_q_norm", "attn_k", "attn_k_norm", "attn_v", "attn_output",
                 "attn_q_a", "attn_q_a_norm", "attn_q_b", "attn_kv_a_mqa", "attn_kv_a_norm", "attn_kv_b", "attn_k_b",
                 "attn_v_b", "post_attention_norm", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down", "ffn_gate_inp",
                 "ffn_up_exps", "ffn_gate_exps", "ffn_down_exps", "ffn_up_shexp", "ffn_gate_shexp", "ffn_down_shexp",
                 "post_ffw_norm")
"""Every weight a block's nodes may read, `blk.{il}.{name}.weight` (tests/test_placed_graph.py holds the builder to it)."""
GLOBAL_WEIGHTS = ("token_embd.weight", "output_norm.weight", "output.weight")
"""The weights the nodes outside the blocks read."""
F32 = 4
F16 = 2
I32 = 4
I64 = 8
ROT_MIN = 64


@dataclass(frozen=True, kw_only=True)
class GraphSettings:
    """What shapes the reserved graph: tokens per ubatch, outputs kept, attention kind, cache cells."""

    ubatch: int
    outputs: int
    flash_attn: bool
    full_cells: int
    swa_cells: int
    rot_k: int
    rot_v: int
    k_size: float = 2.0
    """Bytes per element of the K cache (f16: 2; a view of it copied to another device takes that much)."""
    v_size: float = 2.0
    v_flat: bool = False
    """The V cache is untransposed though attention is not fused: made while `-fa auto` counted as on, resolved off
    after (src/llama-context.cpp: the cache is made before `resolve_fused_ops`)."""


@dataclass(frozen=True, kw_only=True)
class BlockShape:
    """One block's sizes (elements per token) and the features its tensors show."""

    q: int
    k: int
    v: int
    head_v: int
    n_head: int
    n_ff: int
    swa: bool
    qk_norm: bool
    post_norms: bool
    gated: bool
    experts_used: int
    expert_ff: int
    n_expert: int
    shared_ff: int
    mla: MLAShape | None = None


@dataclass(frozen=True, kw_only=True)
class MLAShape:
    """Rule 4: an MLA layer's ranks (elements): the latent, rope and nope parts of a head's query-key, the
    decompressed value head, Q's low rank (0: attn_q alone); `absorbed`: the current format (else decompressed)."""

    kv_lora: int
    rope: int
    nope: int
    v_head: int
    q_lora: int
    absorbed: bool


def k_rotation(head_dim: int | None, quantized: bool) -> int:
    """Rule 1: the K Hadamard size, 0 when llama.cpp does not rotate."""
    if not quantized or not head_dim or head_dim % ROT_MIN:
        return 0
    n = ROT_MIN
    while head_dim % (2 * n) == 0:
        n *= 2
    return n


def v_rotation(head_dim: int | None, quantized: bool) -> int:
    return ROT_MIN if quantized and head_dim and head_dim % ROT_MIN == 0 else 0


@per_model(maxsize=16)
def block_shapes(model: ModelSpec) -> tuple[BlockShape, ...]:
    """Each block's shape from the spec's facts and tensor names (blocks alike share one record). It walks every
    tensor's name and depends on the model alone, so it is kept per model: a ctx tick builds a graph at a new ctx."""
    roles: dict[int, set[str]] = {}
    for t in model.tensors:
        if t.layer is not None:
            roles.setdefault(t.layer, set()).add(t.name.split(".", 2)[2].rsplit(".", 1)[0])
    n_ff = model.n_ff or (0,)
    shared = _shared_ff(model)
    made: dict[tuple[object, ...], BlockShape] = {}
    out = []
    for il, layer in enumerate(model.layers):
        names = frozenset(roles.get(il, ()))
        ff = n_ff[min(il, len(n_ff) - 1)]
        key = (layer, ff, names, _expert_ff(model, il) if "ffn_up_exps" in names else 0,
               _mla_shape(model, il, layer) if "attn_kv_a_mqa" in names else None)
        if key not in made:
            made[key] = replace(_shape(model, layer, ff, names, key[3], shared), mla=key[4])
        out.append(made[key])
    return tuple(out)


def _mla_shape(model: ModelSpec, il: int, layer: LayerAttention) -> MLAShape | None:
    """Rule 4: the ranks from the layer's tensors (ggml order: attn_kv_a_mqa [n_embd, kv_lora + rope], attn_q_a
    [n_embd, q_lora]; absorbed: attn_k_b [nope, kv_lora, heads], attn_v_b [kv_lora, v_head, heads]; older files:
    attn_kv_b [kv_lora, heads · (nope + v_head)], with the head dims the layer caches). `absorbed` tells them apart."""
    shapes = {t.name.split(".", 2)[2].rsplit(".", 1)[0]: t.shape for t in model.tensors if t.layer == il}
    kv_a, q_a = shapes.get("attn_kv_a_mqa", ()), shapes.get("attn_q_a", ())
    k_b, v_b, kv_b = shapes.get("attn_k_b", ()), shapes.get("attn_v_b", ()), shapes.get("attn_kv_b", ())
    q_lora = q_a[1] if len(q_a) >= 2 else 0
    if len(kv_a) < 2:
        return None
    if len(k_b) >= 2 and len(v_b) >= 2 and not layer.v_dim:
        return MLAShape(kv_lora=k_b[1], rope=kv_a[1] - k_b[1], nope=k_b[0], v_head=v_b[1], q_lora=q_lora, absorbed=True)
    if len(kv_b) >= 2 and layer.k_dim and layer.v_dim and kv_a[1] > kv_b[0]:
        rope = kv_a[1] - kv_b[0]
        return MLAShape(kv_lora=kv_b[0], rope=rope, nope=layer.k_dim - rope, v_head=layer.v_dim, q_lora=q_lora,
                        absorbed=False)
    return None


def _shape(model: ModelSpec, layer: LayerAttention, ff: int, names: frozenset[str], expert_ff: int,
           shared: int) -> BlockShape:
    n_head = layer.n_head or 1
    k_dim, v_dim, n_kv = layer.k_dim or 0, layer.v_dim or 0, layer.n_head_kv or 0
    return BlockShape(
        q=n_head * k_dim, k=n_kv * k_dim, v=n_kv * v_dim, head_v=v_dim, n_head=n_head, n_ff=ff,
        swa=layer.kind is LayerKind.SWA, qk_norm="attn_q_norm" in names, post_norms="post_attention_norm" in names,
        gated="ffn_gate" in names or "ffn_gate_exps" in names,
        experts_used=(model.expert_used_count or 0) if "ffn_gate_inp" in names else 0,
        expert_ff=expert_ff, n_expert=model.expert_count or 0, shared_ff=shared,
    )


def replayed(blocks: tuple[BlockShape, ...], keys: tuple[object, ...] | None = None) -> list[tuple[int, BlockShape]]:
    """Rule 5: the blocks worth replaying, with their index — each distinct (shape, placement) first two, in order,
    the last block of each run placed alike, and the last block."""
    seen: dict[tuple[BlockShape, object], int] = {}
    picked = []
    n = len(blocks)
    key = (lambda il: keys[il]) if keys is not None else (lambda il: None)
    for il, blk in enumerate(blocks):
        run_ends = il == n - 1 or key(il + 1) != key(il)
        k = (blk, key(il))
        if seen.get(k, 0) < 2 or run_ends:
            seen[k] = seen.get(k, 0) + 1
            picked.append((il, blk))
    return picked


@per_model(maxsize=16)
def _replayed_alone(model: ModelSpec) -> tuple[tuple[int, BlockShape], ...]:
    """Rule 5's blocks of a graph placed on one device, picked once per model: every new ctx's graph asks for them
    (a hash of each of the blocks' shapes)."""
    return tuple(replayed(block_shapes(model)))


def _expert_ff(model: ModelSpec, il: int) -> int:
    exps = [t for t in model.tensors if t.layer == il and t.name.endswith("ffn_up_exps.weight")]
    return exps[0].shape[1] if exps and len(exps[0].shape) == 3 else 0


def _shared_ff(model: ModelSpec) -> int:
    sh = [t for t in model.tensors if t.name.endswith("ffn_up_shexp.weight") and len(t.shape) >= 2]
    return sh[0].shape[1] if sh else 0


@per_model(maxsize=16)
def k_only(model: ModelSpec) -> bool:
    """Rule 4: an absorbed MLA model attends through a K-only input, which carries no Hadamard matrices whatever the
    cache's type (src/llama-graph.cpp `build_attn_inp_k_impl`), though the cache prints `attn_rot_k = 1`."""
    return any(blk.mla is not None and blk.mla.absorbed for blk in block_shapes(model))


def approximate(model: ModelSpec) -> bool:
    """Rule 4: whether some layer is priced by approximation."""
    unbuilt_mla = bool(model.kv_lora_rank) and any(blk.mla is None for blk in block_shapes(model))
    return unbuilt_mla or any(layer.kind is not LayerKind.FULL and layer.kind is not LayerKind.SWA
                             for layer in model.layers)


class _Builder:
    """Appends nodes with unique names; `il` is the block being built (weights are named after it)."""

    def __init__(self, sizes: Mapping[str, int], rows: int) -> None:
        self.nodes: list[Node] = []
        self.count = 0
        self.sizes = sizes
        self.rows = rows
        self.il = -1

    def add(self, nbytes: int, *srcs: str, inplace: bool = False, view_of: str | None = None,
            is_input: bool = False, is_output: bool = False, weight: str | None = None, op: str = "",
            rows: int | None = None, cache: bool = False) -> str:
        self.count += 1
        name = f"n{self.count}"
        tensor = None if weight is None else (weight if "." in weight else f"blk.{self.il}.{weight}.weight")
        self.nodes.append(Node(name=name, nbytes=nbytes, srcs=tuple(srcs), inplace=inplace, view_of=view_of,
                               is_input=is_input, is_output=is_output, weight=tensor,
                               weight_bytes=self.sizes.get(tensor, 0) if tensor else 0, op=op,
                               rows=self.rows if rows is None else rows, cache=self.il if cache else None,
                               layer=self.il if self.il >= 0 else None))
        return name

    def view(self, of: str, nbytes: int = 0) -> str:
        return self.add(nbytes, of, view_of=of)

    def pin_cpu(self, name: str) -> None:
        """The node runs on the CPU whatever its neighbours (llama.cpp's `ggml_backend_sched_set_tensor_backend`)."""
        self.nodes = [replace(n, on_cpu=True) if n.name == name else n for n in self.nodes]


@dataclass(frozen=True, kw_only=True)
class _Inputs:
    pos: str
    masks: dict[bool, str]
    idxs: dict[bool, tuple[str, str]]
    out_ids: str
    rot_k: str | None
    rot_v: str | None
    embd: str


def _inputs(b: _Builder, s: GraphSettings, n_embd: int, v_row: int, has_swa: bool) -> _Inputs:
    T = s.ubatch
    tokens = b.add(I32 * T, is_input=True)
    b.add(F32 * n_embd * T, is_input=True)  # the embeddings input (one of two, selected per batch)
    pos = b.add(I32 * T, is_input=True)
    masks, idxs = {}, {}
    for swa in (False, True) if has_swa else (False,):
        cells = s.swa_cells if swa else s.full_cells
        masks[swa] = b.add(cells * T * (F16 if s.flash_attn else F32), is_input=True)
        k_idx = b.add(I64 * T, is_input=True)
        idxs[swa] = (k_idx, b.add(I64 * T * (1 if s.flash_attn or s.v_flat else v_row), is_input=True) if v_row else "")
    out_ids = b.add(I32 * s.outputs, is_input=True)
    rot_k = b.add(F32 * s.rot_k * s.rot_k, is_input=True) if s.rot_k else None
    rot_v = b.add(F32 * s.rot_v * s.rot_v, is_input=True) if s.rot_v else None
    return _Inputs(pos=pos, masks=masks, idxs=idxs, out_ids=out_ids, rot_k=rot_k, rot_v=rot_v,
                   embd=b.add(F32 * n_embd * T, tokens, weight="token_embd.weight", op="get_rows"))


@per_model(maxsize=16)
def layer_tensors(model: ModelSpec) -> tuple[tuple[tuple[str, int], ...], ...]:
    """Each block's tensors, (name, bytes) in the file's order: what a block's weights are and weigh."""
    out: list[list[tuple[str, int]]] = [[] for _ in range(model.n_layer)]
    for t in model.tensors:
        if t.layer is not None and t.layer < model.n_layer:
            out[t.layer].append((t.name, t.nbytes))
    return tuple(tuple(names) for names in out)


@per_model(maxsize=16)
def _tensor_sizes(model: ModelSpec) -> Mapping[str, int]:
    """Each weight's bytes by name, walked once per model (a tick builds graphs at many ctxs and splits)."""
    sizes = {t.name: t.nbytes for t in model.tensors}
    sizes.setdefault("output.weight", sizes.get("token_embd.weight", 0))  # tied: the duplicated table
    return MappingProxyType(sizes)


def compute_nodes(model: ModelSpec, s: GraphSettings, blocks: Sequence[tuple[int, BlockShape]] | None = None,
                  kv_on_cpu: bool = False) -> list[Node]:
    """The node list of one ubatch through the whole model (Rules 1–3, 6) over `blocks`, the `replayed` ones (Rule 5:
    by default those of one device); `kv_on_cpu` (`-nkvo`) pins each attention's output to the CPU without flash
    attention (llama-graph.cpp `build_attn_mha`); with it the fused attention runs beside its neighbours, reading
    copies of the cache."""
    shapes = block_shapes(model)
    blocks = _replayed_alone(model) if blocks is None else blocks
    E = model.n_embd or 0
    b = _Builder(_tensor_sizes(model), s.ubatch)
    inp = _graph_inputs(b, s, E, blocks)
    gemma = model.architecture.startswith("gemma")
    resid = b.add(F32 * E * s.ubatch, inp.embd, inplace=True) if gemma else inp.embd
    for il, blk in blocks:
        b.il = il
        b.rows = s.ubatch
        resid = _block(b, s, inp, blk, E, resid, gemma, last=il == len(shapes) - 1, kv_on_cpu=kv_on_cpu)
    b.il = -1
    norm = _norm(b, F32 * E * s.outputs, resid, "output_norm.weight")
    b.add(F32 * (model.n_vocab or 0) * s.outputs, norm, is_output=True, weight="output.weight", op="mul_mat")
    return b.nodes


def input_bytes(model: ModelSpec, s: GraphSettings) -> int:
    """Rule 1: the bytes of the inputs `compute_nodes` places first (over the blocks it replays by default), the
    graph's blocks not built: what a GPU-layer graph leaves on the host (`runtime_memory` Rule 7)."""
    b = _Builder(_tensor_sizes(model), s.ubatch)
    _graph_inputs(b, s, model.n_embd or 0, _replayed_alone(model))
    return sum(n.nbytes for n in b.nodes if n.is_input)


def _graph_inputs(b: _Builder, s: GraphSettings, E: int, blocks: Sequence[tuple[int, BlockShape]]) -> _Inputs:
    """Rule 1 for `blocks`: a V row as wide as their widest, the sliding window's mask and indices where one is."""
    return _inputs(b, s, E, max((blk.v for _, blk in blocks), default=0), any(blk.swa for _, blk in blocks))


def _norm(b: _Builder, nbytes: int, src: str, weight: str) -> str:
    return b.add(nbytes, b.add(nbytes, src, inplace=True, op="norm"), inplace=True, weight=weight, op="mul")


def _block(b: _Builder, s: GraphSettings, inp: _Inputs, blk: BlockShape, E: int, resid: str, gemma: bool,
           last: bool, kv_on_cpu: bool) -> str:
    T = s.ubatch
    cur = _norm(b, F32 * E * T, resid, "attn_norm")
    if blk.mla is None:
        attn = _attention(b, s, inp, blk, cur, gemma)
    elif blk.mla.absorbed:
        attn = _mla_attention(b, s, inp, blk, blk.mla, cur)
    else:
        attn = _decompressed_attention(b, s, inp, blk, blk.mla, cur)
    if kv_on_cpu and not s.flash_attn:
        b.pin_cpu(attn)
    out_bytes = F32 * blk.n_head * (blk.mla.v_head if blk.mla else blk.head_v) * T
    cur = b.add(F32 * E * T, b.view(attn, out_bytes), weight="attn_output", op="mul_mat")
    if last:
        T = s.outputs
        b.rows = T
        cur = b.add(F32 * E * T, cur, inp.out_ids, op="get_rows", rows=0)
        resid = b.add(F32 * E * T, resid, inp.out_ids, op="get_rows", rows=0)
    if blk.post_norms:
        cur = _norm(b, F32 * E * T, cur, "post_attention_norm")
    ffn_inp = b.add(F32 * E * T, cur, resid, inplace=True, op="add")
    cur = _ffn(b, blk, E, T, _norm(b, F32 * E * T, ffn_inp, "ffn_norm"))
    if blk.post_norms:
        cur = _norm(b, F32 * E * T, cur, "post_ffw_norm")
    return b.add(F32 * E * T, cur, ffn_inp, inplace=True, op="add")


def _attention(b: _Builder, s: GraphSettings, inp: _Inputs, blk: BlockShape, x: str, gemma: bool) -> str:
    T = s.ubatch
    q = b.add(F32 * blk.q * T, x, weight="attn_q", op="mul_mat")
    if blk.qk_norm:
        q = _norm(b, F32 * blk.q * T, q, "attn_q_norm")
    q = b.add(F32 * blk.q * T, q, inp.pos, inplace=s.flash_attn, op="rope")
    if gemma:
        q = b.add(F32 * blk.q * T, q, op="scale")
    if inp.rot_k:
        q = b.add(F32 * blk.q * T, q, inp.rot_k, op="mul_mat")
    v = "" if gemma else _value(b, inp, blk, x, T)
    k = b.add(F32 * blk.k * T, x, weight="attn_k", op="mul_mat")
    if blk.qk_norm:
        k = _norm(b, F32 * blk.k * T, k, "attn_k_norm")
    k = b.add(F32 * blk.k * T, k, inp.pos, inplace=True, op="rope")
    if inp.rot_k:
        k = b.add(F32 * blk.k * T, k, inp.rot_k, op="mul_mat")
    if gemma:
        v = _value(b, inp, blk, x, T)
    return _attend(b, s, inp, blk, q, k, v)


def _attend(b: _Builder, s: GraphSettings, inp: _Inputs, blk: BlockShape, q: str, k: str, v: str) -> str:
    """K and V written to the cache, then attention (flash: one fused op; else KQ, soft-max, KQV and a copy)."""
    T = s.ubatch
    k_idx, v_idx = inp.idxs[blk.swa]
    cells = s.swa_cells if blk.swa else s.full_cells
    set_k = b.add(floor_times(cells * blk.k, s.k_size), b.view(k, F32 * blk.k * T), k_idx, view_of="cache", op="set_rows",
                  cache=True)
    set_v = b.add(floor_times(cells * blk.v, s.v_size), b.view(v, F32 * blk.v * T), v_idx, view_of="cache", op="set_rows",
                  cache=True)
    q_view = b.view(q, F32 * blk.q * T)
    out_bytes = F32 * blk.n_head * blk.head_v * T
    if s.flash_attn:
        out = b.add(out_bytes, q_view, inp.masks[blk.swa], set_k, set_v, op="flash_attn")
        return b.add(out_bytes, b.view(out, out_bytes), inp.rot_v, op="mul_mat") if inp.rot_v else out
    v = b.add(floor_times(cells * blk.v, s.v_size), b.view(set_v), op="cont") if s.v_flat else set_v
    kq = b.add(F32 * cells * T * blk.n_head, set_k, q_view, op="mul_mat")
    kq = b.add(F32 * cells * T * blk.n_head, kq, inp.masks[blk.swa], inplace=True, op="soft_max")
    kqv = b.add(out_bytes, v, kq, op="mul_mat")
    return b.add(out_bytes, b.view(kqv, out_bytes), op="cont")


def _mla_query(b: _Builder, T: int, H: int, m: MLAShape, x: str) -> str:
    """Rule 4: Q of every head (query-key dims), through attn_q_a and its norm where the file has a Q rank."""
    if m.q_lora:
        return b.add(F32 * H * (m.nope + m.rope) * T, _norm(b, F32 * m.q_lora * T, b.add(
            F32 * m.q_lora * T, x, weight="attn_q_a", op="mul_mat"), "attn_q_a_norm"), weight="attn_q_b", op="mul_mat")
    return b.add(F32 * H * (m.nope + m.rope) * T, x, weight="attn_q", op="mul_mat")


def _decompressed_attention(b: _Builder, s: GraphSettings, inp: _Inputs, blk: BlockShape, m: MLAShape, x: str) -> str:
    """Rule 4: an older deepseek2 file's attention, decompressed to every head (deepseek2.cpp's non-MLA branch):
    Q roped (not in place: the rope has an offset), the latent normed and expanded through attn_kv_b, V copied
    out of it, each head's K the expansion's nope part beside the shared rope part repeated; then a standard
    attention."""
    T, H, L, R = s.ubatch, blk.n_head, m.kv_lora, m.rope
    q = b.add(F32 * H * (m.nope + R) * T, _mla_query(b, T, H, m, x), inp.pos, op="rope")
    kv_a = b.add(F32 * (L + R) * T, x, weight="attn_kv_a_mqa", op="mul_mat")
    kv = b.add(F32 * H * (m.nope + m.v_head) * T, _norm(b, F32 * L * T, b.view(kv_a), "attn_kv_a_norm"),
               weight="attn_kv_b", op="mul_mat")
    v = b.add(F32 * H * m.v_head * T, b.view(kv), op="cont")
    k_pe = b.add(F32 * R * H * T, b.add(F32 * R * T, b.view(kv_a), inp.pos, op="rope"), op="repeat")
    k = b.add(F32 * H * (m.nope + R) * T, b.view(kv), k_pe, op="concat")
    return _attend(b, s, inp, blk, q, k, v)


def _mla_attention(b: _Builder, s: GraphSettings, inp: _Inputs, blk: BlockShape, m: MLAShape, x: str) -> str:
    """Rule 4: one absorbed MLA attention, node for node as llama.cpp builds it."""
    T, H, L, R = s.ubatch, blk.n_head, m.kv_lora, m.rope
    q = _mla_query(b, T, H, m, x)
    absorbed = b.add(F32 * L * T * H, b.view(q), weight="attn_k_b", op="mul_mat")
    q_pe = b.add(F32 * R * H * T, b.view(q), inp.pos, op="rope")
    q = b.add(F32 * (L + R) * H * T, b.view(absorbed), q_pe, op="concat")
    kv = b.add(F32 * (L + R) * T, x, weight="attn_kv_a_mqa", op="mul_mat")
    kv_cmpr = _norm(b, F32 * L * T, b.view(kv), "attn_kv_a_norm")
    k_pe = b.add(F32 * R * T, b.view(kv), inp.pos, op="rope")
    k = b.add(F32 * (L + R) * T, b.view(kv_cmpr), k_pe, op="concat")
    k_idx, _ = inp.idxs[blk.swa]
    cells = s.swa_cells if blk.swa else s.full_cells
    set_k = b.add(floor_times(cells * (L + R), s.k_size), b.view(k, F32 * (L + R) * T), k_idx, view_of="cache",
                  op="set_rows", cache=True)
    latent, out_bytes = F32 * L * H * T, F32 * m.v_head * H * T
    if s.flash_attn:
        out = b.add(latent, b.view(q, F32 * (L + R) * H * T), inp.masks[blk.swa], set_k, op="flash_attn")
    else:
        kq = b.add(F32 * cells * T * H, set_k, b.view(q, F32 * (L + R) * H * T), op="mul_mat")
        kq = b.add(F32 * cells * T * H, kq, inp.masks[blk.swa], inplace=True, op="soft_max")
        v = b.add(floor_times(cells * L, s.k_size), b.view(set_k), op="cont")
        out = b.add(latent, v, kq, op="mul_mat")
    mla = b.add(out_bytes, b.view(out, latent), weight="attn_v_b", op="mul_mat")
    return b.add(out_bytes, b.view(mla, out_bytes), op="cont")


def _value(b: _Builder, inp: _Inputs, blk: BlockShape, x: str, T: int) -> str:
    v = b.add(F32 * blk.v * T, x, weight="attn_v", op="mul_mat")
    return b.add(F32 * blk.v * T, v, inp.rot_v, op="mul_mat") if inp.rot_v else v


def _ffn(b: _Builder, blk: BlockShape, E: int, T: int, x: str) -> str:
    if blk.experts_used:
        return _moe(b, blk, E, T, x)
    if not blk.gated:
        up = b.add(F32 * blk.n_ff * T, x, weight="ffn_up", op="mul_mat")
        return b.add(F32 * E * T, b.add(F32 * blk.n_ff * T, up, inplace=True, op="unary"), weight="ffn_down",
                     op="mul_mat")
    gate = b.add(F32 * blk.n_ff * T, x, weight="ffn_gate", op="mul_mat")
    up = b.add(F32 * blk.n_ff * T, x, weight="ffn_up", op="mul_mat")
    return b.add(F32 * E * T, b.add(F32 * blk.n_ff * T, gate, up, op="glu"), weight="ffn_down", op="mul_mat")


def _moe(b: _Builder, blk: BlockShape, E: int, T: int, x: str) -> str:
    k, ff = blk.experts_used, blk.expert_ff
    logits = b.add(F32 * blk.n_expert * T, x, weight="ffn_gate_inp", op="mul_mat")
    probs = b.add(F32 * blk.n_expert * T, logits, op="soft_max")
    chosen = b.add(I32 * blk.n_expert * T, probs, op="argsort")
    weights = b.add(F32 * k * T, probs, b.view(chosen, I32 * k * T), op="get_rows", rows=0)
    up = b.add(F32 * ff * k * T, x, chosen, weight="ffn_up_exps", op="mul_mat_id")
    gate = b.add(F32 * ff * k * T, x, chosen, weight="ffn_gate_exps", op="mul_mat_id")
    down = b.add(F32 * E * k * T, b.add(F32 * ff * k * T, gate, up, op="glu"), chosen, weight="ffn_down_exps",
                 op="mul_mat_id")
    down = b.add(F32 * E * k * T, down, weights, inplace=True, op="mul")
    parts = [b.view(down, F32 * E * T) for _ in range(k)]
    out = b.add(F32 * E * T, *parts[:2], op="add")
    for part in parts[2:]:
        out = b.add(F32 * E * T, out, part, inplace=True, op="add")
    if blk.shared_ff:
        sh_up = b.add(F32 * blk.shared_ff * T, x, weight="ffn_up_shexp", op="mul_mat")
        sh_gate = b.add(F32 * blk.shared_ff * T, x, weight="ffn_gate_shexp", op="mul_mat")
        shared = b.add(F32 * E * T, b.add(F32 * blk.shared_ff * T, sh_gate, sh_up, op="glu"), weight="ffn_down_shexp",
                       op="mul_mat")
        out = b.add(F32 * E * T, out, shared, inplace=True, op="add")
    return out
