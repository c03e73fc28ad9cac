"""`quant_mix(model, file_type)`: the ggml type and bytes of every tensor, as llama-quantize would write it.

Pure and table-driven: the decisions are the rows of `rules.BRANCHES`; this module only
walks the tensors in the quantizer's order and keeps its counters.

Rule 1: tensors are visited as llama.cpp's loader sorts them (`weight_name_comparer`):
        by block number (globals first), then by name; the counters advance in that order.
Rule 2: a tensor the quantizer may not touch (`categories.allows_quantization`) keeps its
        source type; F16/BF16 files turn every other tensor into that type; quantized file
        types consult the rules, then the fallback (`rules` Rule 5).
Rule 3: bytes come from the shape and `GGML_QUANT_SIZES` only — a quantized source file is
        re-priced from its shapes, never from its bytes.
Rule 4: `imatrix` says whether the publisher used an importance matrix (bartowski, unsloth
        and ggml-org do; the IQ2/IQ3_XXS types require one): it changes a few rows.
"""

from __future__ import annotations

import re
from collections import Counter as Tally
from dataclasses import dataclass

from gguf_budget.core.gguf.constants import GGML_QUANT_SIZES, GGUF_DEFAULT_ALIGNMENT, GGMLQuantizationType as T, Keys

from gguf_budget.core.errors import QuantMixError
from gguf_budget.core.model.spec import ModelSpec, ModelTensor
from gguf_budget.core.quant.categories import ATTN_V_LIKE, Category, allows_quantization, tensor_category
from gguf_budget.core.quant.file_types import QuantFileType
from gguf_budget.core.quant.rules import (
    BRANCHES, FALLBACK, LAST_RESORT, Counter, TensorContext, is_70b,
)

_BLOCK = re.compile(r"^blk\.(\d+)\.")
_LAYER_COUNTERS = {Category.FFN_DOWN: Counter.FFN_DOWN, Category.FFN_GATE: Counter.FFN_GATE,
                   Category.FFN_UP: Counter.FFN_UP}


@dataclass(frozen=True, kw_only=True)
class TensorChoice:
    """One tensor of the quantized file."""

    name: str
    shape: tuple[int, ...]
    source_type: T
    ggml_type: T
    nbytes: int
    n_elements: int
    fallback: bool


@dataclass(frozen=True)
class QuantMix:
    """Every tensor of `file_type` for one model; `file_bytes` adds the source header and alignment."""

    file_type: QuantFileType
    imatrix: bool
    tensors: tuple[TensorChoice, ...]
    header_bytes: int
    alignment: int

    @property
    def tensor_bytes(self) -> int:
        return sum(t.nbytes for t in self.tensors)

    @property
    def n_elements(self) -> int:
        return sum(t.n_elements for t in self.tensors)

    @property
    def bits_per_weight(self) -> float:
        """llama-quantize's BPW: tensor bytes × 8 / elements."""
        return self.tensor_bytes * 8 / self.n_elements if self.n_elements else 0.0

    @property
    def file_bytes(self) -> int:
        return self.header_bytes + sum(_pad(t.nbytes, self.alignment) for t in self.tensors)

    @property
    def type_counts(self) -> dict[str, int]:
        return dict(Tally(t.ggml_type.name for t in self.tensors))

    @property
    def n_fallback(self) -> int:
        return sum(t.fallback for t in self.tensors)

    def type_of(self, name: str) -> T:
        return next(t.ggml_type for t in self.tensors if t.name == name)


