"""ModelSpec facts and the tensor-role inventory, worked out by hand for each architecture family."""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from pathlib import Path

import pytest
from gguf.constants import GGMLQuantizationType as T, Keys
from arch_strategies import arch_descs
from gguf_factory import ArchDesc, MLADesc, SSMDesc, tensor_plan
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gguf_budget.core import GGUFFormatError, LayerAttention
from gguf_budget.core.model import facts
from gguf_budget.core.model.spec import SSMSizes

# Q8_0 stores 32 elements in 34 bytes; Q4_0 in 18; F16 2 bytes; F32 4 bytes.
LLAMA_LAYER = {"attention": 4352 + 2176 + 2176 + 4352, "ffn": 3 * 8704, "norms": 2 * 256}


def test_llama_facts_and_inventory(model):
    spec = model(ArchDesc())
    assert (spec.architecture, spec.n_layer, spec.n_embd, spec.n_vocab, spec.context_length) == ("llama", 2, 64, 256,
                                                                                                2048)
    assert (spec.n_ff, spec.n_head, spec.n_head_kv, spec.head_dim_k, spec.head_dim_v) == ((128,) * 2, (4,) * 2,
                                                                                         (2,) * 2, 16, 16)
    assert spec.layer_bytes == (39680, 39680)
    for roles in spec.layer_role_bytes:
        assert {k: v for k, v in roles.items() if v} == LLAMA_LAYER
    g = spec.global_bytes
    assert (g.token_embd, g.output, g.output_norm, g.position_embd, g.other) == (17408, 17408, 256, None, 0)
    assert not spec.tied_embeddings and spec.unknown == () and spec.header_only
    assert spec.layers == (LayerAttention("full", 4, 2, 16, 16),) * 2
    assert spec.file_type_name == "Q8_0"


def test_tied_embeddings_have_no_output_table(model):
    spec = model(ArchDesc(tied=True))
    assert spec.tied_embeddings and spec.global_bytes.output is None
    assert spec.output_table_bytes == spec.global_bytes.token_embd == 17408


def test_per_layer_head_counts(model):
    spec = model(ArchDesc(n_layer=3, n_head_kv=[1, 2, 4], n_ff=[64, 128, 96]))
    assert spec.n_head_kv == (1, 2, 4) and spec.n_ff == (64, 128, 96) and spec.n_ff_max == 128
    assert [layer.n_head_kv for layer in spec.layers] == [1, 2, 4]


@pytest.mark.parametrize(
    "desc, expected",
    [
        (ArchDesc(arch="gemma3", n_layer=7, sliding_window=16), "TTTTTFT"),
        (ArchDesc(arch="gemma3", n_layer=4, sliding_window=16, sliding_window_pattern=[True, True, False]), "TTFT"),
        (ArchDesc(arch="gemma2", n_layer=4, sliding_window=16), "TFTF"),
        (ArchDesc(arch="phi3", n_layer=3, sliding_window=16), "FFF"),
        (ArchDesc(arch="gemma3", n_layer=3), "FFF"),
    ],
    ids=["gemma3-period-6", "pattern-array", "gemma2-period-2", "phi3-ignores-window", "no-window"],
)
def test_sliding_window_layers(model, desc, expected):
    spec = model(desc)
    assert "".join("T" if layer.kind == "swa" else "F" for layer in spec.layers) == expected
    assert all(layer.window == 16 for layer in spec.layers if layer.kind == "swa")


def test_gpt2_learned_positions_and_fused_qkv(model):
    spec = model(ArchDesc(arch="gpt2", position_embd=True, gated_ffn=False, n_head_kv=4, weight_type=T.F16))
    g = spec.global_bytes
    assert g.position_embd == 64 * 2048 * 4
    assert g.output_norm == 2 * 64 * 4  # weight + bias
    assert spec.layer_role_bytes[0]["attention"] == 64 * 192 * 2 + 64 * 64 * 2


