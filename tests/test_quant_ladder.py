"""The quant ladder: every file type priced and judged on one (hypothetical) machine, the best fit marked."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from gguf_factory import MIXTRAL_8X7B, ArchDesc, write_gguf

from gguf_budget.core.errors import RequestError
from gguf_budget.core.fit.ctx.auto_ctx import FitCtxReason
from gguf_budget.core.model.context import DEFAULT_CTX
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, FitRequest, estimate_fit, load_model
from gguf_budget.core.explorer.derive import derive
from gguf_budget.core.explorer.full_load import full_load
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.machine.bandwidth import Bandwidths, typed_bandwidth
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.core.views.speed_view import decode_cell, speed_dict
from gguf_budget.core.fit.types import FitVerdict
from gguf_budget.core.machine.presets import with_presets
from gguf_budget.gui.cli import main
from gguf_budget.core.machine.snapshot import hypothetical_gpus, hypothetical_machine, what_if
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.quant.ladder import (
    FULLY_IN_RAM, FULLY_ON_GPU, HEAVY_LOSS_BPW, SLOWDOWN_LIMIT, LadderRequest, price_types,
    quant_ladder,
)
from gguf_budget.core.fit.ctx.max_ctx import largest_fitting_ctx
from gguf_budget.core.views.quant_report import (
    BEST_MARK, COLUMNS, HEAVY_LOSS_MARK, RECOMMENDED_MARK, RECOMMENDED_RULE, ladder_dict, ladder_text,
)

pytestmark = pytest.mark.slow  # every file type of a 70B judged at every ctx the searches ask (CI hands the file out first)

GiB = 1024**3


def machine(ram_gib: float, gpu_gib: float | None = None):
    snapshot = hypothetical_machine(int(ram_gib * GiB), captured_at=0)
    gpus = () if gpu_gib is None else hypothetical_gpus(1, int(gpu_gib * GiB))
    return what_if(snapshot, gpus=gpus)


@pytest.fixture(scope="module")
def ladder70b(llama70b):
    return quant_ladder(llama70b, machine(64, 24))


def test_70b_on_a_24_gib_gpu_and_64_gib_ram_marks_a_best_fit_and_a_type_that_does_not_fit(ladder70b):
    assert ladder70b.best == "IQ2_XXS" and ladder70b.best_reason == FULLY_ON_GPU
    assert ladder70b.row("IQ2_XXS").fit.verdict == FitVerdict.FITS_GPU
    assert {r.name for r in ladder70b.rows if r.fit.verdict == FitVerdict.DOES_NOT_FIT} == {"BF16", "F16"}
    assert ladder70b.ctx is None and DEFAULT_CTX <= ladder70b.row("IQ2_XXS").ctx <= ladder70b.source.context_length
    assert ladder70b.row("Q4_K_M").is_source


def test_best_fit_is_the_highest_precision_fully_on_gpu_else_fully_in_ram(ladder70b, llama70b):
    bpw = [r.mix.bits_per_weight for r in ladder70b.rows]
    assert bpw == sorted(bpw, reverse=True)
    best = ladder70b.rows.index(ladder70b.row(ladder70b.best))
    assert not any(r.fully_on_gpu for r in ladder70b.rows[:best])
    no_gpu = quant_ladder(llama70b, machine(64))
    assert no_gpu.best == "Q6_K" and no_gpu.best_reason == FULLY_IN_RAM    # Q8_0 (69.8 GiB) does not fit 58 GiB
    assert not no_gpu.row("Q8_0").fits_in_ram
    assert quant_ladder(llama70b, machine(8)).best is None


def test_a_bigger_gpu_moves_the_best_fit_up(llama70b):
    """48 GiB − 1.5 GiB reserve = 46.5 GiB usable. Q5_K_S: 45.31 GiB file − 0.67 GiB token_embd (stays
    on the host) + 1.25 GiB KV (4096 cells · 80 layers · 8 heads · 256 · 2 B) = 45.9 GiB: fits;
    Q5_K_M: 46.51 − 0.67 + 1.25 = 47.1 GiB: does not."""
    priced = price_types(llama70b)
    small, big = (quant_ladder(llama70b, machine(64, g), priced=priced).best for g in (24, 48))
    assert (small, big) == ("IQ2_XXS", "Q5_K_S")


def test_largest_ctx_placed_again_at_each_ctx_is_the_largest_admitted_ctx(model):
    """The ladder's question (`largest_fitting_ctx` with no GPU layers held), checked against a walk over every
    256-cell step of a small model on a tight machine."""
    spec = model(ArchDesc(n_layer=4, n_embd=256, n_ff=512, n_head=8, n_head_kv=8, n_vocab=512, context_length=8192))
    tight = machine(6.0 + 24 / 1024)   # 24 MiB above the host reserve
    base = FitRequest(ctx=None, gpu_layers=None)
    walked = max((c for c in range(256, 8193, 256)
                  if estimate_fit(spec, tight, FitRequest(ctx=c)).verdict.admitted), default=None)
    assert walked is not None and walked < 8192
    assert largest_fitting_ctx(spec, tight, base, None, 8192) == walked
    assert largest_fitting_ctx(spec, machine(4), base, None, 8192) is None


def test_each_row_carries_its_budget_plan(llama70b):
    budget = BudgetRequest(budget=Budget.of(24 * GiB), ctx=4096)
    ladder = quant_ladder(llama70b, machine(64, 24), LadderRequest(budget=budget))
    q2, q8 = ladder.row("IQ2_XXS").plan, ladder.row("Q8_0").plan
    assert q2 is not None and q2.feasible and q2.n_pinned == 80      # 17.8 GiB of weights: every layer pinned
    assert q8 is not None and q8.feasible and 0 < q8.n_pinned < 80   # 69.8 GiB: most layers stream
    assert all(r.plan is not None and r.plan_error is None for r in ladder.rows)


def test_each_row_is_judged_at_the_ctx_fit_chooses_or_all_at_the_asked_one(model):
    """One policy with `fit`: no ctx asked, each row's is llama.cpp's default (here the trained 2,048, which fits);
    a ctx asked, every row is judged at it."""
    short = model(ArchDesc(context_length=2048))
    auto = quant_ladder(short, machine(64))
    assert auto.ctx is None and {r.ctx for r in auto.rows} == {2048}
    assert all(r.choice.reason is FitCtxReason.CEILING for r in auto.rows)
    asked = quant_ladder(short, machine(64), LadderRequest(ctx=1000))
    assert asked.ctx == 1000 and {r.ctx for r in asked.rows} == {1000}


def test_mxfp4_is_priced_only_for_models_with_experts(ladder70b):
    assert [name for name, _ in ladder70b.skipped] == ["MXFP4_MOE"]
    gpt = quant_ladder(load_model(catalogue_path(find_entry("gpt-oss-20b"))), machine(64, 24))
    assert gpt.row("MXFP4_MOE").is_source and gpt.skipped == ()


def test_json_keys(ladder70b):
    payload = ladder_dict(ladder70b)
    assert set(payload) == {"model", "architecture", "source_file_type", "label", "rules", "ctx", "ctx_cap", "kv_type",
                            "imatrix",
                            "budget_bytes", "machine", "best_fit", "best_fit_reason", "recommended",
                            "recommended_reason", "recommendation", "rows", "skipped"}
    assert set(payload["rows"][0]) == {
        "file_type", "file_bytes", "tensor_bytes", "bits_per_weight", "tensor_types", "fallback_tensors", "verdict",
        "gpu_layers", "ctx", "ctx_reason", "fully_on_gpu", "fits_in_ram", "largest_ctx", "plan", "plan_error", "best_fit", "recommended",
        "heavy_quality_loss", "source", "tok_s_estimate", "plan_tok_s_estimate", "prefill_tok_s_estimate", "ttft_s_estimate", "prompt_tokens"}
    assert [r["file_type"] for r in payload["rows"] if r["best_fit"]] == ["IQ2_XXS"]


def rows(text: str) -> list[str]:
    """The table's rows with their marks: a row too wide for 100 columns carries its marks on the next line, four
    spaces in."""
    out: list[str] = []
    for line in text.splitlines():
        if line.startswith("    ") and out:
            out[-1] += " " + line.strip()
        else:
            out.append(line)
    return out


def test_text_marks_the_best_fit_once_and_says_priced_not_downloaded(ladder70b):
    text = ladder_text(ladder70b)
    assert text.count(BEST_MARK) == 1
    best_line = next(line for line in rows(text) if BEST_MARK in line)
    assert best_line.startswith("IQ2_XXS")
    assert "priced, not downloaded" in text and "does not fit" in text
    header = text.splitlines()[0]  # the CLI's short headers, in COLUMNS' order (a column with no figure is left out)
    assert header.split() == " ".join(c.short for c in COLUMNS if f" {c.short} " in f" {header} ").split()
    assert header.startswith("Type") and len(header.split()) >= 8


def test_columns_sort_by_their_numbers(ladder70b):
    size = next(c for c in COLUMNS if c.key == "size")
    by_size = sorted(ladder70b.rows, key=size.sort)
    assert by_size[0].name == "IQ2_XXS" and {by_size[-1].name, by_size[-2].name} == {"BF16", "F16"}


def test_a_bad_ctx_is_refused():
    with pytest.raises(RequestError):
        LadderRequest(ctx=0)


def test_priced_types_are_reused_only_for_the_same_model(llama70b, model):
    priced = price_types(llama70b)
    other = model(replace(ArchDesc(), n_layer=3))
    assert quant_ladder(other, machine(64), priced=priced).source is other


TYPED = Bandwidths(ram=typed_bandwidth(30 * GiB), vram=typed_bandwidth(900 * GiB))


def test_each_row_decodes_at_the_speed_fit_and_the_window_give_its_full_load(llama70b):
    """The source row is priced byte for byte as the skeleton, so its estimate is `full_load`'s — the call
    `gguf-budget fit` and the window's full-load line make — at the same ctx, machine and bandwidths."""
    m = machine(64, 24)
    ladder = quant_ladder(llama70b, m, LadderRequest(bandwidths=TYPED))
    source = ladder.row("Q4_K_M")
    state = ExplorerState(model=llama70b, machine=m, bandwidths=TYPED)
    shown = full_load(llama70b, state, TokenPrices.of(llama70b))
    assert source.speed is not None and shown is not None and shown.speed is not None
    assert speed_dict(source.speed) == speed_dict(shown.speed)
    assert source.ctx == shown.ctx and source.fit.gpu_layers == shown.fit.gpu_layers < 81                       # a split: RAM and VRAM both read
    assert source.speed.bytes.ram > 0 and source.speed.bytes.vram > 0


