"""The file types llama.cpp's quantizer writes, in the order the quant ladder lists them.

Rule 1: each row is a `llama_ftype` (gguf-py `LlamaFileType`), the ggml type its tensors take
        by default (llama.cpp `llama_ftype_get_default_type`, src/llama-quant.cpp) and how
        many bits that default spends per weight; the mix rules then move single tensors
        off the default.
Rule 2: the table runs from the highest precision to the lowest, so "the highest-precision
        type that fits" is the first row that fits.
Rule 3: names are llama.cpp's (`Q4_K_M`, not `q4_k_m`); `find_file_type` accepts any case.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.vocab import TextEnum
from gguf_budget.core.gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType as T, LlamaFileType

from gguf_budget.core.errors import RequestError


class QuantName(TextEnum):
    """The file types the ladder prices (llama.cpp's names)."""

    BF16 = "BF16"
    F16 = "F16"
    Q8_0 = "Q8_0"
    Q6_K = "Q6_K"
    Q5_K_M = "Q5_K_M"
    Q5_K_S = "Q5_K_S"
    Q4_K_M = "Q4_K_M"
    Q4_K_S = "Q4_K_S"
    IQ4_NL = "IQ4_NL"
    IQ4_XS = "IQ4_XS"
    Q4_0 = "Q4_0"
    MXFP4_MOE = "MXFP4_MOE"
    Q3_K_L = "Q3_K_L"
    Q3_K_M = "Q3_K_M"
    IQ3_M = "IQ3_M"
    Q3_K_S = "Q3_K_S"
    IQ3_XS = "IQ3_XS"
    IQ3_XXS = "IQ3_XXS"
    Q2_K = "Q2_K"
    IQ2_M = "IQ2_M"
    IQ2_XXS = "IQ2_XXS"


@dataclass(frozen=True)
class QuantFileType:
    """One row of the ladder: the file type, its `general.file_type` number and its default tensor type."""

    name: QuantName
    llama_ftype: LlamaFileType
    default: T
    moe_only: bool = False

    @property
    def default_bits(self) -> float:
        block, size = GGML_QUANT_SIZES[self.default]
        return size * 8 / block

    @property
    def quantized(self) -> bool:
        """F16/BF16 copy tensors as they are; only quantized defaults consult the mix rules."""
        return self.default not in (T.F32, T.F16, T.BF16)


N = QuantName
F = LlamaFileType
FILE_TYPES: tuple[QuantFileType, ...] = (
    QuantFileType(N.BF16, F.MOSTLY_BF16, T.BF16),
    QuantFileType(N.F16, F.MOSTLY_F16, T.F16),
    QuantFileType(N.Q8_0, F.MOSTLY_Q8_0, T.Q8_0),
    QuantFileType(N.Q6_K, F.MOSTLY_Q6_K, T.Q6_K),
    QuantFileType(N.Q5_K_M, F.MOSTLY_Q5_K_M, T.Q5_K),
    QuantFileType(N.Q5_K_S, F.MOSTLY_Q5_K_S, T.Q5_K),
    QuantFileType(N.Q4_K_M, F.MOSTLY_Q4_K_M, T.Q4_K),
    QuantFileType(N.Q4_K_S, F.MOSTLY_Q4_K_S, T.Q4_K),
    QuantFileType(N.IQ4_NL, F.MOSTLY_IQ4_NL, T.IQ4_NL),
    QuantFileType(N.IQ4_XS, F.MOSTLY_IQ4_XS, T.IQ4_XS),
    QuantFileType(N.Q4_0, F.MOSTLY_Q4_0, T.Q4_0),
    QuantFileType(N.MXFP4_MOE, F.MOSTLY_MXFP4_MOE, T.MXFP4, moe_only=True),
    QuantFileType(N.Q3_K_L, F.MOSTLY_Q3_K_L, T.Q3_K),
    QuantFileType(N.Q3_K_M, F.MOSTLY_Q3_K_M, T.Q3_K),
    QuantFileType(N.IQ3_M, F.MOSTLY_IQ3_M, T.IQ3_S),
    QuantFileType(N.Q3_K_S, F.MOSTLY_Q3_K_S, T.Q3_K),
    QuantFileType(N.IQ3_XS, F.MOSTLY_IQ3_XS, T.IQ3_S),
    QuantFileType(N.IQ3_XXS, F.MOSTLY_IQ3_XXS, T.IQ3_XXS),
    QuantFileType(N.Q2_K, F.MOSTLY_Q2_K, T.Q2_K),
    QuantFileType(N.IQ2_M, F.MOSTLY_IQ2_M, T.IQ2_S),
    QuantFileType(N.IQ2_XXS, F.MOSTLY_IQ2_XXS, T.IQ2_XXS),
)
BY_NAME = {f.name: f for f in FILE_TYPES}


def find_file_type(name: str) -> QuantFileType:
    """The row called `name` (any case); a RequestError listing the names otherwise."""
    for row in FILE_TYPES:
        if row.name.value == name.strip().upper():
            return row
    raise RequestError(f"no file type {name!r}; choose one of: {', '.join(f.name.value for f in FILE_TYPES)}")
