"""Sliding-window layers as llama.cpp builds them, and the cells it gives them (window + ubatch, up to 256).

Each row is read off src/models/<arch>.cpp of the pinned revision: the default period, dense
first or sliding first, default and forced windows.
"""

from __future__ import annotations

import pytest
from gguf_factory import ArchDesc

from gguf_budget.core.fit.estimate import FitRequest, estimate_fit
from gguf_budget.core.fit.runtime_types import EngineSettings
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.model.kv import engine_kv_breakdown, engine_layer_kv_table, layer_kv
from gguf_budget.core.model.spec import LayerAttention, LayerKind
from gguf_budget.core.model.swa_rules import SWA_RULES, sliding_windows

S, F = "S", "F"  # a sliding layer, a full one


def _kinds(windows):
    return "".join(S if w else F for w in windows)


SWA_TABLE = [
    # arch, layers, file window, pattern key → layer kinds, window
    ("gemma3", 12, 512, None, "SSSSSFSSSSSF", 512),
    ("gemma3", 6, None, None, "FFFFFF", None),            # gemma3 slides only with a window key
    ("gemma3", 6, 0, None, "FFFFFF", None),               # a key of 0 turns sliding off
    ("gemma2", 4, None, None, "SFSF", 4096),              # gemma2 assumes 4096
    ("gemma2", 4, 2048, None, "SFSF", 2048),
    ("gemma3n", 5, 512, None, "SSSSF", 512),
    ("cohere2", 8, 4096, None, "SSSFSSSF", 4096),
    ("cohere2moe", 8, 4096, None, "FSSSFSSS", 4096),      # dense first
    ("olmo2", 8, 4096, None, "SSSFSSSF", 4096),
    ("olmo2", 8, None, None, "FFFFFFFF", None),
    ("exaone4", 8, 4096, None, "FFFFFFFF", None),         # only the 64-layer model slides
    ("exaone4", 64, None, None, "SSSF" * 16, 4096),
    ("exaone-moe", 4, 128, None, "SSSF", 128),
    ("llama4", 8, None, None, "SSSFSSSF", 8192),          # chunked attention, 8192 whatever the file says
    ("llama4", 8, 1024, None, "SSSFSSSF", 8192),
    ("llama4", 8, 0, None, "FFFFFFFF", None),
    ("smallthinker", 8, 2048, None, "FSSSFSSS", 4096),    # dense first, window forced to 4096
    ("smallthinker", 8, None, None, "FFFFFFFF", None),
    ("plamo3", 8, 2048, None, "SSSSSSSF", 2048),
    ("laguna", 4, 1024, None, "FSSS", 1024),
    ("modern-bert", 6, 128, None, "FSSFSS", 128),
    ("gpt-oss", 4, 128, None, "SFSF", 128),
    ("afmoe", 4, 1024, None, "SSSF", 1024),
    ("lfm2", 3, 512, None, "SSS", 512),                   # period 0: every attention layer
    ("gemma3", 6, 512, 3, "SSFSSF", 512),                 # the key as a period
    ("gemma3", 6, 512, (True, False), "SFSFSF", 512),     # the key as an array, tiled
    ("cohere2moe", 6, 512, 3, "FSSFSS", 512),             # a period from the file keeps dense first
    ("gemma4", 4, 512, (True, True, False, True), "SSFS", 512),
    ("gemma4", 4, 512, None, "FFFF", None),               # array-only architectures need the array
    ("llama", 4, 4096, (True, False), "FFFF", None),      # no rule: the key is ignored, as llama.cpp does
    ("phi3", 4, 2048, None, "FFFF", None),
]


@pytest.mark.parametrize("arch, n_layer, window, pattern, kinds, expected_window", SWA_TABLE)
def test_sliding_windows_per_architecture(arch, n_layer, window, pattern, kinds, expected_window):
    windows = sliding_windows(arch, n_layer, window, pattern)
    assert _kinds(windows) == kinds
    assert {w for w in windows if w} == ({expected_window} if expected_window else set())