def test_the_decode_column_is_the_full_loads_bound_and_none_when_it_does_not_fit(llama70b):
    ladder = quant_ladder(llama70b, machine(64, 24), LadderRequest(bandwidths=TYPED))
    decode = next(c for c in COLUMNS if c.key == "decode")
    for row in ladder.rows:
        assert (row.speed is None) == (not row.fit.verdict.admitted)
        assert decode.cell(row) == ("—" if row.speed is None else decode_cell(row.speed))
    on_gpu = [r for r in ladder.rows if r.fully_on_gpu]
    assert on_gpu and all(r.speed is not None and r.speed.bytes.ram < 0.05 * r.speed.bytes.vram for r in on_gpu)
    fastest = max(ladder.rows, key=decode.sort)
    assert fastest.name == "IQ2_XXS" and decode.sort(ladder.row("F16")) == 0.0
    faster_gpu = quant_ladder(llama70b, machine(64, 24), LadderRequest(
        bandwidths=Bandwidths(ram=TYPED.ram, vram=typed_bandwidth(1800 * GiB))), price_types(llama70b))
    # twice the bandwidth halves the reads, not the backend's fixed time a token (core.speed.backend_speed Rule 1)
    fast = faster_gpu.row("IQ2_XXS").speed
    assert fast.tok_s > 1.5 * fastest.speed.tok_s
    assert fast.seconds_at(fast.start) == pytest.approx(fastest.speed.seconds_at(fastest.speed.start)
                                                        - fastest.speed.gpu_seconds(fastest.speed.start) / 2
                                                        + fast.gpu.speed.decode_fixed_s * fast.start.vram / fast.start.total / 2,
                                                        rel=0.02)


