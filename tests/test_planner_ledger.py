"""Ledgers worked out by hand (the price table of docs/budget-plan.md) for small real GGUF files.

Shared arithmetic: Q8_0 stores 32 elements in 34 bytes; n_embd 64, n_ff 128, 4 heads, 2 KV
heads, head dim 64 / 4 = 16, activations fp32. One llama block is
  norms 2·64·4 = 512, q 64·64/32·34 = 4352, k = v = 64·32/32·34 = 2176, o 4352,
  gate = up = down = 64·128/32·34 = 8704        → 39680 bytes.
An f16 KV row per token per layer is 2 KV heads · (16 + 16) · 2 bytes = 128.
"""

from __future__ import annotations

import dataclasses

import pytest
from gguf.constants import GGMLQuantizationType as T
from gguf_factory import ArchDesc, SSMDesc

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import LEDGER_LINES, BudgetRequest, PlanError, missing_facts, plan_memory

BASE = 24 * 1024 * 1024
MiB64 = 64 * 1024 * 1024
SCRATCH = (64 * 8 + 128 * 2 + 4 * 16 + 2 * 2 * 16) * 4  # dim·8 + ffn·2 + q_dim + 2·kv_dim, fp32
LAYER = 39680
HEAD_2048 = 64 * 2048 // 32 * 34  # a 2048-row Q8_0 table: 139264 bytes, 68 per row
HEAD_256 = 64 * 256 // 32 * 34  # a 256-row table: 17408 bytes

UNTIED = ArchDesc(n_layer=4, n_vocab=2048)
TIED = ArchDesc(n_layer=2, n_vocab=2048, tied=True)
GPT2 = ArchDesc(arch="gpt2", n_layer=2, n_head_kv=4, gated_ffn=False, position_embd=True, context_length=1024)
SWA = ArchDesc(arch="gemma2", n_layer=4, sliding_window=256)  # layers 0 and 2 slide over 256 tokens
MOE = ArchDesc(n_layer=2, n_expert=4, n_expert_used=2, expert_ff=32)
MAMBA = ArchDesc(arch="mamba", n_layer=2, ssm=SSMDesc())
MIXED = ArchDesc(n_layer=3, layer_mix={0: {"ffn_gate": T.F16, "ffn_up": T.F16, "ffn_down": T.F16}})


def lines(ctx, *, vocab=256, heads=4, dim=64, out_norm=64 * 4, embeddings, lm_head, kv, ring, pinned,
          scratch=SCRATCH):
    return dict(base=BASE, scratch=scratch, logits=vocab * 4, attn=heads * ctx * 4, resid=ctx * dim * 4,
                out_norm=out_norm, embeddings=embeddings, lm_head=lm_head, kv=kv, ring=ring, pinned=pinned)


