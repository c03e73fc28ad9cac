"""The explorer session: one Qt-free owner of what every screen shows, changed one change at a time.

The window and every dock (sweep, compare, quants, library, evidence) hold the same `Session`,
write what the person did into it as a change (`session.apply(change)`), and draw only the
`ExplorerView` it publishes (`session.subscribe(fn)`). No screen reads another screen.

Rule 1: `apply(change)` computes the next state and its view (`derive`, reusing the previous
        view) and only then commits them; a change whose view cannot be made (a model that
        cannot be shown, a knob out of range) raises, and the previous state and view stay.
        Observers are told only when the state moved.
Rule 2: the budget answers "this machine": a model opened for the first time gets the judged
        machine's usable RAM (`machine.usable.usable_ram`, host reserve as typed), origin
        MACHINE, and keeps following the machine and its reserve until the person sets one.
        While no machine is known (or it has no usable RAM) the budget is PROVISIONAL: halfway
        between the model's thresholds (`derive.initial_budget`), until a machine answers.
Rule 3: a budget, ctx or ctx cap the person sets is remembered for this model (`ModelMemory`,
        keyed by the header fingerprint) — never for the next model — and comes back when that
        model is opened again. Reset to this machine forgets them (Rule 2 again).
Rule 4: the head mode the person chose is kept apart from what a model allows: a tied model
        cannot stream its head, so it shows AUTO, and the next untied model streams again.
Rule 5: opening a model is the heavy change (thresholds, spans, the full load's ctx search): a
        loading thread makes its `preview` and the GUI thread applies it as a hint, so only the
        parts that moved meanwhile (a knob touched while loading) are computed on the GUI thread.
Rule 6: a vision projector or draft model was read and checked against the model it was added
        beside (`fit.server.inputs`): opening another model removes both; the other server knobs
        (slots, cache, checkpoints) stay, like the other global knobs.
Rule 7: a control's change is typed (`SetBudget`, `SetCtx`, `SetKnobs`, …) and checked when it
        is made, by the state's own table (`state.check_field`: `core.ranges` and the enums), so a
        bad value is refused before the session is asked; only `SetBudget` makes a budget CHOSEN,
        so nothing is guessed from a value. `Controls` carries several of them as one change.
Rule 8: the machine judged and the figures read are the session's, not a widget's (`state` Rule 12):
        `Probed` is the probe's answer, `SetMachine` the panel's hypothetical machine (None: the
        probe's) and reserves, `SetBandwidths` this machine's figures, `SetTypedBandwidths` what the
        person typed over them; each writes the judged `machine` or `bandwidths` beside its source.
Rule 9: one channel for every screen: `subscribe(fn)` hears each view, and `subscribe_models(fn)`
        hears `fn(model)` once a model was opened (a file, a priced quantization, a reload), after
        every view observer has drawn it, so a screen that follows the open model (its evidence,
        its file, its quantizations) reads a drawn session and may change it in turn. A screen that
        subscribes after a model opened (an add-on installed after the first plan) asks `now=True` and
        hears that model at once.
Rule 10: a goal's answer (`tune`, searched off the GUI thread over the state as it was) is one change, `ApplyGoal`:
        the answer's whole state and the goal it met, or — nothing met it — the goal alone, every knob as it was. It
        is refused when the state moved while the search ran, so nothing the person set meanwhile is lost;
        `ClearGoal` forgets the goal and keeps the knobs; opening another model forgets it too (Rule 6).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol

from gguf_budget.core.errors import RequestError
from gguf_budget.core.explorer.derive import ExplorerView, derive, initial_budget
from gguf_budget.core.explorer.goal import applied_goal
from gguf_budget.core.llama_words.reader import LlamaCommand
from gguf_budget.core.explorer.state import BudgetOrigin, ExplorerState, TypedBandwidths, check_field
from gguf_budget.core.fit.engine_options import EngineOptions
from gguf_budget.core.fit.runtime_types import Runtime
from gguf_budget.core.fit.server.types import ServerSettings
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.machine.usable import usable_ram
from gguf_budget.core.model.kv import KVType
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.plan.types import CtxPolicy, HeadMode
from gguf_budget.core.views.model_summary import summary_rows

if TYPE_CHECKING:  # a view of a run imports the measuring code (psutil), a goal's answer the search: not before
    from gguf_budget.core.explorer.tune import TuneAnswer  # the first plan, nor for a CLI refusal
    from gguf_budget.core.views.evidence_view import MeasuredView

MEMORY_LIMIT = 64
"""Rule 3: models remembered at most; the one used longest ago is forgotten first."""


@dataclass(frozen=True)
class ModelChoice:
    """What the person set for one model (Rule 3): None where they set nothing."""

    budget: Budget | None = None
    ctx: int | None = None
    ctx_cap: int | None = None


class ModelMemory:
    """Rule 3's memory: model key → `ModelChoice`, most recently used last, at most MEMORY_LIMIT."""

    def __init__(self, rows: Mapping[str, ModelChoice] | None = None):
        self._rows: OrderedDict[str, ModelChoice] = OrderedDict(rows or {})
        self._trim()

    def recall(self, key: str) -> ModelChoice | None:
        return self._rows.get(key)

    def remember(self, key: str, choice: ModelChoice) -> None:
        self._rows.pop(key, None)
        if choice != ModelChoice():
            self._rows[key] = choice
        self._trim()

    def forget(self, key: str) -> None:
        self._rows.pop(key, None)

    def rows(self) -> dict[str, ModelChoice]:
        """Oldest first, as `__init__` takes them back."""
        return dict(self._rows)

    def _trim(self) -> None:
        while len(self._rows) > MEMORY_LIMIT:
            self._rows.popitem(last=False)