def test_each_budget_plan_decodes_at_the_speed_the_window_gives_that_plan(llama70b):
    m = machine(64, 24)
    budget = BudgetRequest(budget=Budget.of(24 * GiB), ctx=4096)
    ladder = quant_ladder(llama70b, m, LadderRequest(budget=budget, bandwidths=TYPED))
    for name in ("IQ2_XXS", "Q8_0"):
        row = ladder.row(name)
        view = derive(ExplorerState(model=row.model, budget=Budget.of(24 * GiB), ctx=4096, machine=m, bandwidths=TYPED))
        assert row.plan_speed is not None and speed_dict(row.plan_speed) == speed_dict(view.plan_speed)
    assert ladder.row("Q8_0").plan_speed.bytes.stream > 0 == ladder.row("IQ2_XXS").plan_speed.bytes.stream
    assert all(r.plan_speed is None for r in quant_ladder(llama70b, m).rows)


def test_the_ladders_largest_ctx_places_the_layers_again_where_fit_holds_them(llama70b):
    """One search, two questions: the ladder lets llama.cpp move layers to the host as ctx grows; `fit` and
    the window hold the GPU layers of the ctx asked."""
    m = machine(64, 24)
    ladder = quant_ladder(llama70b, m)
    row = ladder.row("IQ2_XXS")
    cap = llama70b.context_length
    base = row.fit.request
    held = largest_fitting_ctx(row.model, m, base, row.fit.gpu_layers, cap)
    assert row.largest_ctx == largest_fitting_ctx(row.model, m, base, None, cap)
    assert held is not None and row.largest_ctx is not None and held < row.largest_ctx


