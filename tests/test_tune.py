"""`tune`: the goal-driven search over llama.cpp's settings, held to the full load's own pricing.

Properties on catalogue skeletons and hypothetical machines: the answer fits by `full_load`'s verdict and meets its
floors; a higher speed floor never lengthens the context; a larger machine never answers worse; a goal nothing meets
names the constraint that binds; q4_0 KV only when allowed, and then with its quality note.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_budget.core import load_model
from gguf_budget.core.explorer.full_load import full_load
from gguf_budget.core.explorer.llama_question import ask
from gguf_budget.core.llama_words.reader import read_llama_args
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.explorer.tune import (
    CTX_STEP, Constraints, Goal, Knobs, TuneAnswer, _fewest_cpu_moe, _Pricer, tune,
)
from gguf_budget.core.fit.server.slots import MAX_SLOTS
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.model.kv import KVType
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.gui.cli import main

pytestmark = pytest.mark.slow  # minutes of searches over catalogue models (CI hands the file out first)

GiB = 1024**3
MODELS = ("llama-3.2-1b-instruct", "qwen3-8b", "qwen3-30b-a3b-instruct-2507", "gemma-3-4b-it")
goals = st.sampled_from(tuple(Goal))
models = st.sampled_from(MODELS)
gpu_gib = st.sampled_from((0, 4, 8, 16, 24))
floors = st.sampled_from((0.0, 5.0, 20.0, 60.0))


@cache
def _model(name: str) -> ModelSpec:
    return load_model(catalogue_path(find_entry(name)))


def _state(name: str, host_gib: int, gpu: int, count: int = 1) -> ExplorerState:
    machine = hypothetical_machine(host_gib * GiB, gpu_count=count if gpu else 0, gpu_total=gpu * GiB)
    return ExplorerState(model=_model(name), machine=replace(machine, cpu_features=frozenset()))


def _tune(name: str, goal: Goal, host_gib: int, gpu: int, **floors: object) -> TuneAnswer:
    return tune(_model(name), _state(name, host_gib, gpu), goal, Constraints(**floors))  # type: ignore[arg-type]


def _score(goal: Goal, a: TuneAnswer) -> float:
    """The goal's figure, larger is better; no answer is worst."""
    b = a.best
    if b is None:
        return float("-inf")
    return {Goal.MAX_CTX: b.ctx, Goal.MAX_SPEED: b.tok_s, Goal.MAX_SLOTS: b.slots, Goal.LEAST_MEMORY: -b.memory}[goal]


@settings(max_examples=12, deadline=None)
@given(models, goals, gpu_gib, floors)
def test_the_answer_fits_by_the_full_loads_own_pricing_and_meets_its_floors(name, goal, gpu, floor):
    a = _tune(name, goal, 16, gpu, min_tok_s=floor)
    assert (a.best is None) == (a.binding is not None)
    if a.best is None:
        return
    state = a.best.knobs.apply(_state(name, 16, gpu), a.best.ctx, a.best.slots)
    again = full_load(_model(name), state, TokenPrices.of(_model(name)))
    assert again is not None and again.fit.verdict.admitted
    assert again.speed is not None and again.speed.tok_s >= floor
    assert a.best.ctx >= 4096 * a.best.slots
    assert again.fit.command == a.best.load.fit.command and "-c" in again.fit.command.argv
    assert all(u.candidate.load.fit.verdict.admitted for u in a.runners_up) and len(a.runners_up) <= 2
    _one_step_more_fails(name, goal, gpu, floor, a)


def _one_step_more_fails(name: str, goal: Goal, gpu: int, floor: float, a: TuneAnswer) -> None:
    """The bisection's answer is the largest: one ctx step (or one slot) more with the same settings fails a floor."""
    b = a.best
    assert b is not None
    model = _model(name)
    if goal is Goal.MAX_CTX and b.ctx < (model.context_length or 0):
        ctx, slots = b.ctx + CTX_STEP, 1
    elif goal is Goal.MAX_SLOTS and b.slots < MAX_SLOTS:
        ctx, slots = 4096 * (b.slots + 1), b.slots + 1
    else:
        return
    more = full_load(model, b.knobs.apply(_state(name, 16, gpu), ctx, slots), TokenPrices.of(model))
    assert more is not None
    assert not more.fit.verdict.admitted or more.speed is None or more.speed.tok_s < floor