def test_moe_routed_experts(model):
    spec = model(ArchDesc(n_expert=4, n_expert_used=2, weight_type=T.Q4_0))
    experts = 3 * (64 * 128 * 4 // 32 * 18)
    assert [r["experts"] for r in spec.layer_role_bytes] == [experts, experts]
    assert spec.layer_role_bytes[0]["ffn"] == 64 * 4 * 4  # the F32 router
    assert (spec.expert_count, spec.expert_used_count, spec.is_moe) == (4, 2, True)
    assert spec.routed_expert_bytes == 2 * experts


def test_deepseek2_mla_caches_one_latent_row(model):
    spec = model(ArchDesc(arch="deepseek2", mla=MLADesc(absorbed=True), n_expert=4, n_expert_used=2,
                          n_expert_shared=1))
    assert (spec.kv_lora_rank, spec.rope_dim) == (64, 32)
    assert spec.layers[0] == LayerAttention("full", 4, 1, 64 + 32, 0)
    assert spec.layer_role_bytes[0]["shared_experts"] == 3 * 8704


def test_a_deepseek2_file_without_the_mla_lengths_caches_every_heads_k_and_v(model):
    """A file converted before llama.cpp PR 12801 has no key_length_mla: 0c1e570 decompresses it to every head
    (src/llama-hparams.cpp `is_mla` is false), so each head keeps K of key_length and V of value_length."""
    spec = model(ArchDesc(arch="deepseek2", n_head_kv=4, mla=MLADesc(), n_expert=4, n_expert_used=2,
                          n_expert_shared=1))
    assert spec.kv_lora_rank == 64
    assert spec.layers[0] == LayerAttention("full", 4, 4, 96, 64)


def test_mamba_layers_are_recurrent_with_fixed_state(model):
    spec = model(ArchDesc(arch="mamba", ssm=SSMDesc(), n_head=0, n_head_kv=0, weight_type=T.F16))
    assert all(layer.kind == "recurrent" for layer in spec.layers)
    assert spec.recurrent_state_bytes == ((4 - 1) * 128 + 16 * 128) * 4
    assert spec.ssm == SSMSizes(d_conv=4, d_inner=128, d_state=16, dt_rank=4, n_group=0)
    assert spec.layer_role_bytes[0]["ssm"] > 0 and spec.layer_role_bytes[0]["attention"] == 0


def test_hybrid_recurrent_layers_follow_head_count_kv_zero(model):
    spec = model(ArchDesc(arch="granitehybrid", n_layer=4, ssm=SSMDesc(), recurrent_layers=[0, 2],
                          n_head_kv=[0, 2, 0, 2]))
    assert [layer.kind for layer in spec.layers] == ["recurrent", "full", "recurrent", "full"]


def test_missing_facts_are_unknown_not_zero(model):
    spec = model(ArchDesc(omit=("{arch}.context_length", "{arch}.attention.head_count",
                                "{arch}.feed_forward_length")))
    assert spec.context_length is None and spec.n_head is None and spec.n_ff is None
    assert {"context_length", "n_head", "n_ff", "head_dim_k", "head_dim_v"} <= set(spec.unknown)
    assert all(layer.kind == "unknown" for layer in spec.layers)


@pytest.mark.parametrize(
    "desc, message",
    [
        (ArchDesc(omit=("{arch}.block_count",), extra_kv={"llama.block_count": 2**31}), "block_count is 2147483648"),
        (ArchDesc(n_head_kv=[2, 2, 2]), "head_count_kv has 3 entries for 2 layers"),
        (ArchDesc(omit=("general.architecture",)), "general.architecture is missing"),
    ],
)
def test_absurd_facts_are_format_errors(model, desc, message):
    with pytest.raises(GGUFFormatError, match=message):
        model(desc)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(desc=arch_descs(), position_embd=st.booleans())
def test_inventory_accounts_for_every_tensor_byte(model, desc, position_embd):
    desc = replace(desc, position_embd=position_embd)
    spec = model(desc)
    assert sum(spec.layer_bytes) + spec.global_bytes.total() == spec.tensor_bytes
    assert spec.n_tensors == len(tensor_plan(desc))
    assert spec.tied_embeddings == desc.tied
    assert spec.global_bytes.other == (desc.rope_freqs * 4)  # rope_freqs is F32
    recurrent = [il for il in range(desc.n_layer) if desc.is_recurrent(il)]
    assert [il for il, layer in enumerate(spec.layers) if layer.kind == "recurrent"] == recurrent
    assert (spec.recurrent_state_bytes is not None) == bool(recurrent)
    if desc.mla is not None:
        m = desc.mla
        assert {(layer.n_head_kv, layer.k_dim, layer.v_dim) for layer in spec.layers} == (
            {(1, m.kv_lora_rank + m.rope_dim, 0)} if m.absorbed else {(desc.n_head_kv, m.key_length, m.value_length)})


def test_a_skeleton_knows_the_size_of_the_complete_file(gguf_file, tmp_path):
    from gguf_budget.core import load_model

    desc = ArchDesc(n_layer=3, tokens=10)
    skeleton = load_model(gguf_file(desc, "header_only", name="s.gguf"))
    complete = gguf_file(desc, "complete", name="c.gguf")
    assert skeleton.header_only and skeleton.file_bytes < skeleton.tensor_bytes
    assert skeleton.complete_file_bytes == complete.stat().st_size == load_model(complete).complete_file_bytes


GGUF_KEY = re.compile(r"^(\{arch\}|general|tokenizer|split)\.")
CORE = Path(facts.__file__).resolve().parent.parent


def _string_literals(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _key_names(names: type) -> set[str]:
    """Every key string `gguf.constants.Keys` (and its nested classes) defines (not `__module__` and the like)."""
    found: set[str] = set()
    for name, value in vars(names).items():
        if name.startswith("__"):
            continue
        found |= _key_names(value) if isinstance(value, type) else {value} if isinstance(value, str) else set()
    return found


def test_every_gguf_key_is_named_by_gguf_constants():
    """facts.py reads keys only through `gguf.constants.Keys`: no key is typed out a second time."""
    assert [s for s in _string_literals(Path(facts.__file__)) if GGUF_KEY.match(s)] == []


def test_no_core_module_types_out_a_key_that_gguf_names():
    known = _key_names(Keys) - {""}
    typed = {str(p.relative_to(CORE)): hits for p in sorted(CORE.rglob("*.py"))
             if (hits := sorted(set(_string_literals(p)) & known))}
    assert typed == {}
