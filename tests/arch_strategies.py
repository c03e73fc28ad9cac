"""Hypothesis strategies for model shapes: every kind of layer and global the planners price.

A drawn shape is one of six families — dense, sliding window (gemma2), MoE, MLA (deepseek2),
pure recurrent (mamba) and hybrid (jamba: SSM layers where head_count_kv is 0) — and may
carry an "other" global tensor (rope_freqs), which the ledger must price on its out_norm line.
"""

from __future__ import annotations

from gguf.constants import GGMLQuantizationType as T
from gguf_factory import ArchDesc, MLADesc, SSMDesc
from hypothesis import strategies as st

QUANTS = (T.Q8_0, T.Q4_0, T.F16, T.F32)
FAMILIES = ("dense", "swa", "moe", "mla", "recurrent", "hybrid")


@st.composite
def ssm_descs(draw: st.DrawFn) -> SSMDesc:
    return SSMDesc(d_conv=draw(st.integers(2, 4)), d_inner=draw(st.sampled_from((32, 64, 128))),
                   d_state=draw(st.sampled_from((8, 16))), dt_rank=draw(st.integers(1, 8)),
                   n_group=draw(st.integers(0, 2)))


@st.composite
def arch_descs(draw: st.DrawFn, families: tuple[str, ...] = FAMILIES) -> ArchDesc:
    family = draw(st.sampled_from(families))
    n_layer = draw(st.integers(1, 6))
    n_head = draw(st.sampled_from((1, 2, 4)))
    n_head_kv: int | list[int] = draw(st.sampled_from([h for h in (1, 2, 4) if n_head % h == 0]))
    extra: dict[str, object] = {}
    if family == "swa":
        extra = {"arch": "gemma2", "sliding_window": draw(st.integers(1, 700))}
    elif family == "moe":
        experts = draw(st.sampled_from((2, 4)))
        extra = {"n_expert": experts, "n_expert_used": min(experts, 2), "expert_ff": 32,
                 "n_expert_shared": draw(st.integers(0, 1))}
    elif family == "mla":
        rope = draw(st.sampled_from((8, 16, 32)))
        extra = {"arch": "deepseek2", "mla": MLADesc(kv_lora_rank=draw(st.sampled_from((32, 64))), rope_dim=rope,
                                                     key_length=rope + 64, absorbed=draw(st.booleans()))}
    elif family == "recurrent":
        n_head, n_head_kv = 0, 0
        extra = {"arch": "mamba", "ssm": draw(ssm_descs())}
    elif family == "hybrid":
        recurrent = draw(st.sets(st.integers(0, n_layer - 1), min_size=1, max_size=n_layer))
        n_head_kv = [0 if il in recurrent else n_head_kv for il in range(n_layer)]
        extra = {"arch": "jamba", "ssm": draw(ssm_descs()), "recurrent_layers": tuple(sorted(recurrent))}
    return ArchDesc(
        n_layer=n_layer,
        n_embd=draw(st.sampled_from((32, 64, 128))),
        n_ff=draw(st.lists(st.sampled_from((32, 64, 128)), min_size=n_layer, max_size=n_layer)),
        n_head=n_head,
        n_head_kv=n_head_kv,
        n_vocab=draw(st.integers(1, 3000)),
        context_length=draw(st.integers(1, 3000)),
        tied=draw(st.booleans()),
        weight_type=draw(st.sampled_from(QUANTS)),
        embd_type=draw(st.sampled_from(QUANTS)),
        layer_mix={il: {"ffn_down": draw(st.sampled_from(QUANTS))} for il in range(n_layer) if draw(st.booleans())},
        rope_freqs=draw(st.sampled_from((0, 0, 16))),
        **extra,
    )
