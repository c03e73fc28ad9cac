"""The window's Goal control in words: the goals it offers, their floors, and the headline's goal line.

Rule 1: the goals are `tune`'s (`tune_goal.Goal`) and "none" (no search: the knobs stay as the person set them). Every
        goal is held to both floors `tune` takes (`Constraints`: a decode speed floor, and a context floor — per slot
        for max-slots); a goal's phrase names the floors that shape its answer: the speed floor when there is one,
        and the context floor for every goal but max-ctx (whose answer is the context itself).
Rule 2: the floors a control starts at are `Constraints()`'s — the CLI's defaults — so the window and
        `gguf-budget tune` ask the same question the same way, but for one thing: a goal in the window keeps the
        open file's type (`Constraints.keep_file_type`) — opening another quantization is the person's act (the
        Quants view prices them), never a side effect of a goal.
Rule 3: an applied goal (`state.AppliedGoal`) is kept in the state with its answer in words and the settings the
        answer made. While the full load reads what those settings give it (`derive` compares the two full loads'
        keys, `FullLoadKey`: the model, the machine and every knob the fit reads), the goal line says the goal met and
        its figure, or not met and the binding constraint (`TuneAnswer.binding`); once any of them changed (a knob set
        by hand, another machine or bandwidth), it says "last applied" — a goal is never searched again unless it is
        chosen again. A Budget plan knob (the budget, the ring) leaves the goal held.
Rule 4: the words the window shows about a goal (its name, its floors, what a search is doing, a cancelled search)
        are here; the widget only draws them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gguf_budget.core.explorer.state import AppliedGoal, ExplorerState
from gguf_budget.core.explorer.tune_goal import Constraints, Goal
from gguf_budget.core.units import human_bytes

if TYPE_CHECKING:
    from gguf_budget.core.explorer.tune import Candidate, TuneAnswer

GOAL_CHOICES: tuple[Goal | None, ...] = (None, *Goal)
"""The control's choices, in its order: none first."""
DEFAULT_FLOORS = Constraints(keep_file_type=True)
"""Rule 2."""
NAMES: dict[Goal | None, str] = {
    None: "none", Goal.MAX_CTX: "longest context", Goal.MAX_SPEED: "fastest decode",
    Goal.MAX_SLOTS: "most server slots", Goal.LEAST_MEMORY: "least memory",
}
TIPS: dict[Goal | None, str] = {
    None: "No goal: the knobs stay as you set them (choosing it searches nothing)",
    Goal.MAX_CTX: "The longest context that fits and still decodes at the speed floor (gguf-budget tune --goal max-ctx)",
    Goal.MAX_SPEED: "The fastest decode at the context floor (gguf-budget tune --goal max-speed)",
    Goal.MAX_SLOTS: "The most llama-server slots (-np) of the context floor each, at the speed floor "
                    "(gguf-budget tune --goal max-slots)",
    Goal.LEAST_MEMORY: "The least memory over every device at the context floor (gguf-budget tune --goal least-memory)",
}
GOAL_TIP = "What to search llama.cpp's settings for; choosing a goal sets every knob from its answer"
SPEED_FLOOR = "Speed at least"
SPEED_FLOOR_HIGH = 100_000.0
"""The largest speed floor the control offers, tokens/s (`Constraints` takes any below 10⁹)."""
NO_SPEED_FLOOR = "no floor"
SPEED_TIP = ("The decode speed every answer must reach, tokens/s (one stream, an empty cache, as the full load's "
             "estimate; --min-tok-s). 0: no floor")
APPLY_TIP = "Search llama.cpp's settings for the goal at these floors and set every knob from the answer"
CANCEL_TIP = "Stop the search: nothing changes"
CANCELLED = "Goal search cancelled: nothing changed"
MOVED = "The settings changed during the search (a knob, or the machine's figures):"


def applied_choice(applied: AppliedGoal | None) -> tuple[Goal | None, Constraints]:
    """The control's goal and floors for the goal last applied (none: no goal, the default floors)."""
    if applied is None:
        return None, DEFAULT_FLOORS
    return Goal(applied.goal), window_floors(applied.min_tok_s, applied.min_ctx)


def window_floors(min_tok_s: float, min_ctx: int) -> Constraints:
    """Rule 2: the window's question with these floors (RequestError for a value `tune` refuses)."""
    return Constraints(min_tok_s=min_tok_s, min_ctx=min_ctx, keep_file_type=True)


def ctx_floor_label(goal: Goal | None) -> str:
    """Rule 1: the context floor is per slot for max-slots."""
    return "Context per slot at least" if goal is Goal.MAX_SLOTS else "Context at least"


def ctx_floor_tip(goal: Goal | None) -> str:
    each = "each server slot's context" if goal is Goal.MAX_SLOTS else "the context every answer must hold"
    return f"The floor for {each}, tokens (--min-ctx; default {DEFAULT_FLOORS.min_ctx:,})"


def goal_phrase(goal: Goal, floors: Constraints) -> str:
    """Rule 1: the goal and the floors that shape it, in plain words ('longest context at ≥ 20 tok/s')."""
    ctx = "" if goal is Goal.MAX_CTX else (
        f" of ≥ {floors.min_ctx:,} tokens each" if goal is Goal.MAX_SLOTS else f" at ≥ {floors.min_ctx:,} tokens")
    speed = "" if floors.min_tok_s <= 0 else f"{' at' if goal is Goal.MAX_CTX else ' and'} ≥ {floors.min_tok_s:g} tok/s"
    return f"{NAMES[goal]}{ctx}{speed}"


def searching_text(goal: Goal, floors: Constraints) -> str:
    return f"Searching llama.cpp's settings for the {goal_phrase(goal, floors)}…"


def figure(goal: Goal, best: Candidate) -> str:
    """The answer's figure for its goal: what was maximised or minimised first, then the rest that matters."""
    rate = f"≈ {best.tok_s:.1f} tok/s"
    if goal is Goal.MAX_CTX:
        return f"{best.ctx:,} tokens at {rate}"
    if goal is Goal.MAX_SPEED:
        return f"{rate} at {best.ctx:,} tokens"
    if goal is Goal.MAX_SLOTS:
        return f"{best.slots} slot{'s' if best.slots > 1 else ''} of {best.ctx // best.slots:,} tokens at {rate}"
    return f"{human_bytes(best.memory)} over every device at {best.ctx:,} tokens"


def applied_goal(answer: TuneAnswer, settings: ExplorerState) -> AppliedGoal:
    """Rule 3: the goal, its floors and its answer in words, with the settings it made (nothing met: the state as it
    was searched; the session's `ApplyGoal` makes them)."""
    best, floors = answer.best, answer.constraints
    outcome = f"not met; {answer.binding}" if best is None else f"met: {figure(answer.goal, best)}"
    return AppliedGoal(goal=answer.goal.value, min_tok_s=floors.min_tok_s, min_ctx=floors.min_ctx,
                       phrase=goal_phrase(answer.goal, floors), outcome=outcome, settings=settings)


def goal_line(applied: AppliedGoal | None, held: bool) -> str:
    """Rule 3: the headline's goal line; `held` — the full load still reads what the answer set ('' for no goal)."""
    if applied is None:
        return ""
    head = f"Goal: {applied.phrase}"
    if held:
        return f"{head} — {applied.outcome}"
    return (f"{head} — last applied ({applied.outcome}); a setting changed since, so it may no longer hold: "
            "choose the goal again to search again")
