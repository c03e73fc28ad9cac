"""llama.cpp's quantization rules, table by table, on real GGUF files written by `gguf_factory`.

Each expectation is worked by hand from `llama_tensor_get_type_impl` (src/llama-quant.cpp at the
revision `core/quant/rules.py` cites); the comment on each case names the rule.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from gguf.constants import GGMLQuantizationType as T
from gguf_factory import ArchDesc

from gguf_budget.core import load_model
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.errors import QuantMixError
from gguf_budget.core.quant.file_types import FILE_TYPES, find_file_type
from gguf_budget.core.quant.mix import quant_mix
from gguf_budget.core.quant.categories import Category, allows_quantization, tensor_category
from gguf_budget.core.quant.priced import PRICED_LABEL, priced_model
from gguf_budget.core.quant.rules import is_70b, use_more_bits

# 8 blocks, 256-wide rows (every K-quant divides them), GQA 4 (8 heads, 2 KV heads), untied.
BASE = ArchDesc(n_layer=8, n_embd=256, n_ff=512, n_head=8, n_head_kv=2, n_vocab=512, weight_type=T.BF16)


def mix(model, ftype, layer=None, suffix=None, imatrix=True):
    m = quant_mix(model, find_file_type(ftype), imatrix)
    if suffix is None:
        return m
    return [m.type_of(f"blk.{il}.{suffix}") for il in range(model.n_layer)] if layer is None else \
        m.type_of(f"blk.{layer}.{suffix}")


@pytest.mark.parametrize("name, category", [
    ("output.weight", Category.OUTPUT), ("token_embd.weight", Category.TOKEN_EMBD),
    ("blk.3.attn_qkv.weight", Category.ATTENTION_QKV), ("blk.0.attn_kv_b.weight", Category.ATTENTION_KV_B),
    ("blk.1.attn_v.weight", Category.ATTENTION_V), ("blk.1.attn_k.weight", Category.ATTENTION_K),
    ("blk.1.attn_q.weight", Category.ATTENTION_Q), ("blk.1.attn_q_b.weight", Category.OTHER),
    ("blk.1.attn_output.weight", Category.ATTENTION_OUTPUT), ("blk.2.ffn_up_exps.weight", Category.FFN_UP),
    ("blk.2.ffn_gate_shexp.weight", Category.FFN_GATE), ("blk.2.ffn_down.weight", Category.FFN_DOWN),
    ("blk.2.ssm_out.weight", Category.OTHER), ("output_norm.weight", Category.OTHER),
])
def test_categories_follow_llama_cpp_name_matching(name, category):
    assert tensor_category(name) == category


@pytest.mark.parametrize("name, shape, allowed", [
    ("blk.0.attn_q.weight", (256, 256), True),
    ("blk.0.attn_norm.weight", (256,), False),            # 1-D
    ("blk.0.attn_q.bias", (256, 2), False),               # not a weight
    ("blk.0.attn_q_norm.weight", (128, 2), False),        # _norm.weight
    ("blk.0.ffn_gate_inp.weight", (256, 64), False),      # router gate
    ("blk.0.ssm_conv1d.weight", (4, 256), False),         # Mamba convolution
    ("position_embd.weight", (256, 1024), False),         # positional embeddings
    ("blk.0.ffn_up.weight", (256, 1), False),             # trailing 1s do not count as a dimension
    ("blk.0.ffn_down_exps.weight", (512, 256, 8), True),
])
def test_which_tensors_may_be_quantized(name, shape, allowed):
    assert allows_quantization(name, shape) is allowed


def test_use_more_bits_for_32_blocks():
    assert [il for il in range(32) if use_more_bits(il, 32)] == [0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31]


@pytest.mark.parametrize("arch, n_layer, heads, kv, expected", [
    ("llama", 80, 64, 8, True), ("llama", 80, 64, 64, False),   # 80 blocks without GQA is LLaMA-65B
    ("qwen2", 80, 64, 8, True), ("llama", 32, 32, 8, False), ("mistral", 80, 64, 8, False),
])
def test_llm_type_70b(arch, n_layer, heads, kv, expected):
    assert is_70b(arch, n_layer, heads, kv) is expected


def test_q4_k_m_more_bits_on_attn_v_and_ffn_down_output_q6_k_embd_q4_k(model):
    m = model(BASE)
    more = [T.Q6_K if use_more_bits(il, 8) else T.Q4_K for il in range(8)]  # 0, 7 and 3 (8//8=1: 1+2)
    assert mix(m, "Q4_K_M", suffix="attn_v.weight") == more
    assert mix(m, "Q4_K_M", suffix="ffn_down.weight") == more
    q = mix(m, "Q4_K_M")
    assert (q.type_of("output.weight"), q.type_of("token_embd.weight")) == (T.Q6_K, T.Q4_K)
    assert q.type_of("blk.0.attn_norm.weight") == T.F32


def test_q3_k_m_first_two_attn_v_q5_k_first_sixteenth_ffn_down_q5_k_attn_output_q4_k(model):
    m = model(replace(BASE, n_layer=32))
    assert mix(m, "Q3_K_M", suffix="attn_v.weight") == [T.Q5_K, T.Q5_K] + [T.Q4_K] * 30
    assert mix(m, "Q3_K_M", suffix="ffn_down.weight") == [T.Q5_K, T.Q5_K] + [T.Q4_K] * 30  # 32 // 16 = 2
    assert set(mix(m, "Q3_K_M", suffix="attn_output.weight")) == {T.Q4_K}
    assert set(mix(m, "Q3_K_M", suffix="ffn_up.weight")) == {T.Q3_K}


@pytest.mark.parametrize("heads, kv, expected", [(8, 2, T.Q4_K), (4, 2, T.Q3_K)])
def test_q2_k_attn_v_depends_on_gqa(model, heads, kv, expected):
    m = model(replace(BASE, n_head=heads, n_head_kv=kv))
    assert set(mix(m, "Q2_K", suffix="attn_v.weight")) == {expected}
    assert set(mix(m, "Q2_K", suffix="ffn_down.weight")) == {T.Q3_K}


def test_q4_k_s_first_four_attn_v_and_first_eighth_ffn_down_q5_k(model):
    m = model(replace(BASE, n_layer=16))
    assert mix(m, "Q4_K_S", suffix="attn_v.weight") == [T.Q5_K] * 4 + [T.Q4_K] * 12
    assert mix(m, "Q4_K_S", suffix="ffn_down.weight") == [T.Q5_K] * 2 + [T.Q4_K] * 14


@pytest.mark.parametrize("imatrix, first", [(False, T.Q5_K), (True, T.IQ4_XS)])
def test_iq4_xs_first_eighth_ffn_down_only_without_an_importance_matrix(model, imatrix, first):
    m = model(replace(BASE, n_layer=16))
    assert mix(m, "IQ4_XS", suffix="ffn_down.weight", imatrix=imatrix) == [first] * 2 + [T.IQ4_XS] * 14
    assert set(mix(m, "IQ4_XS", suffix="attn_v.weight", imatrix=imatrix)) == {T.Q5_K}  # GQA 4


@pytest.mark.parametrize("imatrix, first", [(True, T.Q4_1), (False, T.Q4_0)])
def test_q4_0_guards_the_first_ffn_down_layers_with_an_importance_matrix(model, imatrix, first):
    m = model(replace(BASE, n_layer=16))
    assert mix(m, "Q4_0", suffix="ffn_down.weight", imatrix=imatrix)[:3] == [first, first, T.Q4_0]


def test_eight_expert_models_bump_attention(model):
    """n_expert == 8 (Mixtral): attn_v and attn_k Q8_0, attn_output Q5_K for Q4_K_M."""
    m = model(replace(BASE, n_expert=8, n_expert_used=2, expert_ff=256))
    assert set(mix(m, "Q4_K_M", suffix="attn_v.weight")) == {T.Q8_0}
    assert set(mix(m, "Q4_K_M", suffix="attn_k.weight")) == {T.Q8_0}
    assert set(mix(m, "Q4_K_M", suffix="attn_output.weight")) == {T.Q5_K}


def test_70b_bumps_q3_k_and_q4_k_attn_v_to_q5_k():
    m = load_model(catalogue_path(find_entry("llama-3.1-70b-instruct")))
    assert set(mix(m, "Q3_K_S", suffix="attn_v.weight")) == {T.Q5_K}
    assert set(mix(m, "Q4_K_M", suffix="attn_v.weight")) == {T.Q5_K, T.Q6_K}


def test_falcon_keeps_its_own_ffn_down_ladder_and_q8_0_output(model):
    m = model(replace(BASE, arch="falcon", n_layer=32))
    down = mix(m, "Q4_K_M", suffix="ffn_down.weight")
    assert down[:2] == [T.Q6_K, T.Q6_K]                                     # il < 32/16
    assert down[2:] == [T.Q5_K if use_more_bits(il, 32) else T.Q4_K for il in range(2, 32)]
    assert mix(m, "Q4_K_M").type_of("output.weight") == T.Q8_0


@pytest.mark.parametrize("ftype, table", [("Q4_K_M", T.Q6_K), ("Q8_0", T.Q8_0), ("IQ2_XXS", T.Q5_K)])
def test_a_tied_embedding_table_takes_the_output_rules(model, ftype, table):
    m = model(replace(BASE, tied=True))
    assert mix(m, ftype).type_of("token_embd.weight") == table


@pytest.mark.parametrize("ftype, embd", [("IQ2_XXS", T.Q2_K), ("IQ2_M", T.IQ3_S), ("IQ3_XXS", T.IQ3_S)])
def test_low_bit_files_keep_an_untied_embedding_table_coarser_than_the_default(model, ftype, embd):
    assert mix(model(BASE), ftype).type_of("token_embd.weight") == embd


def test_rows_that_k_quants_do_not_divide_fall_back(model):
    """tensor_type_fallback: 320-wide rows (not a multiple of 256, a multiple of 32); ffn_down's
    rows are n_ff = 768 wide, which Q4_K divides."""
    m = model(replace(BASE, n_embd=320, n_head=5, n_head_kv=1, n_ff=768))
    q = mix(m, "Q4_K_M")
    assert q.type_of("blk.1.attn_q.weight") == T.Q5_0      # Q4_K → Q5_0
    assert q.type_of("blk.0.attn_v.weight") == T.Q8_0      # Q6_K → Q8_0
    assert q.type_of("blk.1.ffn_down.weight") == T.Q4_K    # 768 % 256 == 0: no fallback
    assert q.type_of("output.weight") == T.Q8_0            # the output rule: ne[0] % 256 → Q8_0
    assert mix(m, "IQ4_XS").type_of("blk.1.attn_q.weight") == T.IQ4_NL
    assert q.n_fallback > 0


def test_a_row_no_block_divides_falls_back_to_f16_or_cannot_be_written(model):
    m = model(replace(BASE, n_ff=48))                                            # ffn_down rows 48 wide
    assert mix(m, "Q4_K_M").type_of("blk.1.ffn_down.weight") == T.F16   # Q4_K → Q5_0 → F16
    with pytest.raises(QuantMixError, match="ffn_down.weight: 48 columns are not a multiple of Q8_0's block"):
        mix(m, "Q8_0")


def test_gpt_oss_experts_are_mxfp4_and_fall_back_under_k_quants():
    m = load_model(catalogue_path(find_entry("gpt-oss-20b")))
    mx = mix(m, "MXFP4_MOE")
    assert mx.type_of("blk.0.ffn_gate_exps.weight") == T.MXFP4
    assert mx.type_of("blk.0.attn_q.weight") == T.Q8_0
    assert mx.type_of("output.weight") == T.Q8_0
    q = mix(m, "Q4_K_M")
    assert q.type_of("blk.5.ffn_up_exps.weight") == T.Q5_0                 # 2880 % 256 ≠ 0
    assert q.type_of("blk.0.ffn_down_exps.weight") == T.Q8_0               # Q6_K (more bits) → Q8_0


def test_mxfp4_on_a_dense_model_writes_q8_0_throughout(model):
    q = mix(model(BASE), "MXFP4_MOE")
    assert set(q.type_counts) == {"Q8_0", "F32"}


def test_f16_and_bf16_copy_every_quantizable_tensor_into_that_type(model):
    m = model(BASE)
    assert mix(m, "F16").type_counts == {"F16": 2 + 7 * 8, "F32": 2 * 8 + 1}
    assert mix(m, "BF16").type_of("blk.0.attn_norm.weight") == T.F32


@pytest.mark.parametrize("ftype", [f.name.value for f in FILE_TYPES])
def test_any_source_type_prices_the_same(ftype):
    """Re-pricing reads shapes, never bytes: from the Q4_K_M skeleton or from it re-priced to Q8_0."""
    q4 = load_model(catalogue_path(find_entry("qwen3-30b-a3b-instruct-2507")))
    q8 = priced_model(q4, quant_mix(q4, find_file_type("Q8_0")))
    a, b = mix(q4, ftype), mix(q8, ftype)
    assert [(t.ggml_type, t.nbytes) for t in a.tensors] == [(t.ggml_type, t.nbytes) for t in b.tensors]


def test_a_priced_model_says_so_and_keeps_every_fact():
    q4 = load_model(catalogue_path(find_entry("llama-3.1-8b-instruct")))
    q8 = priced_model(q4, quant_mix(q4, find_file_type("Q8_0")))
    assert q8.name.startswith(f"Q8_0 ({PRICED_LABEL}) of ")
    assert (q8.file_type_name, q8.header_only, q8.layers, q8.n_params) == ("Q8_0", True, q4.layers, q4.n_params)
    assert q8.layer_bytes[0] == sum(t.nbytes for t in q8.tensors if t.layer == 0)
    assert q8.tensor_bytes == sum(q8.layer_bytes) + q8.global_bytes.total()
    assert q8.complete_file_bytes > q8.tensor_bytes > 1.7 * q4.tensor_bytes
