"""ModelSpec: what a GGUF file says about a model, as facts the planners can price.

Rule 1: a fact the file does not give is `None` and its name is listed in `unknown` — never a
        silent 0. Byte counts are exact: each tensor's bytes come from `GGML_QUANT_SIZES`.
Rule 2: the records are deeply frozen (`core.frozen`): mappings are `FrozenMap`s, sequences
        tuples, whatever a caller passed in, so a spec can be neither edited nor left
        inconsistent, and `hash(spec)` works.
Rule 3: a spec checks itself on construction: one entry per layer in `layers`, `layer_bytes`
        and `layer_role_bytes`; no negative byte count; each layer's bytes are the sum of its
        roles' bytes. A violation is a bug in whoever built it (ValueError).
Rule 4: a spec's hash is computed once and kept (an 80-layer model's 724 tensors took 0.56 ms to hash,
        and the caches keyed by the model — the compute buffer, the CPU work — hashed it at every
        slider tick); the kept hash is never pickled, as a string's hash differs between processes. Its routed
        experts' bytes are summed once too and kept the same way (every MoE strategy of every priced load asked
        them, a walk of every block's roles each time).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping

from gguf_budget.core.gguf.constants import GGMLQuantizationType

from gguf_budget.core.errors import RequestError
from gguf_budget.core.frozen import FrozenMap
from gguf_budget.core.model.roles import TensorRole
from gguf_budget.core.vocab import TextEnum


@dataclass(frozen=True, kw_only=True)
class ModelTensor:
    """One tensor of the directory, with where it lives and what it is for."""

    name: str
    shape: tuple[int, ...]
    ggml_type: GGMLQuantizationType
    nbytes: int
    n_elements: int
    shard: int
    role: TensorRole
    layer: int | None

    def __post_init__(self) -> None:
        object.__setattr__(self, "role", TensorRole(self.role))
        object.__setattr__(self, "shape", tuple(self.shape))
        _not_negative(f"tensor {self.name!r}", {"nbytes": self.nbytes, "n_elements": self.n_elements})


@dataclass(frozen=True)
class GlobalBytes:
    """Bytes of the tensors outside the blocks; `output` is None when tied to the embeddings."""

    token_embd: int
    output: int | None
    output_norm: int
    position_embd: int | None
    other: int

    def __post_init__(self) -> None:
        _not_negative("GlobalBytes", {f.name: getattr(self, f.name) or 0 for f in fields(self)})

    def total(self) -> int:
        return self.token_embd + (self.output or 0) + self.output_norm + (self.position_embd or 0) + self.other


class LayerKind(TextEnum):
    """How a block keeps its context; the value is the word JSON and the views show."""

    FULL = "full"
    SWA = "swa"
    """Sliding window: caps at `window` cells."""
    RECURRENT = "recurrent"
    """A fixed state, no per-token cache."""
    UNKNOWN = "unknown"
    """The metadata needed to price the cache is missing."""


@dataclass(frozen=True)
class LayerAttention:
    """What one block keeps per token of context.

    `n_head_kv · (k_dim + v_dim)` elements are cached per token of a `FULL` or `SWA` layer;
    for MLA (a file with the MLA lengths, `model_facts` Rule 6) that is the one latent row, K only.
    """

    kind: LayerKind
    n_head: int | None
    n_head_kv: int | None
    k_dim: int | None
    v_dim: int | None
    window: int | None = None

    def __post_init__(self) -> None:
        try:
            kind = LayerKind(self.kind)  # a plain "swa" becomes the word
        except ValueError:
            raise RequestError(f"LayerAttention.kind {self.kind!r} is not one of {', '.join(LayerKind)}") from None
        object.__setattr__(self, "kind", kind)


@dataclass(frozen=True)
class SSMSizes:
    """State-space block sizes (`{arch}.ssm.*`, llama.cpp `hparams.ssm_*`); a size the file omits is None."""

    d_conv: int | None
    d_inner: int | None
    d_state: int | None
    dt_rank: int | None
    n_group: int | None


_HASH = "_kept_hash"
_EXPERTS = "_kept_routed_expert_bytes"


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """Facts and the tensor-role inventory of one model (all shards merged)."""

    path: str
    shards: tuple[str, ...]
    gguf_version: int
    architecture: str
    name: str | None
    file_type: int | None
    file_type_name: str | None
    file_bytes: int
    complete_file_bytes: int
    tensor_bytes: int
    header_only: bool
    incomplete: bool
    n_params: int
    n_layer: int
    n_embd: int | None
    n_vocab: int | None
    context_length: int | None
    n_ff: tuple[int, ...] | None
    n_head: tuple[int, ...] | None
    n_head_kv: tuple[int, ...] | None
    head_dim_k: int | None
    head_dim_v: int | None
    sliding_window: int | None
    layers: tuple[LayerAttention, ...]
    recurrent_state_bytes: int | None
    expert_count: int | None
    expert_used_count: int | None
    expert_shared_count: int | None
    kv_lora_rank: int | None
    q_lora_rank: int | None
    rope_dim: int | None
    ssm: SSMSizes | None
    tied_embeddings: bool
    layer_bytes: tuple[int, ...]
    layer_role_bytes: tuple[Mapping[TensorRole, int], ...]
    global_bytes: GlobalBytes
    tensors: tuple[ModelTensor, ...]
    metadata: Mapping[str, Any]
    unknown: tuple[str, ...]
    priced_type: str | None = None
    """The quantization this model is priced as, not downloaded (`quant.priced`); `path` is then the file it was
    priced from, so no command may load `path` for it. None for a model read from its own file."""

    def __post_init__(self) -> None:
        """Rules 2 and 3, whoever builds the spec (the loader, a test, `dataclasses.replace`)."""
        for f in fields(self):
            if isinstance(getattr(self, f.name), list):
                object.__setattr__(self, f.name, tuple(getattr(self, f.name)))
        object.__setattr__(self, "metadata", FrozenMap(self.metadata))
        object.__setattr__(self, "layer_role_bytes", tuple(FrozenMap(r) for r in self.layer_role_bytes))
        self._check()

    def __hash__(self) -> int:
        """Rule 4: the hash of the fields `__eq__` compares, once."""
        cached: int | None = self.__dict__.get(_HASH)
        if cached is None:
            cached = hash(tuple(getattr(self, f.name) for f in fields(self)))
            object.__setattr__(self, _HASH, cached)
        return cached

    def __getstate__(self) -> dict[str, Any]:
        """Rule 4: a pickle carries the fields, not this process's hash."""
        return {k: v for k, v in self.__dict__.items() if k not in (_HASH, _EXPERTS)}

    def _check(self) -> None:
        for name in ("layers", "layer_bytes", "layer_role_bytes"):
            if len(getattr(self, name)) != self.n_layer:
                raise RequestError(f"ModelSpec.{name} has {len(getattr(self, name))} entries for {self.n_layer} layers")
        _not_negative("ModelSpec", {
            "file_bytes": self.file_bytes, "complete_file_bytes": self.complete_file_bytes,
            "tensor_bytes": self.tensor_bytes, "recurrent_state_bytes": self.recurrent_state_bytes or 0,
            **{f"layer_bytes[{il}]": b for il, b in enumerate(self.layer_bytes)},
            **{f"layer_role_bytes[{il}][{role}]": b for il, r in enumerate(self.layer_role_bytes) for role, b in r.items()},
        })
        for il, (total, roles) in enumerate(zip(self.layer_bytes, self.layer_role_bytes, strict=True)):
            if total != sum(roles.values()):
                raise RequestError(f"ModelSpec.layer_bytes[{il}] is {total} but its roles sum to {sum(roles.values())}")

    def count_layers(self, kind: LayerKind) -> int:
        """How many blocks are of `kind` (sliding-window, recurrent, …)."""
        return sum(1 for layer in self.layers if layer.kind is kind)

    @property
    def n_tensors(self) -> int:
        return len(self.tensors)

    @property
    def n_ff_max(self) -> int | None:
        return max(self.n_ff, default=None) if self.n_ff else None

    @property
    def n_head_max(self) -> int | None:
        return max(self.n_head, default=None) if self.n_head else None

    @property
    def n_head_kv_max(self) -> int | None:
        return max(self.n_head_kv, default=None) if self.n_head_kv else None

    @property
    def largest_layer_bytes(self) -> int:
        return max(self.layer_bytes, default=0)

    @property
    def output_table_bytes(self) -> int:
        """The LM head's table: `output`, or the embedding table when tied."""
        out = self.global_bytes.output
        return self.global_bytes.token_embd if out is None else out

    @property
    def token_embd_row_bytes(self) -> int:
        rows = self.n_vocab or 0
        return self.global_bytes.token_embd // rows if rows else self.global_bytes.token_embd

    @property
    def is_moe(self) -> bool:
        return bool(self.expert_count)

    @property
    def routed_expert_bytes(self) -> int:
        """Rule 4: summed once and kept."""
        kept: int | None = self.__dict__.get(_EXPERTS)
        if kept is None:
            kept = sum(r.get(TensorRole.EXPERTS, 0) for r in self.layer_role_bytes)
            object.__setattr__(self, _EXPERTS, kept)
        return kept


def _not_negative(record: str, counts: Mapping[str, int]) -> None:
    negative = [f"{name} {n}" for name, n in counts.items() if n < 0]
    if negative:
        raise RequestError(f"{record} has negative byte counts: {', '.join(negative)}")
