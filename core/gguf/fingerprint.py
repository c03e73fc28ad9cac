"""A model's identity for remembering things about it: a hash of its header bytes, not its path.

Rule 1: the fingerprint is SHA-256 over every shard's bytes before its data section (magic,
        metadata, tensor directory, alignment padding), in shard order. The same model
        copied, renamed or cut to a header-only skeleton keeps its fingerprint; a
        re-quantized or edited one gets a new one.
Rule 2: only the headers are read (`read_shards` bounds them), never the tensor data.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from gguf_budget.core.errors import ModelLoadError
from gguf_budget.core.gguf.shards import read_shards
from gguf_budget.core.regular_file import open_regular

_CHUNK = 1 << 20


def header_fingerprint(path: str | Path) -> str:
    """Hex SHA-256 of the model's header bytes (Rule 1); `ModelLoadError` when unreadable."""
    digest = hashlib.sha256()
    for header in read_shards(path):
        try:
            with open_regular(header.path) as f:  # a file swapped for a FIFO since its header was read never blocks
                left = header.data_offset
                while left > 0:
                    chunk = f.read(min(_CHUNK, left))
                    if not chunk:
                        break
                    digest.update(chunk)
                    left -= len(chunk)
        except OSError as e:
            raise ModelLoadError(f"{header.path}: cannot read the header: {e.strerror or e}") from None
    return digest.hexdigest()