def _pad(n: int, alignment: int) -> int:
    return -(-n // alignment) * alignment


def tensor_nbytes(shape: tuple[int, ...], ggml_type: T) -> int:
    """Bytes of a tensor of that shape and type (whole blocks per row)."""
    block, size = GGML_QUANT_SIZES[ggml_type]
    rows = 1
    for d in shape[1:]:
        rows *= d
    return -(-shape[0] // block) * size * rows if shape else 0


def quant_order(tensors: tuple[ModelTensor, ...]) -> list[ModelTensor]:
    """Rule 1: llama.cpp's `weight_name_comparer` (block number, globals as −1, then name)."""
    def key(t: ModelTensor) -> tuple[int, str]:
        m = _BLOCK.match(t.name)
        return (int(m.group(1)) if m else -1, t.name)

    return sorted(tensors, key=key)


@dataclass(frozen=True)
class _Visit:
    """One tensor as the quantizer visits it: decided once per model, reused for every file type."""

    tensor: ModelTensor
    category: Category
    allowed: bool
    block: int | None


@dataclass(frozen=True, kw_only=True)
class PreparedModel:
    """The hparams the rules read and the visiting order, taken once per model (Rule 1)."""

    model: ModelSpec
    arch: str
    n_layer: int
    n_gqa: int
    n_expert: int
    is_70b: bool
    tied: bool
    n_attn_v: int
    visits: tuple[_Visit, ...]

    @classmethod
    def of(cls, model: ModelSpec) -> "PreparedModel":
        heads = model.n_head[0] if model.n_head else 0
        kv = model.n_head_kv[0] if model.n_head_kv else 0
        visits = tuple(_Visit(t, tensor_category(t.name), allows_quantization(t.name, t.shape), _block(t.name))
                       for t in quant_order(model.tensors))
        return cls(
            model=model, arch=model.architecture, n_layer=model.n_layer, n_gqa=heads // kv if kv else 0,
            n_expert=model.expert_count or 0, is_70b=is_70b(model.architecture, model.n_layer, heads, kv),
            tied=not any(t.name == "output.weight" for t in model.tensors),
            n_attn_v=sum(v.category in ATTN_V_LIKE for v in visits), visits=visits,
        )


def _block(name: str) -> int | None:
    m = _BLOCK.match(name)
    return int(m.group(1)) if m else None


def quant_mix(model: ModelSpec | PreparedModel, file_type: QuantFileType, imatrix: bool = True) -> QuantMix:
    """Rules 1–4. Raises QuantMixError when a tensor has no type llama.cpp could write."""
    prepared = model if isinstance(model, PreparedModel) else PreparedModel.of(model)
    source = prepared.model
    counters = dict.fromkeys(Counter, 0)
    chosen: dict[str, TensorChoice] = {}
    for visit in prepared.visits:
        t = visit.tensor
        ggml_type, fallback = _choose(visit, file_type, prepared, counters, imatrix)
        nbytes = t.nbytes if ggml_type == t.ggml_type else tensor_nbytes(t.shape, ggml_type)
        chosen[t.name] = TensorChoice(name=t.name, shape=t.shape, source_type=t.ggml_type, ggml_type=ggml_type,
                                      nbytes=nbytes, n_elements=t.n_elements, fallback=fallback)
    alignment = _alignment(source)
    header = source.complete_file_bytes - sum(_pad(t.nbytes, alignment) for t in source.tensors)
    return QuantMix(file_type, imatrix, tuple(chosen[t.name] for t in source.tensors), max(header, 0), alignment)


def _alignment(model: ModelSpec) -> int:
    value = model.metadata.get(Keys.General.ALIGNMENT)
    return value if isinstance(value, int) and value > 0 else GGUF_DEFAULT_ALIGNMENT


def _choose(visit: _Visit, file_type: QuantFileType, prepared: PreparedModel, counters: dict[Counter, int],
            imatrix: bool) -> tuple[T, bool]:
    if not visit.allowed:
        return visit.tensor.ggml_type, False
    if not file_type.quantized:
        return file_type.default, False
    context = _context(visit, file_type, prepared, counters, imatrix)
    return _fallback(visit.tensor, _walk(context, counters))


def _context(visit: _Visit, file_type: QuantFileType, prepared: PreparedModel, counters: dict[Counter, int],
             imatrix: bool) -> TensorContext:
    shape = visit.tensor.shape
    return TensorContext(
        name=visit.tensor.name, category=visit.category, ftype=file_type.name, default=file_type.default,
        ne0=shape[0], ne2=shape[2] if len(shape) > 2 else 1, arch=prepared.arch, n_gqa=prepared.n_gqa,
        n_expert=prepared.n_expert, is_70b=prepared.is_70b, tied=prepared.tied, imatrix=imatrix,
        i_attn_v=counters[Counter.ATTN_V], n_attn_v=prepared.n_attn_v, i_ffn_down=counters[Counter.FFN_DOWN],
        layer=_layer(visit, prepared, counters), n_layer=prepared.n_layer,
    )


def _layer(visit: _Visit, prepared: PreparedModel, counters: dict[Counter, int]) -> int:
    """rules Rule 4 (llama.cpp `layer_info`)."""
    counter = _LAYER_COUNTERS.get(visit.category)
    if counter is None:
        return 0
    if prepared.n_expert > 1:
        return visit.block or 0
    return counters[counter]


def _walk(c: TensorContext, counters: dict[Counter, int]) -> T:
    """rules Rules 1–3."""
    current = c.default
    for branch in BRANCHES:
        if not branch.applies(c):
            continue
        for rule in branch.rules:
            if rule.when(c):
                current = rule.then(c, current) or current
                break
        for rule in branch.after:
            if rule.when(c):
                current = rule.then(c, current) or current
        counter = branch.counter(c.category)
        if counter is not None:
            counters[counter] += 1
        break
    return current


def _fallback(tensor: ModelTensor, target: T) -> tuple[T, bool]:
    """rules Rule 5 (llama.cpp `tensor_type_fallback`)."""
    ncols = tensor.shape[0]
    if ncols % GGML_QUANT_SIZES[target][0] == 0:
        return target, False
    if target not in FALLBACK:
        raise QuantMixError(f"{tensor.name}: {ncols} columns are not a multiple of {target.name}'s block "
                            "and llama.cpp has no fallback for it")
    fallback = FALLBACK[target]
    return (fallback if ncols % GGML_QUANT_SIZES[fallback][0] == 0 else LAST_RESORT), True
