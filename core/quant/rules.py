"""llama.cpp's quantization mix as a table: which ggml type each tensor gets for each file type.

Source: ggml-org/llama.cpp src/llama-quant.cpp at 007dbbf3fd17eefe9b47fee45f48f7ba5e62b714
(`core.llama_cpp.QUANT_RULES_COMMIT`),
`llama_tensor_get_type_impl` (the branches below, in its order), `tensor_type_fallback`
(`FALLBACK`) and the 70B detection of `load_hparams` (`TYPE_70B`). Each row cites the rule it
copies; `mix.py` walks the table and never decides anything itself.

Rule 1: the first branch whose `applies` holds is the tensor's branch; inside it, the first
        row whose `when` holds sets the type (`then` may return None: keep the type so far),
        and no later row is tried — llama.cpp's `if … else if` chain.
Rule 2: after that row, every row of the branch's `after` applies in turn (attn_v: the 70B
        bump to Q5_K, then Q8_0 for 8-expert models).
Rule 3: a branch advances its counters (`counts`): attention-V-like tensors and ffn_down /
        ffn_gate / ffn_up, in the order the quantizer visits tensors; `use_more_bits` and the
        "first eighth of the layers" rules read them.
Rule 4: `TensorContext.layer` is the block a feed-forward rule talks about: the counter for
        dense models, the `blk.N.` of the name when the model has experts (`layer_info`).
Rule 5: a type whose block does not divide the row (`ne[0]`) falls back per `FALLBACK`, then
        to F16 when even that does not divide; a type with no fallback cannot be written.
Rows exist for the file types the ladder prices (`file_types.FILE_TYPES`); llama.cpp's rows for
IQ1_S/IQ1_M/IQ2_XS/IQ2_S/IQ3_S/Q2_K_S/Q5_0/TQ* files are left out with those file types.
Not modelled (llama.cpp features a publisher would have to ask for): `--pure`,
`--tensor-type` / `--output-tensor-type` / `--token-embedding-type` overrides, layer pruning,
and BailingMoE3's 3-D MLA projections under MXFP4_MOE. The attn_qkv-only branch of
`llama_tensor_get_type_impl` is unreachable at this revision (attn_qkv is attention-V-like and
taken first), so it has no row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping

from gguf_budget.core.vocab import TextEnum
from gguf_budget.core.gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType as T

from gguf_budget.core.quant.categories import ATTN_V_LIKE, Category
from gguf_budget.core.quant.file_types import QuantName

C = Category
N = QuantName


class Counter(TextEnum):
    ATTN_V = "attn_v"
    FFN_DOWN = "ffn_down"
    FFN_GATE = "ffn_gate"
    FFN_UP = "ffn_up"


@dataclass(frozen=True, kw_only=True)
class TensorContext:
    """What llama.cpp's rules can see when they pick one tensor's type."""

    name: str
    category: Category
    ftype: QuantName
    default: T
    ne0: int
    ne2: int
    arch: str
    n_gqa: int
    n_expert: int
    is_70b: bool
    tied: bool
    imatrix: bool
    i_attn_v: int
    n_attn_v: int
    i_ffn_down: int
    layer: int
    n_layer: int

    def is_(self, *names: QuantName) -> bool:
        return self.ftype in names

    @property
    def more_bits_v(self) -> bool:
        return use_more_bits(self.i_attn_v, self.n_attn_v)

    @property
    def more_bits_layer(self) -> bool:
        return use_more_bits(self.layer, self.n_layer)

    @property
    def first_eighth(self) -> bool:
        return self.layer < self.n_layer // 8

    @property
    def falcon(self) -> bool:
        return self.arch == "falcon"


def use_more_bits(i: int, n: int) -> bool:
    """llama.cpp `use_more_bits`: the first and last eighth, and every third layer between."""
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


Then = Callable[[TensorContext, T], "T | None"]


@dataclass(frozen=True)
class Rule:
    when: Callable[[TensorContext], bool]
    then: Then


def to(ggml_type: T) -> Then:
    return lambda c, t: ggml_type


def keep(c: TensorContext, t: T) -> None:
    return None


@dataclass(frozen=True)
class Branch:
    name: str
    applies: Callable[[TensorContext], bool]
    rules: tuple[Rule, ...]
    after: tuple[Rule, ...] = ()
    counts: Mapping[Category, Counter] = field(default_factory=lambda: MappingProxyType({}))

    def counter(self, category: Category) -> Counter | None:
        return self.counts.get(category)


LOW_BIT = (N.IQ2_XXS, N.IQ2_M)  # of llama.cpp's IQ2_XXS, IQ2_XS, IQ1_S, IQ2_S, IQ2_M, IQ1_M: those we price
IQ2_S_OR_M = (N.IQ2_M,)
TO_Q5_K_FOR_8_EXPERTS = (N.Q2_K, N.IQ3_XS, N.IQ3_XXS, N.Q3_K_S, N.Q3_K_M, N.IQ4_NL, N.Q4_K_S, N.Q4_K_M,
                         N.IQ3_M, N.IQ4_XS)


def _blck(t: T) -> int:
    return GGML_QUANT_SIZES[t][0]


def _low_bit_small(c: TensorContext) -> T:
    return T.IQ3_S if c.is_(*IQ2_S_OR_M) else T.Q2_K


ATTN_V_COUNTS = {cat: Counter.ATTN_V for cat in ATTN_V_LIKE}

BRANCHES: tuple[Branch, ...] = (
    # output.weight, or token_embd.weight when the model has no output.weight (tied embeddings)
    Branch("output", lambda c: c.category == C.OUTPUT or (c.tied and c.category == C.TOKEN_EMBD), (
        Rule(lambda c: c.is_(N.MXFP4_MOE), to(T.Q8_0)),
        Rule(lambda c: c.falcon or c.ne0 % _blck(c.default) != 0, to(T.Q8_0)),
        Rule(lambda c: c.is_(N.IQ2_XXS, N.IQ3_XXS, N.IQ2_M), to(T.Q5_K)),
        Rule(lambda c: c.default != T.Q8_0, to(T.Q6_K)),
    )),
    # MXFP4_MOE: expert tensors (3-D, ne[2] > 1) MXFP4, every other tensor Q8_0
    Branch("mxfp4_moe", lambda c: c.is_(N.MXFP4_MOE), (
        Rule(lambda c: c.ne2 > 1, to(T.MXFP4)),
        Rule(lambda c: True, to(T.Q8_0)),
    )),
    Branch("token_embd", lambda c: c.category == C.TOKEN_EMBD, (
        Rule(lambda c: c.is_(N.IQ2_XXS), to(T.Q2_K)),
        Rule(lambda c: c.is_(N.IQ2_M, N.IQ3_XXS), to(T.IQ3_S)),
    )),
    # IQ2_XXS … IQ1_M: one branch for every category
    Branch("low_bit", lambda c: c.is_(*LOW_BIT), (
        Rule(lambda c: c.category in ATTN_V_LIKE,
             lambda c, t: T.Q4_K if c.n_gqa >= 4 or c.n_expert >= 4 else _low_bit_small(c)),
        Rule(lambda c: c.n_expert == 8 and c.category == C.ATTENTION_K, to(T.Q4_K)),
        Rule(lambda c: c.category == C.FFN_DOWN,
             lambda c, t: _low_bit_small(c) if c.i_ffn_down < c.n_layer // 8 else None),
        Rule(lambda c: c.category == C.ATTENTION_OUTPUT,
             lambda c, t: T.Q5_K if c.n_expert == 8 else T.IQ3_S if c.is_(*IQ2_S_OR_M) else None),
    ), counts={**ATTN_V_COUNTS, C.FFN_DOWN: Counter.FFN_DOWN}),
    Branch("attn_v", lambda c: c.category in ATTN_V_LIKE, (
        Rule(lambda c: c.is_(N.Q2_K), lambda c, t: T.Q4_K if c.n_gqa >= 4 else T.Q3_K),
        Rule(lambda c: c.is_(N.IQ3_XXS),
             lambda c, t: T.Q4_K if c.n_gqa >= 4 else T.IQ3_XXS if c.imatrix else T.IQ3_S),
        Rule(lambda c: c.is_(N.IQ3_XS) and c.n_gqa >= 4, to(T.Q4_K)),
        Rule(lambda c: c.is_(N.IQ3_M), to(T.Q4_K)),
        Rule(lambda c: c.is_(N.Q3_K_M), lambda c, t: T.Q5_K if c.i_attn_v < 2 else T.Q4_K),
        Rule(lambda c: c.is_(N.Q3_K_L), to(T.Q5_K)),
        Rule(lambda c: c.is_(N.IQ4_NL, N.IQ4_XS) and c.n_gqa >= 4, to(T.Q5_K)),
        Rule(lambda c: c.is_(N.Q4_K_M, N.Q5_K_M) and c.more_bits_v, to(T.Q6_K)),
        Rule(lambda c: c.is_(N.Q4_K_S) and c.i_attn_v < 4, to(T.Q5_K)),
    ), after=(
        # LLM_TYPE_70B: 8 heads share attn_v, so more bits cost little
        Rule(lambda c: c.is_70b, lambda c, t: T.Q5_K if t in (T.Q3_K, T.Q4_K) else None),
        Rule(lambda c: c.n_expert == 8, to(T.Q8_0)),
    ), counts=ATTN_V_COUNTS),
    Branch("attn_k", lambda c: c.category == C.ATTENTION_K, (
        Rule(lambda c: c.n_expert == 8, to(T.Q8_0)),
        Rule(lambda c: c.is_(N.IQ3_XS), to(T.IQ3_XXS)),
        Rule(lambda c: c.is_(N.IQ3_XXS), to(T.IQ2_S)),
    )),
    Branch("attn_q", lambda c: c.category == C.ATTENTION_Q, (
        Rule(lambda c: c.is_(N.IQ3_XS), to(T.IQ3_XXS)),
        Rule(lambda c: c.is_(N.IQ3_XXS), to(T.IQ2_S)),
    )),
    Branch("ffn_down", lambda c: c.category == C.FFN_DOWN, (
        Rule(lambda c: c.is_(N.Q2_K), to(T.Q3_K)),
        Rule(lambda c: c.is_(N.IQ3_XXS) and not c.imatrix,
             lambda c, t: T.Q4_K if c.first_eighth else T.Q3_K),
        Rule(lambda c: c.is_(N.Q3_K_M), lambda c, t: (
            T.Q5_K if c.layer < c.n_layer // 16 else T.Q4_K if not c.falcon or c.more_bits_layer else T.Q3_K)),
        Rule(lambda c: c.is_(N.IQ3_M) and (c.first_eighth or (c.n_expert == 8 and c.more_bits_layer)),
             to(T.Q4_K)),
        Rule(lambda c: c.is_(N.Q3_K_L), lambda c, t: T.Q4_K if c.falcon else T.Q5_K),
        Rule(lambda c: c.is_(N.Q4_K_M), lambda c, t: (
            (T.Q6_K if c.layer < c.n_layer // 16 else T.Q5_K if c.more_bits_layer else T.Q4_K) if c.falcon
            else T.Q6_K if c.more_bits_layer else None)),
        Rule(lambda c: c.first_eighth and c.is_(N.IQ4_NL, N.IQ4_XS) and not c.imatrix, to(T.Q5_K)),
        Rule(lambda c: c.is_(N.Q5_K_M) and c.more_bits_layer, to(T.Q6_K)),
        Rule(lambda c: c.is_(N.Q4_K_S) and not c.falcon and c.first_eighth, to(T.Q5_K)),
        Rule(lambda c: c.is_(N.Q4_0) and c.imatrix and c.first_eighth, to(T.Q4_1)),
    ), counts={C.FFN_DOWN: Counter.FFN_DOWN}),
    Branch("attn_output", lambda c: c.category == C.ATTENTION_OUTPUT, (
        Rule(lambda c: not c.falcon and c.n_expert == 8,
             lambda c, t: T.Q5_K if c.is_(*TO_Q5_K_FOR_8_EXPERTS) else None),
        Rule(lambda c: not c.falcon and c.is_(N.Q2_K), to(T.Q3_K)),
        Rule(lambda c: not c.falcon and c.is_(N.IQ3_XXS), to(T.IQ3_S)),
        Rule(lambda c: not c.falcon and c.is_(N.Q3_K_M), to(T.Q4_K)),
        Rule(lambda c: not c.falcon and c.is_(N.Q3_K_L), to(T.Q5_K)),
        Rule(lambda c: not c.falcon and c.is_(N.IQ3_M), to(T.Q4_K)),
        Rule(lambda c: c.falcon and c.is_(N.Q3_K_L), to(T.Q4_K)),
    )),
    Branch("ffn_gate", lambda c: c.category == C.FFN_GATE, (
        Rule(lambda c: c.is_(N.IQ3_XS) and c.n_layer // 8 <= c.layer < 7 * c.n_layer // 8, to(T.IQ3_XXS)),
    ), counts={C.FFN_GATE: Counter.FFN_GATE}),
    Branch("ffn_up", lambda c: c.category == C.FFN_UP, (
        Rule(lambda c: c.is_(N.IQ3_XS) and c.n_layer // 8 <= c.layer < 7 * c.n_layer // 8, to(T.IQ3_XXS)),
    ), counts={C.FFN_UP: Counter.FFN_UP}),
)

# tensor_type_fallback: when ne[0] is not a multiple of the type's block
FALLBACK: Mapping[T, T] = {
    T.IQ1_S: T.IQ4_NL, T.IQ1_M: T.IQ4_NL, T.IQ2_XXS: T.IQ4_NL, T.IQ2_XS: T.IQ4_NL, T.IQ2_S: T.IQ4_NL,
    T.IQ3_XXS: T.IQ4_NL, T.IQ3_S: T.IQ4_NL, T.IQ4_XS: T.IQ4_NL,
    T.Q2_K: T.Q4_0, T.Q3_K: T.Q4_0, T.TQ1_0: T.Q4_0, T.TQ2_0: T.Q4_0,
    T.Q4_K: T.Q5_0, T.Q5_K: T.Q5_1, T.Q6_K: T.Q8_0,
}
LAST_RESORT = T.F16


def is_70b(arch: str, n_layer: int, n_head: int, n_head_kv: int) -> bool:
    """LLM_TYPE_70B as `load_hparams` sets it: llama with 80 blocks and GQA (80 without GQA is
    65B), qwen2 with 80 blocks (`llama_model_qwen2::load_arch_hparams`)."""
    return n_layer == 80 and ((arch == "llama" and n_head != n_head_kv) or arch == "qwen2")
