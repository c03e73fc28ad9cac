"""The graph a vision projector's compute buffer is reserved for: one image through the ViT, as a node list.

Read in `core.llama_cpp.LLAMA_CPP_SOURCE`, tools/mtmd (clip.cpp `clip_graph::build_inp`,
`build_norm`, `build_attn`, `build_ffn`; models/llava.cpp `clip_graph_llava::build`); ggml's
allocator (`graph_alloc`) replays it.

Rule 1: inputs: the image (F32, width · height · 3), the patch positions (I32) and, for the LLaVA
        projector, the patch ids it keeps (I32).
Rule 2: patch embedding (ggml.c `ggml_conv_2d`): im2col in F16 (3 · P² per patch), the matrix
        product (F32, patches · E), a contiguous copy, a transposed copy, the bias added in place;
        the class embedding concatenated (a new tensor), position rows gathered and added; the
        pre-norm (norm, then scale and shift in place).
Rule 3: a block: norm; Q, K, V projections (biases in place); with flash attention (which the
        warm-up turns on where the backend has it, as the CPU does) K and V cast to F16 and one
        attention output, else KQ [positions², heads], soft-max in place, KQV and a copy; output
        projection; residual; norm; FFN up, GELU in place, down; residual. Norms, adds, scales
        and activations work in place (ggml-alloc.c `ggml_op_can_inplace`); a norm does not.
Rule 4: LLaVA runs every block but the last (`max_feature_layer` = n_layer − 1), then gathers the
        patch rows and applies its MLP (mm.0, GELU, mm.2).
Rule 5: projector types whose graphs differ (merges, pooling, windowed attention) are priced with
        the same blocks at their patch count — an approximation, said so by `ProjectorSpec.approximate`.
Rule 6: every block has one shape, and the buffer's high-water mark repeats from the first block on
        (checked: 1 to 8 blocks of a 64-, a 1024- and a 1152-wide ViT, with flash attention and
        without, reserve the same), so at most `REPLAYED_BLOCKS` are replayed, as the text model's
        graph replays each block shape (`compute_graph` Rule 5): a header claiming 10^6 blocks
        once built 40 million nodes (3.9 GB).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from gguf_budget.core.fit.buffers.compute_graph import F16, F32, I32
from gguf_budget.core.fit.buffers.graph_alloc import Node, buffer_size

REPLAYED_BLOCKS = 2


@dataclass(frozen=True, kw_only=True)
class VitShape:
    """What sizes the projector's graph for one image: widths, heads, blocks, the image's patches."""

    n_embd: int
    n_ff: int
    n_head: int
    blocks: int
    patch_size: int
    width: int
    height: int
    class_embd: bool
    mm_hidden: int
    out_embd: int
    flash_attn: bool = True

    @property
    def n_patches(self) -> int:
        return (self.width // self.patch_size) * (self.height // self.patch_size)

    @property
    def n_pos(self) -> int:
        return self.n_patches + (1 if self.class_embd else 0)


class _Nodes:
    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.roots: dict[str, str] = {}

    def add(self, nbytes: int, *srcs: str, inplace: bool = False, view_of: str | None = None,
            is_input: bool = False) -> str:
        name = f"p{len(self.nodes)}"
        self.nodes.append(Node(name=name, nbytes=nbytes, srcs=tuple(srcs), inplace=inplace, view_of=view_of, is_input=is_input))
        return name

    def view(self, of: str) -> str:
        """A view (reshape, permute, transpose) of `of`: it points at the tensor that owns the memory, as ggml's `view_src`."""
        root = self.roots.get(of, of)
        name = self.add(0, of, view_of=root)
        self.roots[name] = root
        return name

    def norm(self, nbytes: int, src: str) -> str:
        return self.add(nbytes, self.add(nbytes, self.add(nbytes, src), inplace=True), inplace=True)


def projector_nodes(s: VitShape) -> list[Node]:
    """Rules 1–4 and 6 for one image."""
    b = _Nodes()
    N, E, pos = s.n_patches, s.n_embd, s.n_pos
    raw = b.add(F32 * s.width * s.height * 3, is_input=True)
    positions = b.add(I32 * pos, is_input=True)
    patches = b.add(I32 * N, is_input=True)
    im2col = b.add(F16 * 3 * s.patch_size**2 * N, raw)
    x = b.add(F32 * N * E, b.view(b.view(b.add(F32 * N * E, im2col))))
    x = b.add(F32 * E * N, b.view(b.view(x)))
    x = b.add(F32 * E * N, x, inplace=True)
    if s.class_embd:
        x = b.add(F32 * E * pos, x)
    x = b.add(F32 * E * pos, x, b.add(F32 * E * pos, positions), inplace=True)
    x = b.norm(F32 * E * pos, x)
    for _ in range(min(s.blocks, REPLAYED_BLOCKS)):
        x = _block(b, s, x)
    x = b.add(F32 * E * N, b.view(x), patches)
    x = b.add(F32 * s.mm_hidden * N, x)
    x = b.add(F32 * s.mm_hidden * N, b.add(F32 * s.mm_hidden * N, x, inplace=True), inplace=True)
    b.add(F32 * s.out_embd * N, b.add(F32 * s.out_embd * N, x), inplace=True)
    return b.nodes


def _block(b: _Nodes, s: VitShape, resid: str) -> str:
    E, F, pos = s.n_embd, s.n_ff, s.n_pos
    row = F32 * E * pos
    cur = b.norm(row, resid)
    q, k, v = (b.add(row, b.add(row, cur), inplace=True) for _ in range(3))
    if s.flash_attn:
        k16 = b.add(F16 * E * pos, b.view(b.view(k)))
        v16 = b.add(F16 * E * pos, b.view(b.view(v)))
        attn = b.view(b.add(row, b.view(b.view(q)), k16, v16))
    else:
        vt = b.add(row, b.view(b.view(v)))
        kq = b.add(F32 * pos * pos * s.n_head, b.view(b.view(k)), b.view(b.view(q)))
        kq = b.add(F32 * pos * pos * s.n_head, kq, inplace=True)
        attn = b.add(row, b.view(b.add(row, vt, kq)))
    cur = b.add(row, b.add(row, attn), inplace=True)
    resid = b.add(row, cur, resid, inplace=True)
    cur = b.norm(row, resid)
    up = b.add(F32 * F * pos, b.add(F32 * F * pos, cur), inplace=True)
    up = b.add(F32 * F * pos, up, inplace=True)
    down = b.add(row, b.add(row, up), inplace=True)
    return b.add(row, down, resid, inplace=True)


@lru_cache(maxsize=64)
def projector_compute_bytes(s: VitShape) -> int:
    """The compute buffer ggml reserves for one image of `s` (Rules 1–4); kept, as a ctx search asks it often."""
    return buffer_size(projector_nodes(s))
