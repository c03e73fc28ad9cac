"""`tune` pays only for what its search reads (core/explorer/tune.py Rule 8, core/fit/estimate.py Rule 14,
core/fit/buffers/placed_graph.py Rule 4), counted, not timed: each candidate is priced once and without the fit's
report; a candidate with fixed GPU layers prices one placement; a placement's graph-key blocks are found once for
every ctx it is priced at. And the same answers: every candidate the answer holds is the whole load, report and all,
of its own state.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import pytest

from gguf_budget.core import FitRequest, estimate_fit, load_model
from gguf_budget.core.explorer import tune as tune_module
from gguf_budget.core.explorer.full_load import full_load
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.explorer.tune import (
    Candidate, Constraints, Goal, Knobs, TuneAnswer, _fewest_cpu_moe, _Pricer, tune,
)
from gguf_budget.core.fit import estimate as estimate_module
from gguf_budget.core.fit.buffers.compute_graph import GraphSettings
from gguf_budget.core.fit.buffers.placed_graph import graph_key
from gguf_budget.core.fit.buffers.sched import Scheduler
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.model.kv import KVType
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.speed.token_bytes import TokenPrices

pytestmark = pytest.mark.slow  # tune searches over a MoE skeleton

GiB = 1 << 30
MOE = "qwen3-30b-a3b-instruct-2507"
DENSE = "llama-3.1-8b-instruct"
CASES = [(MOE, 6, goal) for goal in Goal] + [(DENSE, 4, Goal.MAX_CTX), (DENSE, 4, Goal.LEAST_MEMORY)]
"""Per case: the model, each of two GPUs' GiB, the goal (the MoE model on 2 × 6 GiB: `--n-cpu-moe` and `-ot`)."""


@cache
def _model(name: str) -> ModelSpec:
    return load_model(catalogue_path(find_entry(name)))


def _state(name: str, gpu: int) -> ExplorerState:
    machine = hypothetical_machine(32 * GiB, gpu_count=2, gpu_total=gpu * GiB)
    return ExplorerState(model=_model(name), machine=replace(machine, cpu_features=frozenset()))


def _constraints(goal: Goal) -> Constraints:
    return Constraints() if goal is Goal.MAX_SPEED else Constraints(min_tok_s=8.0)


@cache
def _tune(name: str, gpu: int, goal: Goal) -> TuneAnswer:
    return tune(_model(name), _state(name, gpu), goal, _constraints(goal))


def _figures(c: Candidate, load=None) -> tuple[object, ...]:
    """What the answer reads of a candidate's load: verdict, GPU layers, each device's figures, command, speed."""
    load = load or c.load
    fit = load.fit
    return (fit.verdict, fit.gpu_layers, fit.devices, None if fit.command is None else fit.command.argv,
            load.speed.tok_s, load.speed.tok_s_full)


@pytest.mark.parametrize("name, gpu, goal", CASES)
def test_every_candidate_of_the_answer_is_its_states_whole_load(name, gpu, goal):
    """Rule 8's same answers: the best and the runners-up, priced without a report, read as the whole load of their
    own state reads — its report (the automatic GPU layers beside fixed ones, the MoE strategies, the peak-RSS band)
    and its largest ctx priced too."""
    answer = _tune(name, gpu, goal)
    assert answer.best is not None
    for cand in (answer.best, *(u.candidate for u in answer.runners_up)):
        whole = full_load(cand.state.model, cand.state, TokenPrices.of(cand.state.model))
        assert whole is not None and whole.max_ctx is not None and whole.max_ctx >= cand.ctx
        assert _figures(cand, whole) == _figures(cand)
        assert cand.load.max_ctx is None and cand.load.fit.moe is None and cand.load.fit.memory is None


@pytest.mark.parametrize("goal", list(Goal))
def test_each_candidate_is_priced_once_without_a_report(monkeypatch, goal):
    """Every full load tune asks is a state not asked before in the same call (the `--n-cpu-moe` bisection's loads are
    grid candidates too: 1-9 of 54-84 loads asked twice before) and asks no report (each load ran the MoE strategies' searches
    before, and its largest ctx for the answer)."""
    asked: list[tuple[ExplorerState, dict[str, object]]] = []
    real = tune_module.full_load

    def counting(model, state, prices, *args, **kwargs):
        asked.append((state, kwargs))
        return real(model, state, prices, *args, **kwargs)

    monkeypatch.setattr(tune_module, "full_load", counting)
    answer = tune(_model(MOE), _state(MOE, 6), goal, _constraints(goal))
    assert answer.best is not None and len(asked) == answer.priced
    assert len({state for state, _ in asked}) == len(asked)
    assert all(kwargs.get("report") is False and kwargs.get("largest") is False for _, kwargs in asked)