class Change(Protocol):
    """One thing the person (or a probe) did; `Session.apply` turns it into the next state."""

    def next_state(self, session: Session) -> ExplorerState: ...


class _Controls:
    """Rule 7: a typed change of some controls; its fields are checked on construction (`state.check_field`)."""

    def __post_init__(self) -> None:
        for f in fields(self):  # type: ignore[arg-type]  # every subclass is a dataclass
            object.__setattr__(self, f.name, check_field(f.name, getattr(self, f.name)))

    def writes(self, session: Session) -> dict[str, Any]:
        """The state's fields this change sets."""
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]

    def next_state(self, session: Session) -> ExplorerState:
        return replace(session.state, **self.writes(session))


@dataclass(frozen=True)
class SetBudget(_Controls):
    """The person set the budget (entered it, picked it on the sweep, gave `--budget`): it is CHOSEN (Rule 3)."""

    budget: Budget

    def writes(self, session: Session) -> dict[str, Any]:
        return {"budget": self.budget, "budget_origin": BudgetOrigin.CHOSEN}


@dataclass(frozen=True)
class SetCtx(_Controls):
    """An exact ctx, planned as it is (None: the planner chooses under the cap)."""

    ctx: int | None


@dataclass(frozen=True)
class SetCtxCap(_Controls):
    """The most ctx the planner may choose (None: the model's context length)."""

    ctx_cap: int | None


@dataclass(frozen=True)
class SetPrefer(_Controls):
    """How the planner ranks ctx against speed."""

    prefer: CtxPolicy


@dataclass(frozen=True, kw_only=True)
class SetKnobs(_Controls):
    """The planner's other knobs, the slow threshold and the prompt (Rule 4: the head mode is a choice kept apart)."""

    n_buffers: int
    head_mode: HeadMode
    kv_type: KVType
    force: bool
    slow_below_tok_s: float
    prompt_tokens: int

    def writes(self, session: Session) -> dict[str, Any]:
        return {**super().writes(session), "head_mode": session.choose_head(self.head_mode)}


@dataclass(frozen=True)
class SetRuntime(_Controls):
    """The llama.cpp program the full load is for."""

    runtime: Runtime


@dataclass(frozen=True)
class SetServer(_Controls):
    """What llama-server runs beside the model (slots, cache, checkpoints, projector, draft)."""

    server: ServerSettings


@dataclass(frozen=True)
class SetEngine(_Controls):
    """llama.cpp's engine options, the V cache's own type (None: K's) and a forced `--n-cpu-moe`."""

    engine: EngineOptions
    v_type: KVType | None = None
    n_cpu_moe: int | None = None


@dataclass(frozen=True)
class Controls:
    """Rule 7: several controls that moved together (one tick of the window's timer), as one change and one view."""

    changes: tuple[_Controls, ...]

    def next_state(self, session: Session) -> ExplorerState:
        written: dict[str, Any] = {}
        for change in self.changes:
            written.update(change.writes(session))
        return replace(session.state, **written)


