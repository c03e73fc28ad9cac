"""A vision projector (`--mmproj FILE`): what it is, where llama-server puts it, what one image costs.

Read in `core.llama_cpp.LLAMA_CPP_SOURCE`, tools/mtmd:

Rule 1: a projector is a GGUF whose architecture is `clip` with a vision encoder
        (clip.cpp `clip_model_loader`: `clip.has_vision_encoder`); a text model, or an audio-only
        projector, is refused in one line. Its output feeds the text model, so its width must be
        the model's embedding width (mtmd.cpp `mtmd_context`: "mismatch between text model … and
        mmproj"); for the LLaVA MLP that width is `mm.2.weight`'s rows (clip.cpp
        `clip_n_mmproj_embd`), else `clip.vision.projection_dim`.
Rule 2: its weights are read into one buffer on the first GPU llama.cpp finds (clip.cpp
        `clip_ctx`: `ggml_backend_init_by_type(GPU)`, else an integrated GPU), or in host RAM with
        `--no-mmproj-offload` or no GPU; its compute buffer sits on the same device. Both are
        anonymous memory (read, not mapped).
Rule 3: the compute buffer is reserved at warm-up for one image of the projector's own size
        (`clip.vision.image_size`, `get_dummy_batch`) and grows when a larger image needs more:
        priced by replaying the ViT graph for the image (`projector_graph`).
Rule 4: fixed-size projectors (the LLaVA MLP family, LDP, Gemma 3, Idefics 3, InternVL, Llama 4)
        resize every image to `image_size` square, so the image size changes nothing; their token
        count per image is clip.cpp `clip_n_output_tokens`: (size / patch)² patches, divided by 4
        for LDP, by the scale factor² for the pooled ones. Dynamic-resolution projectors (Qwen-VL
        family: merge 2 × 2) take the image at its size, in whole patches. Other types are priced
        as the MLP at their patch count — approximate, and said so.
Rule 5: an image's tokens take cells of the slot's context like text does (mtmd chunks are
        decoded into the KV cache), so a context smaller than one image cannot hold it.
Rule 6: the header's counts are checked against its tensor directory, as a text model's are
        (`model.fact_relations`): every block below `clip.vision.block_count` has its attention
        output (clip.cpp `load_tensors`: `attn_out` is required, "unable to find tensor"); the
        embedding width is that tensor's rows and the patch embedding's channels, and the head
        count divides it (clip.cpp: `d_head = n_embd / n_head`); the FFN width is the FFN's own
        tensor (the one `ne[0] == n_embd`, as clip.cpp's legacy up/down swap finds it), or, without
        one, a width some tensor has. A count the weights cannot hold is refused in one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from gguf_budget.core.errors import GGUFFormatError, ModelLoadError, RequestError
from gguf_budget.core.fit.server.image_size import MAX_IMAGE_SIDE
from gguf_budget.core.fit.buffers.projector_graph import VitShape, projector_compute_bytes
from gguf_budget.core.gguf.constants import Keys
from gguf_budget.core.gguf.header import GGUFHeader, TensorInfo, read_header
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.safe_text import safe_text

CLIP_ARCH = "clip"
MLP_TYPES = frozenset({"mlp", "mlp_norm", "janus_pro", "phi4"})
QUARTER_TYPES = frozenset({"ldp", "ldpv2", "glm_edge"})
POOLED_TYPES = frozenset({"gemma3", "gemma4v", "idefics3", "internvl", "llama4", "nemotron_v2_vl"})
MERGED_TYPES = frozenset({"qwen2vl_merger", "qwen2.5vl_merger", "qwen3vl_merger", "glm4v"})
EXACT_TYPES = frozenset({"mlp"})


@dataclass(frozen=True, kw_only=True)
class ProjectorSpec:
    """What a projector's header says, as far as memory goes."""

    path: str
    projector_type: str
    n_embd: int
    n_ff: int
    n_head: int
    n_layer: int
    image_size: int
    patch_size: int
    out_embd: int | None
    mm_hidden: int
    class_embd: bool
    scale_factor: int
    weight_bytes: int
    file_bytes: int

    @property
    def approximate(self) -> bool:
        """Rule 4: whether the graph and token count are this type's own or the MLP's stand-ins."""
        return self.projector_type not in EXACT_TYPES

    @property
    def fixed_size(self) -> bool:
        return self.projector_type not in MERGED_TYPES

    def image_side(self, width: int | None, height: int | None) -> tuple[int, int]:
        """The image the encoder sees (Rule 4): the projector's square, or the image in whole patches."""
        if self.fixed_size or width is None or height is None:
            return self.image_size, self.image_size
        p = self.patch_size * 2
        return max(width // p, 1) * p, max(height // p, 1) * p

    def image_tokens(self, width: int | None = None, height: int | None = None) -> int:
        """Rule 4: the context cells one image takes."""
        w, h = self.image_side(width, height)
        patches = (w // self.patch_size) * (h // self.patch_size)
        if self.projector_type in QUARTER_TYPES:
            return patches // 4
        if self.projector_type in POOLED_TYPES:
            return patches // max(self.scale_factor, 1) ** 2
        if self.projector_type in MERGED_TYPES:
            return patches // 4
        return patches

    def compute_bytes(self, width: int | None = None, height: int | None = None, flash_attn: bool = True) -> int:
        """Rule 3: the compute buffer for one image of that size."""
        w, h = self.image_side(width, height)
        return projector_compute_bytes(VitShape(
            n_embd=self.n_embd, n_ff=self.n_ff, n_head=max(self.n_head, 1), blocks=max(self.n_layer - 1, 0),
            patch_size=self.patch_size, width=w, height=h, class_embd=self.class_embd, mm_hidden=self.mm_hidden,
            out_embd=self.out_embd or self.mm_hidden, flash_attn=flash_attn))


def _u32(h: GGUFHeader, key: str, default: int | None = None) -> int:
    v = h.metadata.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        if v is None:
            raise GGUFFormatError(f"a vision projector needs {key}, which this file lacks", None, h.path)
        raise GGUFFormatError(f"{key} is not a count", h.key_offsets.get(key), h.path)
    return v


def read_projector(path: str) -> ProjectorSpec:
    """Rule 1: the projector at `path`, or a one-line `ModelLoadError` saying why it is not one."""
    h = read_header(path)
    arch = h.metadata.get(Keys.General.ARCHITECTURE)
    if arch != CLIP_ARCH:
        what = f"architecture {safe_text(str(arch), 40)!r}" if isinstance(arch, str) else "no architecture"
        raise ModelLoadError(f"{path} is not a vision projector ({what}; an mmproj file's is 'clip')")
    if h.metadata.get(Keys.Clip.HAS_VISION_ENCODER) is not True:
        raise ModelLoadError(f"{path} is a projector without a vision encoder (audio only?): it cannot read images")
    kind = h.metadata.get(Keys.Clip.PROJECTOR_TYPE, h.metadata.get(Keys.ClipVision.PROJECTOR_TYPE))
    if not isinstance(kind, str):
        raise ModelLoadError(f"{path} does not say its projector type ({Keys.Clip.PROJECTOR_TYPE})")
    tensors = {t.name: t for t in h.tensors}
    image_size = _u32(h, Keys.ClipVision.IMAGE_SIZE)
    patch = _u32(h, Keys.ClipVision.PATCH_SIZE)
    if not 0 < patch <= image_size <= MAX_IMAGE_SIDE:
        raise ModelLoadError(f"{path}: image size {image_size} and patch size {patch} do not make a projector")
    n_layer, n_embd, n_head, n_ff = _checked_counts(h, tensors)
    mm0, mm2 = tensors.get("mm.0.weight"), tensors.get("mm.2.weight")
    out = mm2.shape[1] if mm2 is not None and len(mm2.shape) >= 2 else h.metadata.get(Keys.ClipVision.PROJECTION_DIM)
    return ProjectorSpec(
        path=path, projector_type=safe_text(kind, 40), n_embd=n_embd, n_ff=n_ff, n_head=n_head, n_layer=n_layer,
        image_size=image_size, patch_size=patch, out_embd=out if isinstance(out, int) and not isinstance(out, bool) else None,
        mm_hidden=mm0.shape[1] if mm0 is not None and len(mm0.shape) >= 2 else n_embd,
        class_embd="v.class_embd" in tensors,
        scale_factor=_u32(h, Keys.ClipVision.Projector.SCALE_FACTOR, 1) or 1,
        weight_bytes=sum(t.nbytes for t in h.tensors), file_bytes=h.file_bytes,
    )


def _checked_counts(h: GGUFHeader, tensors: Mapping[str, TensorInfo]) -> tuple[int, int, int, int]:
    """Rule 6: (blocks, embedding width, heads, FFN width), each as the tensor directory bears it out."""
    n_layer = _u32(h, Keys.ClipVision.BLOCK_COUNT)
    missing = next((il for il in range(n_layer) if f"v.blk.{il}.attn_out.weight" not in tensors), None)
    if missing is not None:
        raise GGUFFormatError(f"{Keys.ClipVision.BLOCK_COUNT} is {n_layer} but block {missing} has no tensors",
                              h.key_offsets.get(Keys.ClipVision.BLOCK_COUNT), h.path)
    n_embd = _u32(h, Keys.ClipVision.EMBEDDING_LENGTH)
    widths = [t.shape[1] for t in (tensors.get("v.blk.0.attn_out.weight"),) if t is not None and len(t.shape) >= 2]
    widths += [t.shape[3] for t in (tensors.get("v.patch_embd.weight"),) if t is not None and len(t.shape) == 4]
    if any(w != n_embd for w in widths):
        raise GGUFFormatError(f"{Keys.ClipVision.EMBEDDING_LENGTH} is {n_embd} but the tensors are {widths[0]} wide",
                              h.key_offsets.get(Keys.ClipVision.EMBEDDING_LENGTH), h.path)
    n_head = _u32(h, Keys.ClipVision.Attention.HEAD_COUNT)
    if n_embd and (not 0 < n_head <= n_embd or n_embd % n_head):
        raise GGUFFormatError(f"{Keys.ClipVision.Attention.HEAD_COUNT} {n_head} does not divide the width {n_embd}",
                              h.key_offsets.get(Keys.ClipVision.Attention.HEAD_COUNT), h.path)
    return n_layer, n_embd, n_head, _ffn_width(h, tensors, n_embd)


def _ffn_width(h: GGUFHeader, tensors: Mapping[str, TensorInfo], n_embd: int) -> int:
    """Rule 6: the FFN's width as its first block's tensors have it, else the header's if some tensor is that wide."""
    for name in ("v.blk.0.ffn_up.weight", "v.blk.0.ffn_down.weight"):
        t = tensors.get(name)
        if t is not None and len(t.shape) >= 2 and t.shape[0] == n_embd:
            return t.shape[1]
    n_ff = _u32(h, Keys.ClipVision.FEED_FORWARD_LENGTH)
    if n_ff > max((d for t in h.tensors for d in t.shape), default=0):
        raise GGUFFormatError(f"{Keys.ClipVision.FEED_FORWARD_LENGTH} is {n_ff}, wider than any tensor",
                              h.key_offsets.get(Keys.ClipVision.FEED_FORWARD_LENGTH), h.path)
    return n_ff


def check_projector(model: ModelSpec, projector: ProjectorSpec) -> None:
    """Rule 1's width check, as one line (RequestError)."""
    if projector.out_embd is not None and model.n_embd and projector.out_embd != model.n_embd:
        raise RequestError(f"{projector.path} feeds a model {projector.out_embd} wide; {model.path} is {model.n_embd} "
                           "wide (llama.cpp refuses the pair: a projector belongs to its own model)")
