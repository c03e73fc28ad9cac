"""`load_model(path)`: the one call that turns a GGUF file (or any shard of one) into a ModelSpec."""

from __future__ import annotations

import logging
from pathlib import Path

from gguf_budget.core.errors import GGUFFormatError
from gguf_budget.core.model.facts import build_model_spec
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.gguf.header import GGUFHeader
from gguf_budget.core.gguf.shards import read_shards

log = logging.getLogger(__name__)


def load_model(path: str | Path) -> ModelSpec:
    """Read the header(s) only. Raises `ModelLoadError` (one line) on any bad input."""
    return model_of(read_shards(path), path)


def model_of(headers: list[GGUFHeader], path: str | Path) -> ModelSpec:
    """The model the shards' headers describe (read from `path`, or kept). Raises `ModelLoadError` (one line)."""
    try:
        spec = build_model_spec(headers)
    except GGUFFormatError as e:
        raise (e if e.path else e.in_file(str(path))) from None
    log.debug("loaded %s: %s, %d layers, from %d file(s)", path, spec.architecture, spec.n_layer, len(headers))
    return spec