# (id, model, request, (ctx, stream_lm_head, n_buffers, n_pinned), ledger)
CASES = [
    ("untied roomy: top ctx, head resident, all pinned, no ring", UNTIED, BudgetRequest(budget=Budget.of(MiB64)),
     (2048, False, 2, 4),
     lines(2048, vocab=2048, embeddings=68 * 2048, lm_head=HEAD_2048, kv=4 * 2048 * 128, ring=0, pinned=4 * LAYER)),
    # Resident at 2048 costs BASE + 1896192 without ring or pins; a 2-buffer ring leaves one byte
    # short of a layer, the 1-buffer fallback pins one: more pinned outranks ring depth.
    ("untied mid: 1-buffer fallback pins more", UNTIED, BudgetRequest(budget=Budget.of(BASE + 1_896_192 + 2 * LAYER + LAYER - 1)),
     (2048, False, 1, 1),
     lines(2048, vocab=2048, embeddings=68 * 2048, lm_head=HEAD_2048, kv=4 * 2048 * 128, ring=LAYER, pinned=LAYER)),
    # Streamed: BASE + 51712 + 852·ctx + ring. 852·ctx ≤ 500000 − 91392 → ctx 384 (resident would need
    # BASE + 518144); room left after one buffer: 81440 → 2 layers.
    ("untied tight: ctx lowered, head streamed", UNTIED, BudgetRequest(budget=Budget.of(BASE + 500_000)),
     (384, True, 1, 2),
     lines(384, vocab=2048, embeddings=68 * 384, lm_head=LAYER, kv=4 * 384 * 128, ring=LAYER, pinned=2 * LAYER)),
    ("untied minimum, exactly", UNTIED, BudgetRequest(budget=Budget.of(BASE + 200_448)),
     (128, True, 1, 0),
     lines(128, vocab=2048, embeddings=68 * 128, lm_head=LAYER, kv=4 * 128 * 128, ring=LAYER, pinned=0)),
    # Resident fixed: BASE + 151296 + 852·ctx (+ one layer) → ctx 256, then 90912 bytes of room → 2 pinned.
    ("untied, head fixed resident", UNTIED, BudgetRequest(budget=Budget.of(BASE + 500_000), head_mode="resident"),
     (256, False, 1, 2),
     lines(256, vocab=2048, embeddings=68 * 256, lm_head=HEAD_2048, kv=4 * 256 * 128, ring=LAYER, pinned=2 * LAYER)),
    ("untied, explicit ctx", UNTIED, BudgetRequest(budget=Budget.of(MiB64), ctx=1000),
     (1000, False, 2, 4),
     lines(1000, vocab=2048, embeddings=68 * 1000, lm_head=HEAD_2048, kv=4 * 1000 * 128, ring=0, pinned=4 * LAYER)),
    ("tied roomy: no embeddings window, head = token_embd", TIED, BudgetRequest(budget=Budget.of(MiB64)),
     (2048, False, 2, 2),
     lines(2048, vocab=2048, embeddings=0, lm_head=HEAD_2048, kv=2 * 2048 * 128, ring=0, pinned=2 * LAYER)),
    # Tied costs BASE + 151296 + 528·ctx + one layer → ctx 384, 6272 bytes of room: nothing pinned.
    ("tied tight: ctx lowered, head stays resident", TIED, BudgetRequest(budget=Budget.of(BASE + 400_000)),
     (384, False, 1, 0),
     lines(384, vocab=2048, embeddings=0, lm_head=HEAD_2048, kv=2 * 384 * 128, ring=LAYER, pinned=0)),
    # GPT-2 block: norms 512, qkv 64·192/32·34 = 13056, o 4352, up = down = 8704 → 35328; 4 KV heads.
    ("gpt2: output norm and bias plus learned positions", GPT2, BudgetRequest(budget=Budget.of(MiB64)),
     (1024, False, 2, 2),
     lines(1024, out_norm=2 * 64 * 4 + 64 * 1024 * 4, embeddings=HEAD_256, lm_head=HEAD_256,
           kv=2 * 1024 * 4 * 32 * 2, ring=0, pinned=2 * 35328, scratch=(64 * 8 + 128 * 2 + 4 * 16 + 2 * 4 * 16) * 4)),
    ("sliding window: two layers capped at 256 cells", SWA, BudgetRequest(budget=Budget.of(MiB64)),
     (2048, False, 2, 4),
     lines(2048, embeddings=HEAD_256, lm_head=HEAD_256, kv=2 * 2048 * 128 + 2 * 256 * 128, ring=0, pinned=4 * LAYER)),
    ("sliding window, q8_0 cache: 32 elements in 34 bytes", SWA, BudgetRequest(budget=Budget.of(MiB64), kv_type="q8_0"),
     (2048, False, 2, 4),
     lines(2048, embeddings=HEAD_256, lm_head=HEAD_256, kv=2 * 2048 * 68 + 2 * 256 * 68, ring=0, pinned=4 * LAYER)),
    ("sliding window, f32 cache", SWA, BudgetRequest(budget=Budget.of(MiB64), kv_type="f32"),
     (2048, False, 2, 4),
     lines(2048, embeddings=HEAD_256, lm_head=HEAD_256, kv=2 * 2048 * 256 + 2 * 256 * 256, ring=0, pinned=4 * LAYER)),
    ("sliding window, ctx under the window", SWA, BudgetRequest(budget=Budget.of(MiB64), ctx=128),
     (128, False, 2, 4),
     lines(128, embeddings=68 * 128, lm_head=HEAD_256, kv=4 * 128 * 128, ring=0, pinned=4 * LAYER)),
    # MoE block: attention 13056, router 64·4·4 = 1024, 3 expert tensors 64·32·4/32·34 = 8704, norms 512.
    ("moe roomy: routed experts are layer bytes", MOE, BudgetRequest(budget=Budget.of(MiB64)),
     (2048, False, 2, 2),
     lines(2048, embeddings=HEAD_256, lm_head=HEAD_256, kv=2 * 2048 * 128, ring=0, pinned=2 * 40704)),
    # Resident at 2048: BASE + 1121024; one byte short of ring + a layer → the ring streams both.
    ("moe: one MoE layer per ring slot", MOE, BudgetRequest(budget=Budget.of(BASE + 1_121_024 + 2 * 40704 - 1)),
     (2048, False, 1, 0),
     lines(2048, embeddings=HEAD_256, lm_head=HEAD_256, kv=2 * 2048 * 128, ring=40704, pinned=0)),
    # Mamba: fixed F32 state (d_conv − 1)·d_inner + d_state·d_inner = (3·128 + 16·128)·4 = 9728 per layer.
    ("recurrent: KV is a fixed state", MAMBA, BudgetRequest(budget=Budget.of(MiB64)),
     (2048, False, 2, 2),
     lines(2048, embeddings=HEAD_256, lm_head=HEAD_256, kv=2 * 9728, ring=0, pinned=2 * 44064)),
    # Layer 0 with F16 ffn: 512 + 13056 + 3·64·128·2 = 62720; the ring slot is that largest layer and
    # pins count real sizes. Resident at 2048 costs BASE + 1383168; all three layers pinned would add
    # 62720 + 2·39680 = 142080, one byte more than given; ring + layer 0 = 125440 fits, layer 1 does not.
    ("heterogeneous layers: real per-layer sizes", MIXED, BudgetRequest(budget=Budget.of(BASE + 1_383_168 + 142_080 - 1)),
     (2048, False, 1, 1),
     lines(2048, embeddings=HEAD_256, lm_head=HEAD_256, kv=3 * 2048 * 128, ring=62720, pinned=62720)),
]


