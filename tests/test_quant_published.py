"""Predicted file sizes of every quantization against published GGUF files (±1 %), and tensor types
against what llama.cpp reported for real files.

Sizes are exact bytes from the files' Git LFS pointers, read on the Hub commit pages named
below (bartowski's repositories; each commit uploaded that one file). The models are the
catalogue's header-only skeletons of the same configs, re-priced by `quant_mix` — the files
themselves were never downloaded.
"""

from __future__ import annotations

from collections import Counter

import pytest

from gguf_budget.core import load_model
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.quant.file_types import find_file_type
from gguf_budget.core.quant.mix import quant_mix

TOLERANCE = 0.01

# (catalogue skeleton, file type): (published bytes, where the byte count comes from)
B8 = "bartowski/Meta-Llama-3.1-8B-Instruct-GGUF"
B70 = "bartowski/Meta-Llama-3.1-70B-Instruct-GGUF"
BQ3 = "bartowski/Qwen2.5-3B-Instruct-GGUF"
PUBLISHED = {
    ("llama-3.1-8b-instruct", "Q8_0"): (8_540_775_840, f"{B8} commit 17f4f76 Meta-Llama-3.1-8B-Instruct-Q8_0.gguf"),
    ("llama-3.1-8b-instruct", "Q6_K"): (6_596_011_424, f"{B8} commit 1363ba9 Meta-Llama-3.1-8B-Instruct-Q6_K.gguf"),
    ("llama-3.1-8b-instruct", "Q5_K_M"): (5_732_987_840, f"{B8} commit 71e2559 Meta-Llama-3.1-8B-Instruct-Q5_K_M.gguf"),
    ("llama-3.1-8b-instruct", "Q5_K_S"): (5_599_298_912, f"{B8} commit 56aced1 Meta-Llama-3.1-8B-Instruct-Q5_K_S.gguf"),
    ("llama-3.1-8b-instruct", "Q4_K_M"): (4_920_739_232, f"{B8} @bf5b95e9 Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf"),
    ("llama-3.1-8b-instruct", "Q4_K_S"): (4_692_673_952, f"{B8} commit c69c2dc Meta-Llama-3.1-8B-Instruct-Q4_K_S.gguf"),
    ("llama-3.1-8b-instruct", "IQ4_XS"): (4_447_667_616, f"{B8} commit a0e03d6 Meta-Llama-3.1-8B-Instruct-IQ4_XS.gguf"),
    ("llama-3.1-8b-instruct", "Q3_K_L"): (4_321_961_376, f"{B8} commit 8e15494 Meta-Llama-3.1-8B-Instruct-Q3_K_L.gguf"),
    ("llama-3.1-8b-instruct", "Q3_K_M"): (4_018_922_848, f"{B8} commit 58a2c0f Meta-Llama-3.1-8B-Instruct-Q3_K_M.gguf"),
    ("llama-3.1-8b-instruct", "Q3_K_S"): (3_664_504_160, f"{B8} commit d2cf127 Meta-Llama-3.1-8B-Instruct-Q3_K_S.gguf"),
    ("llama-3.1-8b-instruct", "IQ3_XS"): (3_518_752_160, f"{B8} commit 1ce59e7 Meta-Llama-3.1-8B-Instruct-IQ3_XS.gguf"),
    ("llama-3.1-8b-instruct", "IQ2_M"): (2_948_285_792, f"{B8} commit f1650f9 Meta-Llama-3.1-8B-Instruct-IQ2_M.gguf"),
    ("qwen2.5-3b-instruct", "Q8_0"): (3_285_476_448, f"{BQ3} commit 40aac7d Qwen2.5-3B-Instruct-Q8_0.gguf"),
    ("qwen2.5-3b-instruct", "Q5_K_M"): (2_224_815_264, f"{BQ3} commit 107fee2 Qwen2.5-3B-Instruct-Q5_K_M.gguf"),
    ("qwen2.5-3b-instruct", "Q5_K_S"): (2_169_666_720, f"{BQ3} commit 58a96da Qwen2.5-3B-Instruct-Q5_K_S.gguf"),
    ("qwen2.5-3b-instruct", "Q4_K_M"): (1_929_903_264, f"{BQ3} commit 254600e Qwen2.5-3B-Instruct-Q4_K_M.gguf"),
    ("qwen2.5-3b-instruct", "Q4_K_S"): (1_834_384_544, f"{BQ3} commit 95e93ff Qwen2.5-3B-Instruct-Q4_K_S.gguf"),
    ("qwen2.5-3b-instruct", "Q3_K_L"): (1_707_392_160, f"{BQ3} commit 558fb04 Qwen2.5-3B-Instruct-Q3_K_L.gguf"),
    ("qwen2.5-3b-instruct", "IQ3_M"): (1_488_895_136, f"{BQ3} commit e118764 Qwen2.5-3B-Instruct-IQ3_M.gguf"),
    ("qwen2.5-3b-instruct", "Q3_K_S"): (1_454_357_664, f"{BQ3} commit f86df83 Qwen2.5-3B-Instruct-Q3_K_S.gguf"),
    ("llama-3.1-70b-instruct", "Q5_K_S"): (48_657_451_584, f"{B70} commit 4fc4cb6 Meta-Llama-3.1-70B-Instruct-Q5_K_S.gguf"),
    ("llama-3.1-70b-instruct", "Q4_K_M"): (42_520_398_400, f"{B70} commit c90b0dc Meta-Llama-3.1-70B-Instruct-Q4_K_M.gguf"),
    ("llama-3.1-70b-instruct", "IQ4_XS"): (37_902_666_304, f"{B70} commit ce962c1 Meta-Llama-3.1-70B-Instruct-IQ4_XS.gguf"),
    ("llama-3.1-70b-instruct", "Q3_K_S"): (30_912_055_872, f"{B70} commit 04fad06 Meta-Llama-3.1-70B-Instruct-Q3_K_S.gguf"),
}