def test_fixed_gpu_layers_without_a_report_price_one_placement(monkeypatch):
    """estimate Rule 14: `-ngl` given on two GPUs, a search's candidate prices its own placement's compute buffers
    alone — the report's automatic GPU layers beside it bisect over the slots, and its MoE strategies price more —
    with the same verdict, devices and command."""
    priced: list[int] = []
    real = estimate_module.device_computes
    monkeypatch.setattr(estimate_module, "device_computes", lambda *a, **k: priced.append(1) or real(*a, **k))
    model = _model(MOE)
    machine = hypothetical_machine(32 * GiB, gpu_count=2, gpu_total=12 * GiB)
    request = FitRequest(ctx=8192, gpu_layers=model.n_layer + 1, n_cpu_moe=20)
    whole = estimate_fit(model, machine, request)
    reported = len(priced)
    lean = estimate_fit(model, machine, request, report=False)
    assert len(priced) - reported == 1 < reported
    assert lean.verdict.admitted and lean.auto_gpu_layers is None and whole.auto_gpu_layers is not None
    assert (lean.verdict, lean.gpu_layers, lean.devices, lean.command) == (whole.verdict, whole.gpu_layers,
                                                                           whole.devices, whole.command)


def test_a_placements_graph_key_blocks_are_found_once_for_every_ctx(monkeypatch):
    """placed_graph Rule 4: one scheduler (a placement with `--n-cpu-moe`'s override) keyed at a second ctx and ubatch
    asks no weight's device again (every kept block's weights were asked for each key before)."""
    model = _model(MOE)
    n = model.n_layer
    sched = Scheduler(alignments=(256, 256, 32), offload=(32, 32, None), slot_device=(2,) * 5 + (0,) * 20 + (1,) * (n - 24),
                      kv_device=(2,) * 5 + (0,) * 20 + (1,) * (n - 25),
                      overrides=((r"blk\.(3|4|5|6)\.ffn_(up|down|gate|gate_up)_(ch|)exps", 2),))
    asked: list[str] = []
    real = Scheduler.weight_device
    monkeypatch.setattr(Scheduler, "weight_device", lambda self, name: asked.append(name) or real(self, name))
    first = graph_key(model, GraphSettings(ubatch=512, outputs=1, flash_attn=True, full_cells=4096 + 256 * n,
                                           swa_cells=0, rot_k=0, rot_v=0), sched)
    before = len(asked)
    second = graph_key(model, GraphSettings(ubatch=256, outputs=1, flash_attn=True, full_cells=8192 + 256 * n,
                                            swa_cells=0, rot_k=0, rot_v=0), sched)
    assert before > 0 and len(asked) == before
    assert second.blocks == first.blocks and second.signature[1:] == first.signature[1:]


def _bisected(p: _Pricer, ctx: int, kv: KVType) -> int | None:
    """tune Rule 1's fewest `--n-cpu-moe`, as it was found before: a plain bisection of the same test over 0 … L."""
    blocks = p.model.n_layer

    def all_on_gpu(n: int) -> bool:
        load = p.price(Knobs(kv=kv, ubatch=512, n_cpu_moe=n, cache_ram_mib=None), ctx).load
        return load.fit.verdict.admitted and load.fit.gpu_layers >= blocks

    if all_on_gpu(0) or not all_on_gpu(blocks):
        return None
    low, high = 0, blocks
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if all_on_gpu(mid) else (mid, high)
    return high


@pytest.mark.parametrize("gpu, ctx", [(6, 4096), (8, 32768), (10, 131072), (12, 131072), (16, 262144)])
@pytest.mark.parametrize("kv", [KVType.F16, KVType.Q8_0])
def test_the_fewest_cpu_moe_is_the_bisections_in_fewer_loads(gpu, ctx, kv):
    """tune Rule 1's fewest `--n-cpu-moe` is the plain bisection's, aimed from the load with every expert in RAM
    (tune_ot Rule 6): three loads where the aim is right (the bisection's seven or eight here), never more."""
    model, state = _model(MOE), _state(MOE, gpu)
    reference, aimed = _Pricer(model, state, 0.0), _Pricer(model, state, 0.0)
    want = _bisected(reference, ctx, kv)
    assert want is not None and _fewest_cpu_moe(aimed, ctx, kv) == want
    assert aimed.count == 3 < reference.count