def _on_tier(ladder):
    return [r for r in ladder.rows if (r.fully_on_gpu if ladder.best_reason == FULLY_ON_GPU else r.fits_in_ram)]


def _assert_the_rule_holds(ladder):
    """Rule 8 from the rows alone: the recommended type is on the best fit's tier; every higher type on
    it decodes more than SLOWDOWN_LIMIT× slower than the next smaller one there; the recommended doesn't."""
    rec = ladder.recommended
    tier = _on_tier(ladder)
    assert rec is not None and rec.tier == ladder.best_reason and rec.name in {r.name for r in tier}

    def slowdown(row):
        smaller = next((r for r in tier if r.mix.bits_per_weight < row.mix.bits_per_weight), None)
        return None if smaller is None else row.speed.seconds_per_token / smaller.speed.seconds_per_token

    at = [r.name for r in tier].index(rec.name)
    assert all(slowdown(r) > SLOWDOWN_LIMIT for r in tier[:at])
    assert slowdown(tier[at]) is None or slowdown(tier[at]) <= SLOWDOWN_LIMIT
    assert [s.name for s in rec.passed_over] == [r.name for r in tier[:at]]


def test_an_8b_on_an_rtx_4090_recommends_q8_0_not_bf16(llama8b):
    """Everything fits the 24 GiB card; BF16 is the best fit, but it decodes ~1.8× slower than Q8_0 for a
    quality gain llama.cpp measures at +0.0026 perplexity: Q8_0 is recommended."""
    ladder = quant_ladder(llama8b, with_presets("RTX 4090", machine(32)))
    assert ladder.best == "BF16" and ladder.best_reason == FULLY_ON_GPU
    rec = ladder.recommended
    assert rec.name == "Q8_0" and ladder.row(rec.name).mix.bits_per_weight >= 6
    assert [s.name for s in rec.passed_over] == ["BF16", "F16"]
    assert all(s.smaller == "Q8_0" and s.slowdown > SLOWDOWN_LIMIT for s in rec.passed_over)
    assert rec.step.smaller == "Q6_K" and rec.step.slowdown <= SLOWDOWN_LIMIT and not rec.heavy_loss
    _assert_the_rule_holds(ladder)