@settings(max_examples=10, deadline=None)
@given(models, gpu_gib, floors, floors)
def test_raising_the_speed_floor_never_raises_the_context(name, gpu, low, high):
    low, high = sorted((low, high))
    slow, fast = (_tune(name, Goal.MAX_CTX, 16, gpu, min_tok_s=f) for f in (low, high))
    assert _score(Goal.MAX_CTX, fast) <= _score(Goal.MAX_CTX, slow)


@settings(max_examples=10, deadline=None)
@given(models, st.sampled_from((Goal.MAX_CTX, Goal.MAX_SPEED, Goal.MAX_SLOTS)), gpu_gib, gpu_gib)
def test_a_larger_machine_never_gives_a_worse_answer(name, goal, gpu_a, gpu_b):
    small, large = sorted((gpu_a, gpu_b))
    floors = {"min_tok_s": 5.0} if goal is not Goal.MAX_SPEED else {}
    worse, better = (_tune(name, goal, host, gpu, **floors) for host, gpu in ((16, small), (32, large)))
    assert _score(goal, better) >= _score(goal, worse) * (1 - 1e-9 if goal is Goal.MAX_SPEED else 1)


def test_a_machine_too_small_names_memory_and_the_shortfall():
    a = _tune("qwen3-8b", Goal.MAX_CTX, 2, 0)
    assert a.best is None and a.binding is not None
    assert a.binding.startswith("memory: nothing fits at ctx 4,096") and "short on host by" in a.binding


def test_a_floor_too_fast_names_speed_and_by_how_much():
    a = _tune("llama-3.2-1b-instruct", Goal.MAX_SPEED, 16, 8, min_tok_s=1e6)
    assert a.best is None and a.binding is not None and a.binding.startswith("speed: the fastest that fits")
    fastest = _tune("llama-3.2-1b-instruct", Goal.MAX_SPEED, 16, 8).best
    assert fastest is not None and f"{1e6 - fastest.tok_s:.2f} under the floor of 1e+06" in a.binding


def test_q4_kv_is_chosen_only_when_allowed_and_then_says_what_it_costs():
    plain = _tune("qwen3-8b", Goal.MAX_CTX, 8, 8)
    allowed = _tune("qwen3-8b", Goal.LEAST_MEMORY, 8, 8, allow_q4_kv=True)
    assert plain.best is not None and plain.best.knobs.kv is not KVType.Q4_0 and not plain.notes
    assert allowed.best is not None and allowed.best.knobs.kv is KVType.Q4_0
    assert allowed.notes and "quality" in allowed.notes[0]
    assert "-ctk" in allowed.best.load.fit.command.argv and "q4_0" in allowed.best.load.fit.command.argv


