"""What would fit when the full load does not: the "Run it" answer — a command, a smaller ctx or quant.

Rule 1: a command only for a configuration that fits and a file that can be run: a recommended command
        that runs (`views.remote_command.runnable` names the file as llama-server fetches it) is the
        answer; a recommended priced quantization whose repository is unknown has none (NO_REPOSITORY).
Rule 2: else, in this order: a fit whose verdict is unknown says so (UNKNOWN); the largest ctx that fits,
        when it is below the ctx asked (SMALLER_CTX); the quant ladder's best fit (SMALLER_QUANT); else
        nothing fits here (NOTHING_FITS) once the ladder was asked, or the ladder is still to be asked
        (NOT_PRICED).
Rule 3: only a full load that neither fits nor fits at a smaller ctx asks the quant ladder
        (`wants_smaller_quant`); its answer is the highest-precision type that fits here, never the
        model's own type (`smaller_quant`).
The window and the CLI call these functions, so both decide the same; `views.run_it` words the answer.
"""

from __future__ import annotations

from gguf_budget.core.fit.ctx.auto_ctx import AutoFit
from gguf_budget.core.fit.types import FitVerdict
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.quant.ladder_request import LadderRequest
from gguf_budget.core.vocab import TextEnum


class FullLoadAnswer(TextEnum):
    """Rules 1 and 2: the one answer the full load's line gives."""

    COMMAND = "command"
    NO_REPOSITORY = "no repository"
    UNKNOWN = "unknown"
    SMALLER_CTX = "smaller ctx"
    SMALLER_QUANT = "smaller quant"
    NOTHING_FITS = "nothing fits"
    NOT_PRICED = "not priced"


def full_load_answer(choice: AutoFit, max_ctx: int | None, runs: bool, smaller: str | None,
                     priced: bool) -> FullLoadAnswer:
    """Rules 1 and 2; `runs`: the recommended command runs as it is named; `smaller`: the ladder's answer and
    `priced`: the ladder was asked (`smaller` is its answer)."""
    fit = choice.fit
    if runs:
        return FullLoadAnswer.COMMAND
    if fit.recommended is not None:
        return FullLoadAnswer.NO_REPOSITORY
    if fit.verdict is FitVerdict.UNKNOWN:
        return FullLoadAnswer.UNKNOWN
    if max_ctx is not None and max_ctx < choice.ctx:
        return FullLoadAnswer.SMALLER_CTX
    if smaller is not None:
        return FullLoadAnswer.SMALLER_QUANT
    return FullLoadAnswer.NOTHING_FITS if priced else FullLoadAnswer.NOT_PRICED


def wants_smaller_quant(choice: AutoFit, max_ctx: int | None) -> bool:
    """Rule 3: only a full load that neither fits nor fits at a smaller ctx asks the quant ladder."""
    rescued = choice.fit.recommended is not None or (max_ctx is not None and max_ctx < choice.ctx)
    return not rescued and choice.fit.verdict is not FitVerdict.UNKNOWN


def smaller_quant(model: ModelSpec, snapshot: HardwareSnapshot, request: LadderRequest) -> str | None:
    """Rule 3's smaller quant: the quant ladder's best fit on this machine (None: no type fits, or the model's own
    type is the best fit — then a smaller one is no answer)."""
    from gguf_budget.core.quant.ladder import quant_ladder  # the ladder's pricing code, when it is first asked

    ladder = quant_ladder(model, snapshot, request)
    source = next((row.name for row in ladder.rows if row.is_source), None)
    return None if ladder.best is None or ladder.best == source else ladder.best
