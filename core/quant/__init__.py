"""Every llama.cpp quantization of a model, priced from its tensor directory (no download)."""

from gguf_budget.core.errors import QuantMixError
from gguf_budget.core.quant.file_types import FILE_TYPES, QuantFileType, QuantName, find_file_type
from gguf_budget.core.quant.mix import QuantMix, TensorChoice, quant_mix

__all__ = ["FILE_TYPES", "QuantFileType", "QuantMix", "QuantMixError", "QuantName", "TensorChoice",
           "find_file_type", "quant_mix"]