@dataclass(frozen=True)
class AskLlama:
    """A llama.cpp command as the question over the open model (`llama_question.ask`): every setting it gives,
    the program's defaults for the rest, and what it did not price kept in `asked` for the screen."""

    command: LlamaCommand

    def next_state(self, session: Session) -> ExplorerState:
        state = session.state
        if state.model is None:
            raise RequestError("open a model first (or give the command's -m)")
        from gguf_budget.core.explorer.llama_question import ask  # llama.cpp's option table: not before the first plan

        question = ask(self.command, state, state.model)
        return replace(question.state, asked=question.lines)


@dataclass(frozen=True)
class ApplyGoal:
    """Rule 10: `answer`, searched over `searched`, as the next state."""

    answer: TuneAnswer
    searched: ExplorerState

    def next_state(self, session: Session) -> ExplorerState:
        if session.state != self.searched:
            raise RequestError("the settings changed while the goal was searched: choose the goal again")
        made = replace(self.answer.state or self.searched, goal=None)
        return replace(made, goal=applied_goal(self.answer, made))


@dataclass(frozen=True)
class ClearGoal:
    """Rule 10: no goal; the knobs stay as they are."""

    def next_state(self, session: Session) -> ExplorerState:
        return replace(session.state, goal=None)


@dataclass(frozen=True)
class OpenModel:
    """Show `model` (Rules 2–4 and 6); `key` identifies it for the memory (the header fingerprint)."""

    model: ModelSpec
    key: str

    def next_state(self, session: Session) -> ExplorerState:
        state = session.state
        head = session.head_for(self.model)
        choice = session.memory.recall(self.key) or ModelChoice()
        budget, origin = (choice.budget, BudgetOrigin.CHOSEN) if choice.budget is not None else \
            (state.budget, BudgetOrigin.PROVISIONAL)
        server = replace(state.server, projector=None, draft=None)  # Rule 6
        return replace(state, model=self.model, head_mode=head, budget=budget, budget_origin=origin,
                       ctx=choice.ctx, ctx_cap=choice.ctx_cap, server=server, goal=None)


@dataclass(frozen=True)
class Probed:
    """Rule 8: the hardware probe answered; it is judged unless a hypothetical machine is chosen."""

    machine: HardwareSnapshot

    def next_state(self, session: Session) -> ExplorerState:
        state = session.state
        return replace(state, probed=self.machine, machine=state.hypothetical or self.machine)


@dataclass(frozen=True)
class SetMachine:
    """Rule 8: the hypothetical machine the person chose (None: the probed one is judged), the reserves kept back
    on it and the GPU split asked."""

    machine: HardwareSnapshot | None
    reserves: Reserves
    gpu_layers: int | None
    tensor_split: tuple[float, ...] | None

    def next_state(self, session: Session) -> ExplorerState:
        state = session.state
        return replace(state, hypothetical=self.machine, machine=self.machine or state.probed, reserves=self.reserves,
                       gpu_layers=self.gpu_layers, tensor_split=self.tensor_split)


@dataclass(frozen=True)
class SetBandwidths:
    """Rule 8: this machine's figures (measured, kept or calibrated); what the person typed stays over them."""

    bandwidths: Bandwidths

    def next_state(self, session: Session) -> ExplorerState:
        state = session.state
        return replace(state, measured_bandwidths=self.bandwidths, bandwidths=state.typed_bandwidths.over(self.bandwidths))


@dataclass(frozen=True)
class SetTypedBandwidths:
    """Rule 8: the figures the person typed (a tier left empty reads the measured one)."""

    typed: TypedBandwidths

    def next_state(self, session: Session) -> ExplorerState:
        state = session.state
        return replace(state, typed_bandwidths=self.typed, bandwidths=self.typed.over(state.measured_bandwidths))


@dataclass(frozen=True)
class SetMeasured:
    """What a real run gave for this model (None clears it)."""

    measured: MeasuredView | None

    def next_state(self, session: Session) -> ExplorerState:
        return replace(session.state, measured=self.measured)


@dataclass(frozen=True)
class ResetToMachine:
    """View ▸ Reset to this machine: this model's remembered budget, ctx and cap are forgotten (Rule 3)."""

    def next_state(self, session: Session) -> ExplorerState:
        if session.model_key is not None:
            session.memory.forget(session.model_key)
        return replace(session.state, budget_origin=BudgetOrigin.PROVISIONAL, ctx=None, ctx_cap=None)


