"""The session's typed changes: each control's value is checked where the change is made, every state the
session holds is one `derive` can read, and no module outside the session writes the state."""

from __future__ import annotations

import ast
import dataclasses
import math
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_budget.core import hypothetical_machine, load_model
from gguf_budget.core.errors import RequestError
from gguf_budget.core.explorer.session import (
    Controls, OpenModel, Session, SetBudget, SetCtx, SetCtxCap, SetEngine, SetKnobs, SetMachine, SetPrefer,
    SetRuntime, SetServer,
)
from gguf_budget.core.explorer.state import BudgetOrigin, ExplorerState, TypedBandwidths
from gguf_budget.core.fit.engine_options import EngineOptions
from gguf_budget.core.fit.runtime_types import Runtime
from gguf_budget.core.fit.server.types import ServerSettings
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.model.kv import KVType
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.plan.types import CtxPolicy, HeadMode
from gguf_budget.core.ranges import BANDWIDTH, BUFFERS, CONTEXT, LAYERS_ASKED, PROMPT_TOKENS

ROOT = Path(__file__).resolve().parents[1]
GiB, MiB = 1 << 30, 1 << 20
DEMO_PATH = Path(str(files("gguf_budget.resources") / "demo-tinyllama-1.1b-chat-q4_k_m.skeleton.gguf"))

CHANGES: dict[type, tuple[str, ...]] = {
    SetBudget: ("budget",), SetCtx: ("ctx",), SetCtxCap: ("ctx_cap",), SetPrefer: ("prefer",),
    SetKnobs: ("n_buffers", "head_mode", "kv_type", "force", "slow_below_tok_s", "prompt_tokens"),
    SetRuntime: ("runtime",), SetServer: ("server",), SetEngine: ("engine", "v_type", "n_cpu_moe"),
}
"""Every control's typed change and the state fields it sets."""

ENUMS = (*HeadMode, *KVType, *CtxPolicy, *Runtime, *BudgetOrigin)
HOSTILE = st.one_of(
    st.none(), st.booleans(), st.integers(-(1 << 70), 1 << 70), st.sampled_from([0, 1, 2, 8, 9, 512, 1 << 24, 10 ** 5000]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["8192", "f16", "q9_9", "stream", "speed", "llama-server", "-1", "nan", ""]),
    st.sampled_from(ENUMS), st.just(Budget.of(300 * MiB)), st.just(Budget.unlimited()),
    st.just(ServerSettings(n_parallel=2)), st.just(EngineOptions()), st.just(Reserves()), st.just(()),
    st.just((1.0, float("nan"))), st.just((1.0, 10 ** 5000)), st.just((1, 2)), st.just(("a",)),
)
"""Strings, negatives, NaN, huge integers, booleans, the wrong enum, the wrong record — and valid values too."""


def sound(state: ExplorerState) -> list[str]:
    """What of `state` `derive` could not read, judged independently of the state's own checks."""
    def whole(v: object, low: int, high: int) -> bool:
        return type(v) is int and low <= v <= high

    bad = {
        "budget": type(state.budget) is Budget, "budget_origin": type(state.budget_origin) is BudgetOrigin,
        "ctx": state.ctx is None or whole(state.ctx, 1, CONTEXT.high),
        "ctx_cap": state.ctx_cap is None or whole(state.ctx_cap, 1, CONTEXT.high),
        "prefer": type(state.prefer) is CtxPolicy, "head_mode": type(state.head_mode) is HeadMode,
        "kv_type": type(state.kv_type) is KVType, "v_type": state.v_type is None or type(state.v_type) is KVType,
        "runtime": type(state.runtime) is Runtime, "force": type(state.force) is bool,
        "n_buffers": whole(state.n_buffers, BUFFERS.low, BUFFERS.high),
        "prompt_tokens": whole(state.prompt_tokens, PROMPT_TOKENS.low, PROMPT_TOKENS.high),
        "n_cpu_moe": state.n_cpu_moe is None or whole(state.n_cpu_moe, 0, LAYERS_ASKED.high),
        "slow_below_tok_s": type(state.slow_below_tok_s) is float and math.isfinite(state.slow_below_tok_s)
        and state.slow_below_tok_s >= 0,
        "server": type(state.server) is ServerSettings, "engine": type(state.engine) is EngineOptions,
        "model": state.model is None or type(state.model) is ModelSpec,
        "machine": state.machine is None or type(state.machine) is HardwareSnapshot,
        "reserves": type(state.reserves) is Reserves, "bandwidths": type(state.bandwidths) is Bandwidths,
        "gpu_layers": state.gpu_layers is None or whole(state.gpu_layers, 0, LAYERS_ASKED.high),
        "tensor_split": state.tensor_split is None or type(state.tensor_split) is tuple and all(
            type(x) is float and 0 <= x < math.inf for x in state.tensor_split),
        "measured": state.measured is None or type(state.measured).__name__ == "MeasuredView",
        "asked": type(state.asked) is tuple and all(type(x) is str for x in state.asked),
        "probed": state.probed is None or type(state.probed) is HardwareSnapshot,
        "hypothetical": state.hypothetical is None or type(state.hypothetical) is HardwareSnapshot,
        "measured_bandwidths": state.measured_bandwidths is None or type(state.measured_bandwidths) is Bandwidths,
        "goal": state.goal is None or type(state.goal).__name__ == "AppliedGoal",
        "typed_bandwidths": type(state.typed_bandwidths) is TypedBandwidths and all(
            v is None or whole(v, 1, BANDWIDTH.high) for v in dataclasses.astuple(state.typed_bandwidths)),
    }
    return [name for name, ok in bad.items() if not ok]


