"""The offline catalogue: shipped skeletons match their cited published files, their
published configs, llama.cpp's Q4_K_M rules, and the script that regenerates them."""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import pytest
from gguf.constants import GGMLQuantizationType as T
from hypothesis import given
from hypothesis import strategies as st

from gguf_budget.core.errors import RequestError
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, FitRequest, estimate_fit, load_model, plan_memory
from gguf_budget.core.fit.types import FitVerdict
from gguf_budget.core.machine.snapshot import hypothetical_gpus, hypothetical_machine, what_if
from gguf_budget.core.quant.mix import tensor_nbytes
from gguf_budget.core.quant.rules import use_more_bits
from gguf_budget.core.model.catalogue import (
    CATALOGUE, CATALOGUE_FOLDER, CONFIG_SOURCE_KEY, PUBLISHED_BYTES_KEY, PUBLISHED_SOURCE_KEY, SKELETON_LABEL,
    CatalogueEntry, catalogue_names, catalogue_path, find_entry,
)

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "resources" / CATALOGUE_FOLDER
TOLERANCE = 0.01


def _script():
    spec = importlib.util.spec_from_file_location("make_catalogue", ROOT / "packaging" / "make_catalogue.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_catalogue = _script()
ENTRIES = {e.name: e for e in CATALOGUE}


@pytest.fixture(scope="module")
def models():
    return {e.name: load_model(catalogue_path(e)) for e in CATALOGUE}


# Files made by an older llama.cpp whose rules left these tensors off the attention-V rules
# (phi-4: attn_qkv Q5_K throughout; DeepSeek-V2-Lite: attn_kv_b Q4_K throughout): the bytes the
# cited revision adds, recomputed in `test_the_known_rule_change_explains_the_difference`.
NEWER_RULES = {"phi-4": ("attn_qkv.weight", T.Q5_K, 6_144_000),
               "deepseek-v2-lite": ("attn_kv_b.weight", T.Q4_K, 7_028_736)}


@pytest.mark.parametrize("name", catalogue_names())
def test_tensor_bytes_are_within_one_percent_of_the_cited_published_file(models, name):
    entry, spec = ENTRIES[name], models[name]
    published = spec.metadata[PUBLISHED_BYTES_KEY]
    assert published == entry.published_file_bytes
    assert spec.metadata[PUBLISHED_SOURCE_KEY] == entry.published_source
    # The published file also holds its header (tokenizer, chat template): never smaller.
    extra = NEWER_RULES[name][2] if name in NEWER_RULES else 0
    assert spec.tensor_bytes - extra <= published + entry.published_rounding
    assert abs(spec.tensor_bytes - published) <= TOLERANCE * published + entry.published_rounding


@pytest.mark.parametrize("name", catalogue_names())
def test_each_skeleton_says_what_it_is(models, name):
    entry, spec = ENTRIES[name], models[name]
    assert spec.header_only
    assert spec.name == f"{entry.title} {entry.quant} (skeleton, header only)"
    assert SKELETON_LABEL in spec.metadata["general.description"].lower()
    assert entry.config_repo in spec.metadata["general.description"]
    assert spec.metadata[CONFIG_SOURCE_KEY] == f"{entry.config_repo} config.json"
    assert spec.file_type_name == entry.quant
    assert spec.unknown == ()
    assert "tokenizer.ggml.tokens" not in spec.metadata


# Published configs (config.json) and what llama.cpp makes of them:
# name: (n_layer, n_embd, n_vocab, context, tied, swa layers, recurrent layers, experts, tensors)
CONFIGS = {
    "llama-3.2-1b-instruct": (16, 2048, 128256, 131072, True, 0, 0, None, 147),
    "llama-3.1-8b-instruct": (32, 4096, 128256, 131072, False, 0, 0, None, 292),
    "llama-3.1-70b-instruct": (80, 8192, 128256, 131072, False, 0, 0, None, 724),
    "qwen2.5-3b-instruct": (36, 2048, 151936, 32768, True, 0, 0, None, 434),
    "qwen3-8b": (36, 4096, 151936, 40960, False, 0, 0, None, 399),
    "qwen3-14b": (40, 5120, 151936, 40960, False, 0, 0, None, 443),
    "qwen3-32b": (64, 5120, 151936, 40960, False, 0, 0, None, 707),
    "qwen3-30b-a3b-instruct-2507": (48, 2048, 151936, 262144, False, 0, 0, 128, 579),
    "mistral-small-3.2-24b-instruct-2506": (40, 5120, 131072, 131072, False, 0, 0, None, 363),
    "gemma-3-4b-it": (34, 2560, 262208, 131072, True, 29, 0, None, 444),
    "gemma-3-12b-it": (48, 3840, 262208, 131072, True, 40, 0, None, 626),
    "gemma-3-27b-it": (62, 5376, 262208, 131072, True, 52, 0, None, 808),
    "phi-4": (40, 5120, 100352, 16384, False, 0, 0, None, 243),
    "gpt-oss-20b": (24, 2880, 201088, 131072, False, 12, 0, 32, 459),
    "deepseek-v2-lite": (27, 2048, 102400, 163840, False, 0, 0, 64, 377),
    "granite-4.0-h-tiny": (40, 1536, 100352, 1048576, True, 0, 36, 64, 666),
    "lfm2-1.2b": (16, 2048, 65536, 128000, True, 0, 10, None, 148),
    "llama-4-scout-17b-16e-instruct": (48, 5120, 202048, 10485760, False, 36, 0, 16, 627),
}


@pytest.mark.parametrize("name", catalogue_names())
def test_facts_follow_the_published_config(models, name):
    spec = models[name]
    facts = (spec.n_layer, spec.n_embd, spec.n_vocab, spec.context_length, spec.tied_embeddings,
             sum(layer.kind == "swa" for layer in spec.layers), sum(layer.kind == "recurrent" for layer in spec.layers),
             spec.expert_count, spec.n_tensors)
    assert facts == CONFIGS[name]


# Tensor-type counts that llama.cpp printed when loading the real published files:
# 8B: mozilla-ai/llamafile issue #516 (bartowski Q4_K_M: f32 66, q4_K 193, q6_K 33);
# gemma-3-4b: ggml-org/llama.cpp pull #22790 (Q4_K_M: f32 205, q4_K 204, q6_K 35).
LOGGED_TYPE_COUNTS = {
    "llama-3.1-8b-instruct": {"F32": 66, "Q4_K": 193, "Q6_K": 33},
    "gemma-3-4b-it": {"F32": 205, "Q4_K": 204, "Q6_K": 35},
}


@pytest.mark.parametrize("name", sorted(LOGGED_TYPE_COUNTS))
def test_tensor_types_match_llama_cpp_load_logs_of_the_real_files(models, name):
    counts = Counter(t.ggml_type.name for t in models[name].tensors)
    assert dict(counts) == LOGGED_TYPE_COUNTS[name]


def test_tied_models_keep_the_table_at_q6_k_and_untied_ones_at_q4_k(models):
    embd = {name: next(t.ggml_type for t in spec.tensors if t.name == "token_embd.weight")
            for name, spec in models.items() if ENTRIES[name].quant == "Q4_K_M"}
    assert {n for n, t in embd.items() if t == T.Q6_K} == {n for n in embd if models[n].tied_embeddings}
    assert {n for n, t in embd.items() if t == T.Q4_K} == {n for n in embd if not models[n].tied_embeddings}


def _types(spec, suffix):
    return {t.layer: t.ggml_type for t in spec.tensors if t.name.endswith(suffix)}


def test_q4_k_m_more_bits_layers_for_32_blocks(models):
    more = [il for il, t in _types(models["llama-3.1-8b-instruct"], "ffn_down.weight").items() if t == T.Q6_K]
    assert more == [0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31]


def test_70b_bumps_the_other_attn_v_to_q5_k(models):
    v = Counter(_types(models["llama-3.1-70b-instruct"], "attn_v.weight").values())
    assert v == {T.Q6_K: 40, T.Q5_K: 40}


def test_hybrid_counts_attn_v_over_attention_layers_only(models):
    v = _types(models["lfm2-1.2b"], "attn_v.weight")
    assert sorted(v) == [2, 5, 8, 10, 12, 14]
    assert [il for il, t in v.items() if t == T.Q6_K] == [8, 14]


def test_moe_routed_down_projections_follow_the_block_rule(models):
    down = _types(models["qwen3-30b-a3b-instruct-2507"], "ffn_down_exps.weight")
    assert sum(t == T.Q6_K for t in down.values()) == sum(use_more_bits(il, 48) for il in range(48))
    assert _types(models["qwen3-30b-a3b-instruct-2507"], "ffn_gate_inp.weight") == dict.fromkeys(range(48), T.F32)


@given(st.integers(min_value=1, max_value=160))
def test_more_bits_always_covers_the_first_and_last_eighth(n):
    picked = [il for il in range(n) if use_more_bits(il, n)]
    assert set(range(n // 8)) <= set(picked)
    assert set(range(7 * n // 8, n)) <= set(picked)


@pytest.mark.parametrize("name", sorted(NEWER_RULES))
def test_the_known_rule_change_explains_the_difference(models, name):
    suffix, old_type, extra = NEWER_RULES[name]
    changed = [t for t in models[name].tensors if t.name.endswith(suffix)]
    assert sum(t.nbytes - tensor_nbytes(t.shape, old_type) for t in changed) == extra
    assert f"{extra:,} bytes" in ENTRIES[name].note


def test_catalogue_covers_the_models_the_issue_names(models):
    for name in ("gpt-oss-20b", "qwen3-8b", "qwen3-14b", "qwen3-32b", "mistral-small-3.2-24b-instruct-2506",
                 "gemma-3-12b-it", "gemma-3-27b-it", "phi-4", "deepseek-v2-lite", "granite-4.0-h-tiny",
                 "llama-4-scout-17b-16e-instruct"):
        assert name in ENTRIES
    assert len(CATALOGUE) >= 16
    assert Counter(t.ggml_type for t in models["gpt-oss-20b"].tensors if t.name.endswith("_exps.weight")) == {
        T.MXFP4: 72}
    assert any(t.name.endswith("attn_sinks.weight") for t in models["gpt-oss-20b"].tensors)
    assert models["deepseek-v2-lite"].kv_lora_rank == 512
    assert models["granite-4.0-h-tiny"].recurrent_state_bytes == (3 * (3072 + 2 * 128) + 128 * 3072) * 4


def test_regenerating_gives_byte_identical_files(tmp_path):
    written = make_catalogue.write_catalogue(tmp_path)
    assert sorted(p.name for p in written) == sorted(p.name for p in SHIPPED.glob("*.gguf"))
    for path in written:
        assert path.read_bytes() == (SHIPPED / path.name).read_bytes(), path.name


def test_catalogue_is_small_and_covers_the_required_kinds():
    assert sum(p.stat().st_size for p in SHIPPED.glob("*.gguf")) < 1024 * 1024
    kinds = " ".join(e.kind for e in CATALOGUE)
    for word in ("dense", "MoE", "sliding window", "hybrid"):
        assert word in kinds


def test_find_entry_is_case_insensitive_and_names_the_choices():
    assert find_entry(" Gemma-3-4B-it ") is ENTRIES["gemma-3-4b-it"]
    with pytest.raises(RequestError, match="choose one of: llama-3.2-1b-instruct, .*lfm2-1.2b"):
        find_entry("llama-2-7b")


@pytest.mark.parametrize("name, size", [("Has Space", 1), ("UPPER", 1), ("ok", 0)])
def test_entries_validate_on_construction(name, size):
    with pytest.raises(RequestError):
        CatalogueEntry(name=name, title="t", kind="dense", quant="Q4_K_M", config_repo="a/b",
                       published_file_bytes=size, published_source="s")


@pytest.mark.parametrize("name", catalogue_names())
def test_every_entry_plans_and_fits_with_no_fact_missing(models, name):
    spec = models[name]
    machine = what_if(hypothetical_machine(256 * 1024**3, captured_at=0), gpus=hypothetical_gpus(1, 24 * 1024**3))
    plan = plan_memory(spec, BudgetRequest(budget=Budget.of(16 * 1024**3), ctx_cap=8192))
    fit = estimate_fit(spec, machine, FitRequest(ctx=8192))
    assert plan.feasible and plan.ctx > 0
    assert fit.verdict != FitVerdict.UNKNOWN and fit.unknowns == ()
