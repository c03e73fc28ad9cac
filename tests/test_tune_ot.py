"""`tune`'s `-ot` expert placement (`core/explorer/tune_ot.py`) and the decode estimate of `-ot`-moved weights.

The patterns find exactly the tensors each level names (and `_freed` counts their bytes); a block's experts moved by
`-ot` are read as `--n-cpu-moe` reads them; on MoE catalogue skeletons and hypothetical GPUs the answer fits by the
full load's own pricing, is never slower than the `--n-cpu-moe`-only answer for max-speed, a larger GPU never answers
worse; the printed command reads back to the same placement; the window's goal carries it into the session.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import replace
from functools import cache
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_factory import write_gguf
from llama_support import llama_engine
from runnable_model import runnable_desc

from gguf_budget.core import load_model
from gguf_budget.core.explorer.full_load import full_load
from gguf_budget.core.explorer.llama_question import ask
from gguf_budget.core.explorer.session import ApplyGoal, OpenModel, Session, SetMachine
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.explorer.tune import Constraints, Goal, TuneAnswer, tune
from gguf_budget.core.explorer.tune_ot import STEPS, _freed, spelled
from gguf_budget.core.fit.engine_options import EngineOptions
from gguf_budget.core.fit.placement.moe import expert_overrides
from gguf_budget.core.fit.runtime_types import TensorOverride
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.llama_words.reader import read_llama_args
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.measure.engine import EngineKind
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.speed.token_bytes import TokenPrices

pytestmark = pytest.mark.slow  # tune searches over MoE skeletons

GiB = 1 << 30
MOE = ("qwen3-30b-a3b-instruct-2507", "gpt-oss-20b")


@cache
def _model(name: str) -> ModelSpec:
    return load_model(catalogue_path(find_entry(name)))


def _state(name: str, gpu: int, count: int, host: int = 32) -> ExplorerState:
    machine = hypothetical_machine(host * GiB, gpu_count=count, gpu_total=gpu * GiB)
    return ExplorerState(model=_model(name), machine=replace(machine, cpu_features=frozenset()))


@cache
def _tune(name: str, gpu: int, count: int, place: bool = True, goal: Goal = Goal.MAX_SPEED) -> TuneAnswer:
    return tune(_model(name), _state(name, gpu, count), goal, Constraints(place_experts=place))


def _found(model: ModelSpec, overrides: tuple[TensorOverride, ...]) -> set[str]:
    """The tensors the first matching pattern sends to the CPU, as llama.cpp's `std::regex_search` finds them."""
    return {t.name for t in model.tensors
            if next((o.buffer for o in overrides if re.search(o.pattern, t.name)), None) == "CPU"}


def _expected(model: ModelSpec, runs: tuple[tuple[int, int], ...], levels: tuple[int, ...]) -> set[str]:
    """Rule 1 in words: per GPU the experts of the first k blocks of its run, then of the next block the down part
    (r = 1) or the gate and down parts (r = 2); biases too, as llama.cpp's regex finds them."""
    parts = {1: ("down",), 2: ("gate", "down")}
    out = set()
    for (first, _), level in zip(runs, levels, strict=True):
        k, r = divmod(level, STEPS)
        out |= {t.name for t in model.tensors if t.layer is not None and first <= t.layer < first + k
                and ("_exps." in t.name or "_chexps." in t.name)}
        out |= {t.name for t in model.tensors if t.layer == first + k and r
                and any(f".ffn_{p}_exps." in t.name or f".ffn_{p}_chexps." in t.name for p in parts[r])}
    return out


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MOE), st.data())
def test_the_spelled_patterns_find_exactly_each_levels_experts(name, data):
    model = _model(name)
    cuts = sorted(data.draw(st.lists(st.integers(0, model.n_layer), min_size=1, max_size=3, unique=True)))
    edges = [0, *cuts, model.n_layer]
    runs = tuple((a, b - a) for a, b in pairwise(edges))
    levels = tuple(data.draw(st.integers(0, count * STEPS)) for _, count in runs)
    n, ots = spelled(runs, levels)
    assert n is None or not ots  # never --n-cpu-moe beside -ot (the fit prices the pair wrongly)
    found = _found(model, ots + expert_overrides(n or 0))
    expected = _expected(model, runs, levels)
    assert found == expected
    for run, level in zip(runs, levels, strict=True):
        mine = spelled((run,), (level,))
        moved = _found(model, mine[1] + expert_overrides(mine[0] or 0))
        assert _freed(model, run)[level] == sum(t.nbytes for t in model.tensors if t.name in moved)