def _model(name):
    return load_model(catalogue_path(find_entry(name)))


MODELS = {name: _model(name) for name in {name for name, _ in PUBLISHED}}


def _mix(name, quant):
    return quant_mix(MODELS[name], find_file_type(quant))


@pytest.mark.parametrize("name, quant", sorted(PUBLISHED))
def test_predicted_file_size_is_within_one_percent_of_the_published_file(name, quant):
    published, _ = PUBLISHED[(name, quant)]
    predicted = _mix(name, quant).file_bytes
    assert abs(predicted - published) <= TOLERANCE * published


def test_at_least_eight_quantizations_of_two_models():
    per_model = Counter(name for name, _ in PUBLISHED)
    assert sum(n >= 8 for n in per_model.values()) >= 2


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_tensor_data_is_byte_exact_the_rest_is_the_published_header(name):
    """The published file minus the predicted tensor bytes is the same for every quantization of
    a model (its tokenizer and chat template, which a skeleton does not carry) — to within the
    few KB its metadata varies by between uploads; one tensor of another type would move it by
    hundreds of KB, so the tensor data itself is predicted exactly."""
    gaps = {quant: published - _mix(name, quant).tensor_bytes
            for (model, quant), (published, _) in PUBLISHED.items() if model == name}
    assert max(gaps.values()) - min(gaps.values()) <= 8192, gaps
    assert 3_000_000 < min(gaps.values()) < 10_000_000


# Tensor-type counts llama.cpp printed when loading the real published files:
# Llama-3.1-8B: mozilla-ai/llamafile issue #516 (bartowski Q4_K_M: f32 66, q4_K 193, q6_K 33);
# gemma-3-4b: ggml-org/llama.cpp pull #22790 (Q4_K_M: f32 205, q4_K 204, q6_K 35).
LOGGED_TYPE_COUNTS = {
    ("llama-3.1-8b-instruct", "Q4_K_M"): {"F32": 66, "Q4_K": 193, "Q6_K": 33},
    ("gemma-3-4b-it", "Q4_K_M"): {"F32": 205, "Q4_K": 204, "Q6_K": 35},
}


@pytest.mark.parametrize("name, quant", sorted(LOGGED_TYPE_COUNTS))
def test_type_counts_match_llama_cpp_load_logs_of_the_real_files(name, quant):
    for source in ("Q8_0", "BF16"):  # priced from any source type: the shapes alone decide
        mix = quant_mix(quant_mix_model(name, source), find_file_type(quant))
        assert mix.type_counts == LOGGED_TYPE_COUNTS[(name, quant)]


def quant_mix_model(name, source_quant):
    """The skeleton re-priced to `source_quant` and re-opened as that file type."""
    from gguf_budget.core.quant.priced import priced_model

    model = _model(name)
    return priced_model(model, quant_mix(model, find_file_type(source_quant)))


# ollama.com/library/llama3:70b-instruct-q4_K_M, blob 9c5602db4bb6 (the published file's tensor
# list as the registry shows it; Llama 3 70B has Llama 3.1 70B's shapes, less rope_freqs).
OLLAMA_LLAMA3_70B_Q4_K_M = {
    "token_embd.weight": "Q4_K", "blk.0.attn_k.weight": "Q4_K", "blk.0.attn_norm.weight": "F32",
    "blk.0.attn_output.weight": "Q4_K", "blk.0.attn_q.weight": "Q4_K", "blk.0.attn_v.weight": "Q6_K",
    "blk.0.ffn_down.weight": "Q6_K", "blk.0.ffn_gate.weight": "Q4_K", "blk.0.ffn_norm.weight": "F32",
    "blk.0.ffn_up.weight": "Q4_K",
}


def test_types_match_a_published_tensor_list():
    mix = _mix("llama-3.1-70b-instruct", "Q4_K_M")
    assert {name: mix.type_of(name).name for name in OLLAMA_LLAMA3_70B_Q4_K_M} == OLLAMA_LLAMA3_70B_Q4_K_M
