"""Which model a remembered budget, ctx and cap belong to (`session` Rule 3): 64 hex digits.

Rule 1: a local file is known by its header fingerprint (`gguf.fingerprint`: the same model
        renamed, moved or cut to a skeleton is the same model; a re-quantized one is another).
        The fingerprint reads the headers, so the window computes it on its loading thread.
Rule 2: a model with no local header to read — a remote one, a priced quantization, a file
        gone since it was read — is known by its name, path and quantization: SHA-256 of them,
        computed without touching the disk.
"""

from __future__ import annotations

import hashlib

from gguf_budget.core.errors import ModelLoadError
from gguf_budget.core.gguf.fingerprint import header_fingerprint
from gguf_budget.core.model.spec import ModelSpec


def spec_key(spec: ModelSpec) -> str:
    """Rule 2."""
    words = ("spec", spec.path, spec.name or "", spec.architecture, str(spec.file_type), str(spec.tensor_bytes))
    return hashlib.sha256("\0".join(words).encode("utf-8", errors="surrogatepass")).hexdigest()


def model_key(spec: ModelSpec) -> str:
    """Rule 1 for a local file that still reads as this model's header, else Rule 2."""
    try:
        return header_fingerprint(spec.path)
    except (ModelLoadError, OSError):
        return spec_key(spec)