@pytest.mark.parametrize("ram, gpu", [(64, 24), (64, None), (64, 48), (200, None), (32, 80)])
def test_the_recommendation_follows_its_rule_on_every_machine(llama70b, ram, gpu):
    ladder = quant_ladder(llama70b, machine(ram, gpu), LadderRequest(bandwidths=TYPED), price_types(llama70b))
    _assert_the_rule_holds(ladder)
    best = ladder.rows.index(ladder.row(ladder.best))
    assert ladder.rows.index(ladder.row(ladder.recommended.name)) >= best     # never above the best fit


def test_nothing_fits_recommends_nothing(llama70b):
    ladder = quant_ladder(llama70b, machine(8))
    assert ladder.best is None and ladder.recommended is None
    assert ladder_dict(ladder)["recommendation"] is None


def test_types_below_3_bits_per_weight_warn_of_heavy_quality_loss(ladder70b):
    heavy = {r.name for r in ladder70b.rows if r.heavy_loss}
    assert heavy == {r.name for r in ladder70b.rows if r.mix.bits_per_weight < HEAVY_LOSS_BPW} == {"Q2_K", "IQ2_M", "IQ2_XXS"}
    rec = ladder70b.recommended
    assert rec.name == "IQ2_XXS" and rec.heavy_loss and rec.step is None     # the only type on the 24 GiB GPU
    text = ladder_text(ladder70b)
    assert HEAVY_LOSS_MARK in next(line for line in text.splitlines() if line.startswith("Recommended:"))
    assert all(HEAVY_LOSS_MARK in line for line in rows(text) if line.split()[:1] in (["Q2_K"], ["IQ2_M"], ["IQ2_XXS"]))


def test_the_text_marks_the_recommended_type_once_and_says_the_rule(llama8b):
    text = ladder_text(quant_ladder(llama8b, with_presets("RTX 4090", machine(32))))
    assert text.count(RECOMMENDED_MARK) == 1
    assert next(line for line in rows(text) if RECOMMENDED_MARK in line).startswith("Q8_0")
    assert RECOMMENDED_RULE in text and f"{SLOWDOWN_LIMIT:g}× slower" in RECOMMENDED_RULE
    assert "passed over BF16 (1.7" in text


def test_the_row_of_the_files_own_type_is_what_fit_says_of_the_file(tmp_path, capsys):
    """Rule 10: a Mixtral Q4_K_M whose mix is not llama-quantize's (priced again from shapes it was 2 GiB larger:
    27 GPU layers and --n-cpu-moe 6 against fit's 29 and 4 on a 24 GiB GPU)."""
    path = write_gguf(tmp_path / "mixtral.gguf", MIXTRAL_8X7B, "header_only")[0]
    model = load_model(str(path))
    machine = hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=24 * GiB)
    row = next(r for r in quant_ladder(model, machine, LadderRequest()).rows if r.is_source)
    main(["fit", str(path), "--json", "--host-available", "64G", "--gpu-total", "24G"])
    fit = json.loads(capsys.readouterr().out)
    offload = row.choice.fit.moe_offload
    assert row.choice.fit.gpu_layers == fit["gpu_layers"] and offload is not None
    assert row.model is model and row.choice.ctx == fit["ctx"]
    assert offload.n_cpu_moe == fit["moe_n_cpu"]["n_cpu_moe"]


@pytest.mark.parametrize("bits, shown, flagged", [(2.994, "2.99", True), (2.996, "3.00", False), (3.2, "3.20", False)])
def test_the_heavy_loss_flag_follows_the_bits_per_weight_shown(ladder70b, bits, shown, flagged):
    """Rule 9: the flag is judged on the figure the table shows, so no row reads 3.00 flagged (the mix's unrounded
    2.996 once was) or 2.99 unflagged."""
    row = ladder70b.row("Q2_K")

    class Mix:  # the row's mix at another size: only its bits per weight are read
        bits_per_weight = bits

    odd = replace(row, mix=Mix())
    assert (f"{odd.bits_per_weight:.2f}", odd.heavy_loss) == (shown, flagged)