@pytest.mark.parametrize(("desc", "request_", "knobs", "ledger"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hand_worked_ledgers(model, desc, request_, knobs, ledger):
    plan = plan_memory(model(desc), request_)
    assert plan.feasible and not plan.overridden
    assert (plan.ctx, plan.stream_lm_head, plan.n_buffers, plan.n_pinned) == knobs
    assert dict(plan.ledger.items()) == ledger
    assert plan.total == sum(ledger.values()) <= request_.budget.limit
    assert plan.weight_ceiling == request_.budget.limit - sum(ledger[k] for k in
                                                              ("base", "scratch", "logits", "attn", "resid", "kv"))


def test_one_byte_under_the_minimum_is_impossible_and_shows_the_minimum(model):
    plan = plan_memory(model(UNTIED), BudgetRequest(budget=Budget.of(BASE + 200_447)))
    assert not plan.feasible and plan.impossible and plan.weight_ceiling is None
    assert (plan.ctx, plan.stream_lm_head, plan.n_buffers, plan.n_pinned) == (128, True, 1, 0)
    assert plan.minimum_required == plan.total == BASE + 200_448
    assert plan.ledger == plan.minimum_ledger


def test_ledger_items_follow_the_contract_order(model):
    plan = plan_memory(model(UNTIED), BudgetRequest(budget=Budget.of(MiB64)))
    assert tuple(name for name, _ in plan.ledger.items()) == LEDGER_LINES
    assert plan.ledger.total() == sum(v for _, v in plan.ledger.items())


def test_other_global_tensors_are_priced_with_the_output_norm(model):
    spec = model(UNTIED)
    extra = dataclasses.replace(spec, global_bytes=dataclasses.replace(spec.global_bytes, other=5000))
    before, after = plan_memory(spec, BudgetRequest(budget=Budget.of(MiB64))), plan_memory(extra, BudgetRequest(budget=Budget.of(MiB64)))
    assert after.ledger.out_norm - before.ledger.out_norm == 5000 == after.total - before.total


@pytest.mark.parametrize(("fact", "value"), [("n_embd", None), ("n_vocab", None), ("n_ff", None),
                                             ("n_head", None), ("head_dim_k", None)])
def test_a_missing_fact_is_named_never_priced_as_zero(model, fact, value):
    spec = dataclasses.replace(model(UNTIED), **{fact: value})
    assert fact in missing_facts(spec)
    with pytest.raises(PlanError, match=fact):
        plan_memory(spec, BudgetRequest(budget=Budget.of(MiB64)))


def test_unknown_attention_facts_and_recurrent_state_are_refused(model):
    spec = model(MAMBA)
    assert missing_facts(spec) == ()
    with pytest.raises(PlanError, match="recurrent_state"):
        plan_memory(dataclasses.replace(spec, recurrent_state_bytes=None), BudgetRequest(budget=Budget.of(MiB64)))
    llama = model(UNTIED)
    unknown = tuple(dataclasses.replace(layer, kind="unknown") for layer in llama.layers)
    with pytest.raises(PlanError, match="KV"):
        plan_memory(dataclasses.replace(llama, layers=unknown), BudgetRequest(budget=Budget.of(MiB64)))