def test_every_rule_is_one_llama_cpp_applies():
    assert {"exaone4", "olmo2", "llama4", "cohere2moe", "smallthinker", "plamo3"} <= set(SWA_RULES)


def test_a_file_without_a_pattern_key_is_priced_by_its_architecture(model):
    """olmo2 with a window and no `sliding_window_pattern`: three of four layers slide."""
    spec = model(ArchDesc(arch="olmo2", n_layer=8, n_embd=256, n_head=4, n_head_kv=4, sliding_window=1024))
    assert [layer.kind for layer in spec.layers] == [LayerKind.SWA] * 3 + [LayerKind.FULL] + [LayerKind.SWA] * 3 + [
        LayerKind.FULL]
    per_cell = 4 * (64 + 64) * 2  # 4 KV heads of 64 dims, f16
    # ctx 8192: full layers 8192 cells; sliding min(8192, 1024 + 512) = 1536 (already a multiple of 256)
    assert engine_kv_breakdown(spec, 8192).total == 2 * 8192 * per_cell + 6 * 1536 * per_cell


ROUNDING_TABLE = [
    # window, ctx, ubatch → cells of a sliding layer
    (100, 2048, 512, 768),    # min(2048, 612) = 612 → 768 (llama.cpp measured 768)
    (128, 2048, 512, 768),    # gpt-oss: 640 → 768
    (512, 2048, 512, 1024),   # gemma3-270m: 1024, as its log says
    (512, 512, 512, 512),     # ctx is smaller: 512
    (4096, 8192, 512, 4608),  # 4608 is 18 · 256
    (100, 300, 512, 512),     # ctx 300 pads to 512; min(512, 612) = 512
    (1000, 65536, 256, 1280),  # a smaller ubatch: 1256 → 1280
]


@pytest.mark.parametrize("window, ctx, ubatch, cells", ROUNDING_TABLE)
def test_a_sliding_layer_rounds_its_cells_up_to_256(model, window, ctx, ubatch, cells):
    spec = model(ArchDesc(arch="gemma3", n_layer=6, n_embd=256, n_head=4, n_head_kv=1, head_dim=64,
                          sliding_window=window))
    per_cell = 1 * (64 + 64) * 2
    table = engine_layer_kv_table(spec, ctx, ubatch=ubatch)
    assert table[0] == cells * per_cell
    assert table[5] == -(-ctx // 256) * 256 * per_cell  # the full layer holds the padded context


def test_swa_full_gives_sliding_layers_every_cell(model):
    spec = model(ArchDesc(arch="gemma3", n_layer=6, n_embd=256, n_head=4, n_head_kv=1, head_dim=64, sliding_window=100))
    per_cell = 256
    assert engine_layer_kv_table(spec, 2048, swa_full=True) == (2048 * per_cell,) * 6
    e = estimate_fit(spec, hypothetical_machine(64 * 1024**3), FitRequest(ctx=2048, engine=EngineSettings(swa_full=True)))
    assert e.kv.engine == 6 * 2048 * per_cell


def test_the_fit_estimate_uses_the_rounded_cells(model):
    spec = model(ArchDesc(arch="gemma3", n_layer=6, n_embd=256, n_head=4, n_head_kv=1, head_dim=64, sliding_window=100))
    e = estimate_fit(spec, hypothetical_machine(64 * 1024**3), FitRequest(ctx=2048))
    assert e.kv.engine == (5 * 768 + 2048) * 256


def test_the_plain_layer_rule_does_not_round():
    layer = LayerAttention(LayerKind.SWA, 8, 1, 64, 64, 100)
    assert layer_kv(layer, "f16", None, swa_extra=512).at(2048) == 612 * 256
    assert layer_kv(layer, "f16", None, swa_extra=512, swa_pad=256).at(2048) == 768 * 256
