"""What a file's quantization is called: `general.file_type`, or, when a file lacks it, its tensors' types.

Rule 1: `general.file_type` names it when present (llama.cpp's LLAMA_FTYPE names, MOSTLY_ dropped).
Rule 2: without it, the type holding the most bytes among the blocks' weight matrices (2-D and
        up; norms and biases are F32 in every file type) names it. llama.cpp's K-quant "M" mixes
        keep some attn_v/ffn_down tensors at Q6_K (llama-quant.cpp), so a dominant type beside
        Q6_K reads as its M mix (K_MIXES). The name says "(inferred)", so no one takes it for
        what the file declares.
Rule 3: no weight matrix at all leaves the type unknown (None).
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from gguf_budget.core.gguf.constants import GGMLQuantizationType, LlamaFileType

from gguf_budget.core.model.spec import ModelTensor

Q = GGMLQuantizationType
K_MIXES: dict[tuple[GGMLQuantizationType, GGMLQuantizationType], str] = {
    (Q.Q3_K, Q.Q6_K): "Q3_K_M",
    (Q.Q4_K, Q.Q6_K): "Q4_K_M",
    (Q.Q5_K, Q.Q6_K): "Q5_K_M",
}
INFERRED = "inferred"


def declared_file_type_name(file_type: int | None) -> str | None:
    """Rule 1."""
    if file_type is None:
        return None
    try:
        return LlamaFileType(file_type).name.removeprefix("MOSTLY_")
    except ValueError:
        return f"unknown ({file_type})"


def inferred_file_type_name(tensors: Iterable[ModelTensor]) -> str | None:
    """Rules 2–3: e.g. 'Q4_K_M (inferred)' for blocks of Q4_K with some Q6_K."""
    bytes_by_type: Counter[GGMLQuantizationType] = Counter()
    for t in tensors:
        if t.layer is not None and len(t.shape) >= 2:
            bytes_by_type[t.ggml_type] += t.nbytes
    if not bytes_by_type:
        return None
    dominant = bytes_by_type.most_common(1)[0][0]
    name = next((mix for (main, extra), mix in K_MIXES.items() if main == dominant and extra in bytes_by_type),
                dominant.name)
    return f"{name} ({INFERRED})"


def file_type_name(file_type: int | None, tensors: Iterable[ModelTensor]) -> str | None:
    """The declared name (Rule 1), else the inferred one (Rule 2)."""
    return declared_file_type_name(file_type) if file_type is not None else inferred_file_type_name(tensors)
