"""How many of a model's blocks are of each kind (full attention, sliding window, recurrent, unknown), kept per model.

Rule 1: a model's layers never change, so their kinds are counted once per model object (`per_model`): the fit
        asks them of every load it judges (the KV estimate, the unknown facts, the KV cells' metadata, the
        checkpoints), and each ask walked every block.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from types import MappingProxyType

from gguf_budget.core.model.per_model_cache import per_model
from gguf_budget.core.model.spec import LayerKind, ModelSpec


@per_model(maxsize=16)
def kind_counts(model: ModelSpec) -> Mapping[LayerKind, int]:
    """Rule 1: blocks by kind; a kind no block has counts 0."""
    counts = Counter(layer.kind for layer in model.layers)
    return MappingProxyType({kind: counts.get(kind, 0) for kind in LayerKind})
