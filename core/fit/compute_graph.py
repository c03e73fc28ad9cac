"""The graph llama.cpp reserves its compute buffer for, as a node list `graph_alloc` can replay.

The nodes of a decoder block as llama.cpp's graph builder emits them for one ubatch (read off
`GGML_SCHED_DEBUG=2` dumps of `core.llama_cpp.LLAMA_CPP_SOURCE`): only the tensors the allocator
places, with their sizes; weights and the KV cache live elsewhere.

Rule 1: inputs first: token ids, the embeddings input, positions, per cache a KQ mask (f16
        [cells, ubatch] with flash attention, f32 without) and K/V row indices (V indices cover
        every element of a row without flash attention, the cache being transposed), the output
        ids, and the Hadamard matrices of a quantized cache (K: the largest power-of-two
        multiple of 64 dividing the head size, V: 64; only for head sizes that are multiples of 64).
Rule 2: a block: norm → Q, K, V projections (Q/K norms, rope, gemma's Q scale), K/V written to
        the cache, attention (flash: one output; else KQ [cells, ubatch, heads], soft-max in place,
        KQV and a contiguous copy), output projection, residual, norm, FFN (gate, up, GLU, down;
        MoE: router, top-k, experts' gate/up/GLU/down, weighting, sum), residual. Norms, adds,
        scales and rope work in place, except where llama.cpp's dumps show a copy: the roped Q
        without flash attention and gemma's scaled Q.
Rule 3: the last block keeps only the output rows (`out_ids`) after attention; then the final
        norm and the logits [n_vocab, outputs], an output the allocator never frees.
Rule 4: recurrent and MLA layers are priced as their FFN plus a standard attention of their
        cache's row size — an approximation, said so by `approximate`.
Rule 5: the buffer's high-water mark repeats from block to block, so the replay takes each
        distinct block shape twice, in order, and the last block (checked: 2 and 30 blocks of
        smollm2, all 18 of gemma3, reserve the same); a 200,000-block model costs a few blocks.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.fit.graph_alloc import Node
from gguf_budget.core.model.spec import LayerAttention, LayerKind, ModelSpec
from gguf_budget.core.model.per_model_cache import per_model

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
        key = (layer, ff, names, _expert_ff(model, il) if "ffn_up_exps" in names else 0)
        if key not in made:
            made[key] = _shape(model, layer, ff, names, key[3], shared)
        out.append(made[key])
    return tuple(out)


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


def replayed(blocks: tuple[BlockShape, ...]) -> list[BlockShape]:
    """Rule 5: the blocks worth replaying — each distinct shape's first two, in order, and the last block."""
    seen: dict[BlockShape, int] = {}
    picked = []
    for il, blk in enumerate(blocks):
        if seen.get(blk, 0) < 2 or il == len(blocks) - 1:
            seen[blk] = seen.get(blk, 0) + 1
            picked.append(blk)
    return picked


def _expert_ff(model: ModelSpec, il: int) -> int:
    exps = [t for t in model.tensors if t.layer == il and t.name.endswith("ffn_up_exps.weight")]
    return exps[0].shape[1] if exps and len(exps[0].shape) == 3 else 0


def _shared_ff(model: ModelSpec) -> int:
    sh = [t for t in model.tensors if t.name.endswith("ffn_up_shexp.weight") and len(t.shape) >= 2]
    return sh[0].shape[1] if sh else 0


def approximate(model: ModelSpec) -> bool:
    """Rule 4: whether some layer is priced by approximation."""
    return bool(model.kv_lora_rank) or any(layer.kind is not LayerKind.FULL and layer.kind is not LayerKind.SWA
                                           for layer in model.layers)