def test_bisection_prices_far_fewer_loads_than_the_grid():
    """Rule 4 by counting work: a 70B on four 24 GiB GPUs against every ctx step of every candidate."""
    a = tune(_model_70b(), _state_70b(), Goal.MAX_CTX, Constraints(min_tok_s=5))
    assert a.best is not None and a.priced <= 30 < (131072 // 256) * 6


def _model_70b() -> ModelSpec:
    return _model("llama-3.1-70b-instruct")


def _state_70b() -> ExplorerState:
    return _state("llama-3.1-70b-instruct", 64, 24, count=4)


@pytest.mark.usefixtures("measured_machine")  # conftest: the run's one measurement of the speed figures
def test_cli_prints_the_command_and_json_agrees(capsys):
    args = ["tune", "--catalog", "qwen3-8b", "--host-available", "16G", "--gpu-total", "8G", "--cpu-features", "none",
            "--goal", "max-ctx", "--min-tok-s", "5"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert main([*args, "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["best"]["verdict"] in ("fits_gpu", "fits_split", "cpu_only") and answer["binding"] is None
    assert " ".join(answer["best"]["command"][3:]) in text and f"ctx {answer['best']['ctx']:,}" in text


@pytest.mark.usefixtures("measured_machine")  # conftest: the run's one measurement of the speed figures
def test_cli_goal_nothing_meets_exits_3_with_the_binding_constraint(capsys):
    assert main(["tune", "--catalog", "qwen3-8b", "--host-available", "2G", "--no-gpu", "--cpu-features", "none",
                 "--goal", "max-speed"]) == 3
    assert "nothing meets it — memory:" in capsys.readouterr().out


def test_a_speed_floor_that_binds_inside_the_context_is_met_at_the_largest_ctx():
    """qwen3-8b on 16 GiB + one 8 GiB GPU at 20 tok/s: the floor caps the context below the trained 40,960 (layers
    leave the GPU as the cache grows), and the bisection lands on the last step that still decodes at 20."""
    a = _tune("qwen3-8b", Goal.MAX_CTX, 16, 8, min_tok_s=20.0)
    assert a.best is not None and 4096 < a.best.ctx < 40960 and a.best.tok_s >= 20.0
    _one_step_more_fails("qwen3-8b", Goal.MAX_CTX, 8, 20.0, a)


@settings(max_examples=8, deadline=None)
@given(models, goals, gpu_gib, st.booleans())
def test_the_printed_command_read_back_prices_the_same(name, goal, gpu, allow_q4):
    """The answer's command is the answer: read as llama.cpp's words (`ask`) over the same machine it gives the
    same ctx, KV types, -ub, slots and the same fit and speed — nothing the search chose is left off the line."""
    a = tune(_model(name), _state(name, 16, gpu), goal, Constraints(allow_q4_kv=allow_q4))
    if a.best is None:
        return
    argv = [w for w in a.best.load.fit.command.argv]
    searched = _state(name, 16, gpu)
    typed = replace(searched, reserves=replace(searched.reserves, per_gpu=(searched.reserves.gpu,)))
    asked = ask(read_llama_args(argv), typed, _model(name)).state  # the margin searched with, typed: it stays
    again = full_load(_model(name), asked, TokenPrices.of(_model(name)))
    assert again is not None and asked.kv_type is a.best.knobs.kv and (asked.v_type or asked.kv_type) is a.best.knobs.kv
    assert (again.ctx, again.fit.verdict, again.fit.gpu_layers) == (a.best.ctx, a.best.load.fit.verdict,
                                                                     a.best.load.fit.gpu_layers)
    assert again.fit.devices == a.best.load.fit.devices
    assert again.speed is not None and a.best.load.speed is not None
    assert again.speed.tok_s == a.best.load.speed.tok_s


def test_experts_to_ram_win_speed_when_the_layers_do_not_fit_and_the_fewest_blocks_are_found():
    """qwen3-30b-a3b on one 16 GiB GPU at 32k: the fastest answer keeps some blocks' experts in RAM (the 5080 story),
    and the bisected N is the fewest that put every repeating layer on the GPU: one fewer leaves a layer off."""
    name, ctx = "qwen3-30b-a3b-instruct-2507", 32768
    a = tune(_model(name), _state(name, 64, 16), Goal.MAX_SPEED, Constraints(min_ctx=ctx))
    assert a.best is not None and a.best.knobs.n_cpu_moe
    pricer = _Pricer(_model(name), _state(name, 64, 16), 0.0)
    # the plain split of the same cache and ubatch (the runners-up are now other -ub of the same offload: with each
    # device's compute buffer counted, -ub changes what fits)
    plain = pricer.price(replace(a.best.knobs, n_cpu_moe=None), a.best.ctx)
    assert plain.load.fit.verdict.admitted and a.best.tok_s > plain.tok_s
    n = _fewest_cpu_moe(pricer, ctx, KVType.F16)
    assert n is not None and 0 < n < _model(name).n_layer

    def layers(k: int) -> int:
        return pricer.price(Knobs(kv=KVType.F16, ubatch=512, n_cpu_moe=k, cache_ram_mib=None), ctx).load.fit.gpu_layers

    assert layers(n) >= _model(name).n_layer > layers(n - 1)


REPO = "someone/Tiny-GGUF"


@cache
def _hub_model(where: str) -> ModelSpec:
    """A llama of 8 blocks of 1024 in Q8_0, as a file of the Hugging Face cache (its repository known) or of a plain
    folder (unknown)."""
    import tempfile
    from pathlib import Path

    from gguf_factory import ArchDesc, write_gguf

    folder = Path(tempfile.mkdtemp()) / (f"hub/models--{REPO.replace('/', '--')}/snapshots/0123abcd"
                                         if where == "hub" else "models")
    folder.mkdir(parents=True)
    desc = ArchDesc(n_layer=8, n_embd=1024, n_ff=4096, n_head=16, n_head_kv=4, n_vocab=4096, context_length=8192)
    return load_model(str(write_gguf(folder / "tiny-Q8_0.gguf", desc, "header_only")[0]))


def _hub_tune(where: str, goal: Goal, **asked: object) -> TuneAnswer:
    model = _hub_model(where)
    machine = replace(hypothetical_machine(16 * GiB), cpu_features=frozenset())
    return tune(model, ExplorerState(model=model, machine=machine), goal, Constraints(**asked))  # type: ignore[arg-type]


def test_the_quant_is_searched_only_when_the_repository_is_known_and_its_quality_cost_is_noted():
    """max-speed reads fewer bytes in fewer bits: with the repository known the answer is another type, priced and
    fetched by `-hf`, with a note of its bits against the file's; never one with heavy loss unless allowed."""
    from gguf_budget.core.quant.ladder import HEAVY_LOSS_BPW
    from gguf_budget.core.views.quant_report import HEAVY_LOSS_MARK
    from gguf_budget.core.views.remote_command import runnable

    plain = _hub_tune("plain", Goal.MAX_SPEED)
    assert plain.quants == () and plain.best is not None and plain.best.knobs.quant is None and not plain.notes
    known = _hub_tune("hub", Goal.MAX_SPEED)
    b = known.best
    assert known.quants and b is not None and b.knobs.quant is not None and b.tok_s > plain.best.tok_s
    assert HEAVY_LOSS_BPW <= b.bits < 8.5 and all(HEAVY_LOSS_MARK not in n for n in known.notes)
    assert any("fewer bits cost quality" in n and b.knobs.quant in n for n in known.notes)
    command = runnable(b.load.fit.command)
    assert command is not None and f"{REPO}:{b.knobs.quant}" in command.argv
    heavy = _hub_tune("hub", Goal.MAX_SPEED, allow_heavy_quant=True).best
    assert heavy is not None and heavy.bits < HEAVY_LOSS_BPW
    assert any(HEAVY_LOSS_MARK in n for n in _hub_tune("hub", Goal.MAX_SPEED, allow_heavy_quant=True).notes)


def test_a_goal_the_files_own_type_meets_as_well_keeps_it():
    """max-ctx on a machine where every type reaches the trained context: nothing to download (Rule 3's tie-break)."""
    a = _hub_tune("hub", Goal.MAX_CTX)
    assert a.quants and a.best is not None and a.best.ctx == 8192 and a.best.knobs.quant is None and not a.notes


def test_fa_on_is_tried_only_where_llama_cpps_auto_leaves_it_off():
    """`-fa off` where auto is on is dominated by the pricing (Rule 4) and never priced; llama-cpp-python's auto is
    off, so there an f16 cache also tries `-fa on`, and max-ctx on a tight machine takes it or a quantized cache."""
    from gguf_budget.core.explorer.tune import _knobs
    from gguf_budget.core.fit.runtime_types import Runtime

    model = _model("qwen3-8b")
    assert all(k.flash_attn is None for k in _knobs(model, False, {}, True))
    assert {k.flash_attn for k in _knobs(model, False, {}, False) if k.kv is KVType.F16} == {None, True}
    state = replace(_state("qwen3-8b", 12, 0), runtime=Runtime.LLAMA_CPP_PYTHON)
    a = tune(model, state, Goal.MAX_CTX, Constraints())
    assert a.best is not None and "-fa" in a.best.load.fit.command.argv
    assert a.best.load.fit.command.argv[a.best.load.fit.command.argv.index("-fa") + 1] == "on"


def test_least_memory_prices_the_fewest_gpu_layers_that_meet_the_speed_floor():
    """A 70B on four 24 GiB GPUs at 2 tok/s: the `-ngl` stage's candidate is the fewest layers that still decode at
    the floor (one fewer does not), and the answer takes it only where it saves more than MEMORY_STEP."""
    from gguf_budget.core.explorer.tune import MEMORY_STEP, _fewest_layers

    floor = 2.0
    a = tune(_model_70b(), _state_70b(), Goal.LEAST_MEMORY, Constraints(min_tok_s=floor))
    assert a.best is not None and a.best.tok_s >= floor
    fewer = _fewest_layers(_Pricer(_model_70b(), _state_70b(), floor), a.best)
    assert fewer is not None and fewer.tok_s >= floor and fewer.knobs.gpu_layers is not None
    g = fewer.knobs.gpu_layers
    assert 0 < g < a.best.load.fit.gpu_layers and fewer.load.fit.gpu_layers == g and "-ngl" in fewer.load.fit.command.argv
    less = full_load(_model_70b(), replace(a.best.knobs, gpu_layers=g - 1).apply(_state_70b(), a.best.ctx, 1),
                     TokenPrices.of(_model_70b()))
    assert less is not None and (not less.fit.verdict.admitted or less.speed is None or less.speed.tok_s < floor)
    assert (a.best.knobs.gpu_layers is None) == (fewer.memory > a.best.memory * (1 - MEMORY_STEP))


def test_the_answers_state_is_the_priced_one():
    """`TuneAnswer.state` (what the window's Goal control sets) prices to the answer's own full load."""
    a = _tune("qwen3-30b-a3b-instruct-2507", Goal.MAX_CTX, 32, 16, min_tok_s=5.0)
    assert a.state is not None and a.best is not None
    again = full_load(a.state.model, a.state, TokenPrices.of(a.state.model))
    assert again is not None and again.fit.devices == a.best.load.fit.devices and again.ctx == a.best.ctx


@settings(max_examples=6, deadline=None)
@given(goals, st.booleans())
def test_a_heavy_loss_type_is_chosen_only_when_allowed_and_any_type_below_the_files_says_so(goal, allow):
    """Rule 6 over every goal: the quant search never takes a heavy-loss type unless allowed, and a type with fewer
    bits per weight than the file's always carries the quality note (one with more, only "priced")."""
    from gguf_budget.core.quant.ladder import HEAVY_LOSS_BPW

    a = _hub_tune("hub", goal, allow_heavy_quant=allow)
    assert a.best is not None
    if a.best.knobs.quant is None:
        assert not a.notes
        return
    assert allow or a.best.bits >= HEAVY_LOSS_BPW
    assert (a.best.bits < 8.5) == any("fewer bits cost quality" in n for n in a.notes)  # the file is Q8_0, 8.50 bits


def test_a_goal_asked_in_the_window_keeps_the_open_file():
    """`goal` Rule 2: the window's question searches the open file's own type only, so applying its answer never swaps
    the model under the person; the same goal from the CLI, with the repository known, answers another type."""
    from gguf_budget.core.explorer.goal import DEFAULT_FLOORS, window_floors

    model = _hub_model("hub")
    machine = replace(hypothetical_machine(16 * GiB), cpu_features=frozenset())
    state = ExplorerState(model=model, machine=machine)
    assert DEFAULT_FLOORS == window_floors(DEFAULT_FLOORS.min_tok_s, DEFAULT_FLOORS.min_ctx)
    window = tune(model, state, Goal.MAX_SPEED, window_floors(0.0, 4096))
    assert window.quants == () and window.best is not None and window.best.knobs.quant is None
    assert window.state is not None and window.state.model is model
    cli = _hub_tune("hub", Goal.MAX_SPEED)
    assert cli.best is not None and cli.best.knobs.quant is not None