@dataclass
class Session:
    """Rules 1–4. Start one from the choices remembered between runs (`persist`)."""

    state: ExplorerState = field(default_factory=ExplorerState)
    memory: ModelMemory = field(default_factory=ModelMemory)
    view: ExplorerView = field(init=False)
    model_key: str | None = field(default=None, init=False)
    _head_choice: HeadMode = field(init=False)
    _observers: list[Callable[[ExplorerView], None]] = field(default_factory=list, init=False)
    _model_observers: list[Callable[[ModelSpec], None]] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self._head_choice = self.state.head_mode
        self.view = derive(self.state)

    def subscribe(self, observer: Callable[[ExplorerView], None]) -> None:
        """`observer(view)` after every change that moved the state (Rule 1)."""
        self._observers.append(observer)

    def subscribe_models(self, observer: Callable[[ModelSpec], None], *, now: bool = False) -> None:
        """Rule 9: `observer(model)` once a model was opened and every view observer has drawn it; with `now`, also
        at once for the model open now, if any."""
        self._model_observers.append(observer)
        if now and self.state.model is not None:
            observer(self.state.model)

    def preview(self, change: Change) -> ExplorerView:
        """The view `change` would publish, committing nothing (Rule 5: a loading thread calls it)."""
        return self._next(change, self.view)[1]

    def apply(self, change: Change, hint: ExplorerView | None = None) -> ExplorerView:
        """Rule 1: the next state and view, committed only when both could be made. `hint`: a `preview` of this
        change made earlier; whatever of it still holds for the state now is reused (Rule 5)."""
        state, view = self._next(change, hint or self.view)
        if state == self.state and not isinstance(change, OpenModel):
            return self.view
        if isinstance(change, OpenModel):
            self.model_key = change.key
        self.state, self.view = state, view
        self._remember()
        for observer in tuple(self._observers):
            observer(view)
        if isinstance(change, OpenModel):
            for opened in tuple(self._model_observers):
                opened(change.model)
        return self.view

    def _next(self, change: Change, previous: ExplorerView) -> tuple[ExplorerState, ExplorerView]:
        state = self._settled(change.next_state(self))
        if state == self.state and not isinstance(change, OpenModel):
            return state, self.view
        view = derive(state, previous)
        if state.budget_origin is BudgetOrigin.PROVISIONAL and view.thresholds is not None:
            state = replace(state, budget=Budget.of(initial_budget(view.thresholds)))
            view = derive(state, view)
        if isinstance(change, OpenModel):
            _ = view.report, view.headline, view.pinned_caption, summary_rows(change.model)  # every text shown, made first
        return state, view

    @property
    def head_choice(self) -> HeadMode:
        """Rule 4: the head mode the person chose, whatever the model on screen allows."""
        return self._head_choice

    def choose_head(self, mode: HeadMode) -> HeadMode:
        """Rule 4: a tied model showing AUTO did not unchoose STREAM; anything else is the new choice."""
        model = self.state.model
        tied_auto = model is not None and model.tied_embeddings and mode is HeadMode.AUTO
        if not (tied_auto and self._head_choice is HeadMode.STREAM):
            self._head_choice = mode
        return self.head_for(model) if model is not None else mode

    def head_for(self, model: ModelSpec) -> HeadMode:
        """Rule 4: the chosen mode, or AUTO where the model cannot stream its head."""
        tied_stream = model.tied_embeddings and self._head_choice is HeadMode.STREAM
        return HeadMode.AUTO if tied_stream else self._head_choice

    def _settled(self, state: ExplorerState) -> ExplorerState:
        """Rule 2: a budget that follows the machine is its usable RAM now (PROVISIONAL while there is none)."""
        if state.budget_origin is BudgetOrigin.CHOSEN:
            return state
        usable = usable_ram(state.machine, state.reserves.host)
        if not usable:
            return replace(state, budget_origin=BudgetOrigin.PROVISIONAL)
        return replace(state, budget=Budget.of(usable), budget_origin=BudgetOrigin.MACHINE)

    def _remember(self) -> None:
        """Rule 3: what the person set for the model on screen."""
        if self.model_key is None or self.state.model is None:
            return
        s = self.state
        chosen = s.budget if s.budget_origin is BudgetOrigin.CHOSEN else None
        self.memory.remember(self.model_key, ModelChoice(chosen, s.ctx, s.ctx_cap))