class _Builder:
    """Appends nodes with unique names; `last` is the name of the latest one."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.count = 0

    def add(self, nbytes: int, *srcs: str, inplace: bool = False, view_of: str | None = None,
            is_input: bool = False, is_output: bool = False) -> str:
        self.count += 1
        name = f"n{self.count}"
        self.nodes.append(Node(name=name, nbytes=nbytes, srcs=tuple(srcs), inplace=inplace, view_of=view_of,
                               is_input=is_input, is_output=is_output))
        return name

    def view(self, of: str) -> str:
        return self.add(0, of, view_of=of)


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
        idxs[swa] = (b.add(I64 * T, is_input=True), b.add(I64 * T * (1 if s.flash_attn else v_row), is_input=True))
    out_ids = b.add(I32 * s.outputs, is_input=True)
    rot_k = b.add(F32 * s.rot_k * s.rot_k, is_input=True) if s.rot_k else None
    rot_v = b.add(F32 * s.rot_v * s.rot_v, is_input=True) if s.rot_v else None
    return _Inputs(pos=pos, masks=masks, idxs=idxs, out_ids=out_ids, rot_k=rot_k, rot_v=rot_v,
                   embd=b.add(F32 * n_embd * T, tokens))


def compute_nodes(model: ModelSpec, s: GraphSettings) -> list[Node]:
    """The node list of one ubatch through the whole model (Rules 1–3)."""
    blocks = replayed(block_shapes(model))
    E = model.n_embd or 0
    b = _Builder()
    v_row = max((blk.v for blk in blocks), default=0)
    inp = _inputs(b, s, E, v_row, any(blk.swa for blk in blocks))
    gemma = model.architecture.startswith("gemma")
    resid = b.add(F32 * E * s.ubatch, inp.embd, inplace=True) if gemma else inp.embd
    for il, blk in enumerate(blocks):
        resid = _block(b, s, inp, blk, E, resid, gemma, last=il == len(blocks) - 1)
    norm = b.add(F32 * E * s.outputs, resid, inplace=True)
    norm = b.add(F32 * E * s.outputs, norm, inplace=True)
    b.add(F32 * (model.n_vocab or 0) * s.outputs, norm, is_output=True)
    return b.nodes


def _norm(b: _Builder, nbytes: int, src: str) -> str:
    return b.add(nbytes, b.add(nbytes, src, inplace=True), inplace=True)


def _block(b: _Builder, s: GraphSettings, inp: _Inputs, blk: BlockShape, E: int, resid: str, gemma: bool,
           last: bool) -> str:
    T = s.ubatch
    cur = _norm(b, F32 * E * T, resid)
    attn = _attention(b, s, inp, blk, cur, gemma)
    cur = b.add(F32 * E * T, b.view(attn))
    if last:
        T = s.outputs
        cur = b.add(F32 * E * T, cur, inp.out_ids)
        resid = b.add(F32 * E * T, resid, inp.out_ids)
    if blk.post_norms:
        cur = _norm(b, F32 * E * T, cur)
    ffn_inp = b.add(F32 * E * T, cur, resid, inplace=True)
    cur = _ffn(b, blk, E, T, _norm(b, F32 * E * T, ffn_inp))
    if blk.post_norms:
        cur = _norm(b, F32 * E * T, cur)
    return b.add(F32 * E * T, cur, ffn_inp, inplace=True)


def _attention(b: _Builder, s: GraphSettings, inp: _Inputs, blk: BlockShape, x: str, gemma: bool) -> str:
    T = s.ubatch
    q = b.add(F32 * blk.q * T, x)
    if blk.qk_norm:
        q = _norm(b, F32 * blk.q * T, q)
    q = b.add(F32 * blk.q * T, q, inp.pos, inplace=s.flash_attn)
    if gemma:
        q = b.add(F32 * blk.q * T, q)
    if inp.rot_k:
        q = b.add(F32 * blk.q * T, q, inp.rot_k)
    v = "" if gemma else _value(b, inp, blk, x, T)
    k = b.add(F32 * blk.k * T, x)
    if blk.qk_norm:
        k = _norm(b, F32 * blk.k * T, k)
    k = b.add(F32 * blk.k * T, k, inp.pos, inplace=True)
    if inp.rot_k:
        k = b.add(F32 * blk.k * T, k, inp.rot_k)
    if gemma:
        v = _value(b, inp, blk, x, T)
    k_idx, v_idx = inp.idxs[blk.swa]
    set_k = b.add(0, b.view(k), k_idx, view_of="cache")
    set_v = b.add(0, b.view(v), v_idx, view_of="cache")
    q_view = b.view(q)
    out_bytes = F32 * blk.n_head * blk.head_v * T
    if s.flash_attn:
        out = b.add(out_bytes, q_view, inp.masks[blk.swa], set_k, set_v)
        return b.add(out_bytes, b.view(out), inp.rot_v) if inp.rot_v else out
    cells = s.swa_cells if blk.swa else s.full_cells
    kq = b.add(F32 * cells * T * blk.n_head, set_k, q_view)
    kq = b.add(F32 * cells * T * blk.n_head, kq, inp.masks[blk.swa], inplace=True)
    kqv = b.add(out_bytes, set_v, kq)
    return b.add(out_bytes, b.view(kqv))


def _value(b: _Builder, inp: _Inputs, blk: BlockShape, x: str, T: int) -> str:
    v = b.add(F32 * blk.v * T, x)
    return b.add(F32 * blk.v * T, v, inp.rot_v) if inp.rot_v else v


def _ffn(b: _Builder, blk: BlockShape, E: int, T: int, x: str) -> str:
    if blk.experts_used:
        return _moe(b, blk, E, T, x)
    if not blk.gated:
        up = b.add(F32 * blk.n_ff * T, x)
        return b.add(F32 * E * T, b.add(F32 * blk.n_ff * T, up, inplace=True))
    gate = b.add(F32 * blk.n_ff * T, x)
    up = b.add(F32 * blk.n_ff * T, x)
    return b.add(F32 * E * T, b.add(F32 * blk.n_ff * T, gate, up))


def _moe(b: _Builder, blk: BlockShape, E: int, T: int, x: str) -> str:
    k, ff = blk.experts_used, blk.expert_ff
    logits = b.add(F32 * blk.n_expert * T, x)
    probs = b.add(F32 * blk.n_expert * T, logits)
    chosen = b.add(I32 * blk.n_expert * T, probs)
    weights = b.add(F32 * k * T, probs, b.view(chosen))
    up = b.add(F32 * ff * k * T, x, chosen)
    gate = b.add(F32 * ff * k * T, x, chosen)
    down = b.add(F32 * E * k * T, b.add(F32 * ff * k * T, gate, up), chosen)
    down = b.add(F32 * E * k * T, down, weights, inplace=True)
    parts = [b.view(down) for _ in range(k)]
    out = b.add(F32 * E * T, *parts[:2])
    for part in parts[2:]:
        out = b.add(F32 * E * T, out, part, inplace=True)
    if blk.shared_ff:
        sh_up = b.add(F32 * blk.shared_ff * T, x)
        sh_gate = b.add(F32 * blk.shared_ff * T, x)
        shared = b.add(F32 * E * T, b.add(F32 * blk.shared_ff * T, sh_gate, sh_up))
        out = b.add(F32 * E * T, out, shared, inplace=True)
    return out