@pytest.mark.parametrize(("runs", "levels"), [
    (((0, 12),), (7,)),  # one GPU: two whole blocks and block 2's down experts
    (((0, 6), (6, 6)), (4, 8)),  # two GPUs: blocks 0 and 6, 7 whole; block 1's down, block 8's gate and down
    (((0, 4), (4, 4), (8, 4)), (12, 0, 2)),  # a whole run, nothing, a part alone
    (((0, 12),), (9,)),  # blocks 0, 1, 2 whole: --n-cpu-moe 3
])
def test_llama_cpp_moves_exactly_the_tensors_the_spelled_command_names(tmp_path, runs, levels):
    """The real llama.cpp (0c1e570) reads the `-ot` words as the printed command spells them (`EngineOptions.argv`)
    and reports each tensor it moves ('buffer type overridden to CPU', -v): the same set Rule 1 names."""
    path = write_gguf(tmp_path / "moe.gguf", replace(runnable_desc(12), name="tiny-runnable-moe", n_expert=4,
                                                     n_expert_used=2))[0]
    n, ots = spelled(runs, levels)
    argv = EngineOptions(overrides=ots).argv() + (["--n-cpu-moe", str(n)] if n is not None else [])
    engine = llama_engine(EngineKind.COMPLETION)
    done = subprocess.run([engine.executable, "-m", str(path), "-c", "512", "-t", "1", "-p", "hi", "-n", "1",
                           "--no-warmup", "-v", *argv], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    moved = set(re.findall(r"tensor (\S+) \(.*\) buffer type overridden to CPU", done.stdout + done.stderr))
    assert moved == _expected(load_model(path), runs, levels) != set()


@pytest.mark.parametrize("name", MOE)
def test_experts_moved_by_ot_are_read_as_n_cpu_moe_reads_them(name):
    """Rule 10 against Rule 9: the same blocks' experts, spelled both ways, read the same bytes from each tier and
    need the same memory per device (the old estimate read the `-ot` ones from VRAM)."""
    model, n = _model(name), 20
    state = replace(_state(name, 16, 1), gpu_layers=model.n_layer + 1, ctx=4096)
    by_n = full_load(model, replace(state, n_cpu_moe=n), TokenPrices.of(model), largest=False)
    blocks = "|".join(str(b) for b in range(n))
    ot = (TensorOverride(rf"blk\.({blocks})\.ffn_(up|down|gate|gate_up)_(ch|)exps", "CPU"),)
    by_ot = full_load(model, replace(state, engine=replace(state.engine, overrides=ot)), TokenPrices.of(model),
                      largest=False)
    assert by_n is not None and by_ot is not None and by_n.speed is not None
    assert by_ot.speed is not None and by_ot.speed.start == by_n.speed.start and by_ot.speed.full == by_n.speed.full
    assert [d.need for d in by_ot.fit.devices] == [d.need for d in by_n.fit.devices]


@settings(max_examples=6, deadline=None)
@given(st.sampled_from(MOE), st.sampled_from((4, 6, 8)), st.sampled_from((1, 2)))
def test_the_ot_answer_fits_and_is_never_slower_than_n_cpu_moe_alone(name, gpu, count):
    a, plain = _tune(name, gpu, count), _tune(name, gpu, count, place=False)
    assert (a.best is None) == (plain.best is None)
    if a.best is None or plain.best is None:
        return
    assert a.state is not None
    again = full_load(_model(name), a.state, TokenPrices.of(_model(name)))
    assert again is not None and again.fit.verdict.admitted and again.speed is not None
    assert again.speed.tok_s == pytest.approx(a.best.tok_s)
    assert a.best.tok_s >= plain.best.tok_s
    assert not plain.best.knobs.overrides


@settings(max_examples=5, deadline=None)
@given(st.sampled_from(MOE), st.sampled_from((4, 6, 8, 12)), st.sampled_from((4, 6, 8, 12)), st.sampled_from((1, 2)))
def test_a_larger_gpu_never_gives_a_slower_ot_answer(name, gpu_a, gpu_b, count):
    small, large = sorted((gpu_a, gpu_b))
    worse, better = _tune(name, small, count), _tune(name, large, count)
    assert worse.best is not None and better.best is not None
    assert better.best.tok_s >= worse.best.tok_s * (1 - 1e-9)


def test_two_gpus_split_the_experts_by_run_and_a_part_block_is_used():
    """qwen3-30b-a3b on 2 × 6 GiB: `--n-cpu-moe` alone must empty the first GPU's run before the second's gains; the
    placement takes each GPU's own first blocks, and part of one more."""
    a, plain = _tune(MOE[0], 6, 2), _tune(MOE[0], 6, 2, place=False)
    assert a.best is not None and plain.best is not None and a.best.knobs.overrides
    patterns = [o.pattern for o in a.best.knobs.overrides]
    assert any(r"blk\.0" in p or r"blk\.(0|" in p for p in patterns) and any("_down_" in p for p in patterns)
    assert a.best.tok_s > plain.best.tok_s * 1.2


def test_the_printed_command_reads_back_to_the_same_placement():
    a = _tune(MOE[0], 6, 2)
    assert a.best is not None and a.state is not None and a.best.knobs.overrides
    argv = a.best.load.fit.command.argv
    assert argv.count("-ot") == len(a.best.knobs.overrides)
    asked = ask(read_llama_args(argv), _state(MOE[0], 6, 2), _model(MOE[0])).state
    assert asked.engine.overrides == a.state.engine.overrides == a.best.knobs.overrides
    assert asked.gpu_layers == a.state.gpu_layers and asked.n_cpu_moe is None
    again = full_load(_model(MOE[0]), asked, TokenPrices.of(_model(MOE[0])))
    assert again is not None and again.speed is not None
    assert [d.need for d in again.fit.devices] == [d.need for d in a.best.load.fit.devices]
    assert again.speed.tok_s == pytest.approx(a.best.tok_s)


def test_the_windows_goal_carries_the_ot_placement_into_the_session():
    session = Session()
    machine = hypothetical_machine(32 * GiB, gpu_count=2, gpu_total=6 * GiB)
    session.apply(SetMachine(replace(machine, cpu_features=frozenset()), Reserves(), None, None))
    session.apply(OpenModel(_model(MOE[0]), MOE[0]))
    answer = tune(_model(MOE[0]), session.state, Goal.MAX_SPEED, Constraints(keep_file_type=True))
    assert answer.best is not None and answer.best.knobs.overrides
    view = session.apply(ApplyGoal(answer, session.state))
    assert session.state.engine.overrides == answer.best.knobs.overrides
    assert view.full_load is not None and view.full_load.speed is not None
    assert view.full_load.speed.tok_s == pytest.approx(answer.best.tok_s)
    assert session.state.goal is not None and session.state.goal.outcome.startswith("met")


def test_a_floor_only_the_ot_placement_meets_is_met_and_its_context_searched():
    """qwen3-30b-a3b on 2 × 6 GiB at ≥ 12 tok/s: `--n-cpu-moe` alone decodes ≈ 10 (nothing meets it); the placement
    ≈ 15, so max-ctx answers with it, its ctx bisected from the floor."""
    state = _state(MOE[0], 6, 2)
    plain, placed = (tune(_model(MOE[0]), state, Goal.MAX_CTX, Constraints(min_tok_s=12.0, place_experts=p))
                     for p in (False, True))
    assert plain.best is None and plain.binding is not None and plain.binding.startswith("speed")
    assert placed.best is not None and placed.best.knobs.overrides and placed.best.tok_s >= 12.0
    assert placed.best.ctx >= 4096 and placed.best.load.fit.verdict.admitted
