"""The computing core of GGUF Budget Explorer: no Qt, no I/O beyond GGUF headers and the hardware probe."""

from .errors import GGUFFormatError, ModelLoadError
from .model_loader import load_model
from .model_spec import GlobalBytes, LayerAttention, ModelSpec, ModelTensor
from .version import __version__

__all__ = [
    "GGUFFormatError",
    "GlobalBytes",
    "LayerAttention",
    "ModelLoadError",
    "ModelSpec",
    "ModelTensor",
    "__version__",
    "load_model",
]