@lru_cache(maxsize=1)
def _demo():
    return load_model(DEMO_PATH)


def _session() -> Session:
    session = Session()
    session.apply(SetMachine(hypothetical_machine(int(23.5 * GiB), host_total=32 * GiB), Reserves(), None, None))
    session.apply(OpenModel(_demo(), "a" * 64))
    return session


@st.composite
def hostile_change(draw):
    """A change type, and for each of its fields the session's own value or a hostile one."""
    kind = draw(st.sampled_from(sorted(CHANGES, key=lambda k: k.__name__)))
    return kind, {name: draw(st.one_of(st.just(None), HOSTILE)) for name in CHANGES[kind]}


@settings(max_examples=300, deadline=None)
@given(hostile_change())
def test_every_change_is_refused_with_the_state_unchanged_or_gives_a_state_derive_reads(drawn):
    kind, hostile = drawn
    session = _session()
    before_state, before_view, seen = session.state, session.view, []
    session.subscribe(seen.append)
    values = {name: getattr(session.state, name) if value is None and name not in ("ctx", "ctx_cap", "v_type",
                                                                                 "n_cpu_moe") else value
              for name, value in hostile.items()}
    try:
        session.apply(Controls((kind(**values),)))
    except RequestError:
        assert (session.state, session.view, seen) == (before_state, before_view, [])
        return
    assert sound(session.state) == [] and session.view.state == session.state


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(f.name for f in dataclasses.fields(ExplorerState))), HOSTILE)
def test_a_state_is_refused_or_holds_what_derive_reads(name, value):
    """The state's own door, below the changes: `replace(state, …)` of any field with any value."""
    state = ExplorerState()
    try:
        changed = dataclasses.replace(state, **{name: value})
    except RequestError:
        return
    assert sound(changed) == []


STATE_FIELDS = {f.name for f in dataclasses.fields(ExplorerState)}
WRITERS = {
    "core/explorer/session.py": "the session and its typed changes",
    "core/explorer/state.py": "the state's own checks",
    "core/explorer/llama_question.py": "the body of the session's AskLlama change (`ask`)",
    "core/explorer/persist.py": "the state a session starts from, read back from the settings",
    "core/explorer/ctx_tiers.py": "a what-if state per ctx tier, priced and never published",
    "core/explorer/load_fix.py": "a what-if state per candidate fix (slots, KV type, ctx, quant), priced and never published",
    "gui/cli/commands/fit_cmd.py": "a CLI run is a session of one question, with no window",
    "gui/cli/commands/library_cmd.py": "a CLI run is a session of one question, with no window",
    "gui/cli/commands/quants_cmd.py": "a CLI run is a session of one question, with no window",
    "gui/cli/commands/measure_cmd.py": "a CLI run is a session of one question, with no window",
    "core/explorer/tune.py": "a what-if state per candidate setting, priced and never published",
    "gui/cli/commands/tune_cmd.py": "a CLI run is a session of one question, with no window",
}
"""The modules that make or replace an `ExplorerState` with fields set, and why; a window or dock is never one."""


def _writes_state(node: ast.Call) -> bool:
    """`ExplorerState(field=…)`, or `replace(<…state>, field=…)` of a state's fields."""
    name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr if isinstance(node.func, ast.Attribute) \
        else ""
    keywords = {k.arg for k in node.keywords}
    if name == "ExplorerState":
        return bool(node.args or node.keywords)
    if name != "replace" or not node.args or not keywords or not keywords <= STATE_FIELDS | {None}:
        return False
    target = ast.unparse(node.args[0])
    return target.endswith("state") or target.endswith(".state")


def test_no_module_outside_the_session_writes_the_state():
    writers = set()
    for path in sorted([*(ROOT / "core").rglob("*.py"), *(ROOT / "gui").rglob("*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.Call) and _writes_state(node) for node in ast.walk(tree)):
            writers.add(str(path.relative_to(ROOT)))
    assert writers <= set(WRITERS), sorted(writers - set(WRITERS))
    assert not any(w.startswith("gui/qt/") for w in writers)


def test_the_ast_walk_sees_a_window_that_writes_the_state():
    """The walk above can fail: a window's `replace(self.session.state, ctx=…)` is a write."""
    assert _writes_state(ast.parse("replace(self.session.state, ctx=8192)").body[0].value)
    assert _writes_state(ast.parse("ExplorerState(ctx=8192)").body[0].value)
    assert not _writes_state(ast.parse("replace(request, ctx=8192)").body[0].value)
