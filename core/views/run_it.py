"""What to run for the answer on screen: the "Run it" line under the headline, and `--print-command`.

Rule 1: the Budget plan is realised by its layer-streaming runtime's own flags (docs/budget-plan.md):
        `--ram-budget SIZE --ctx N`, plus `--ram-budget-force` for a forced plan. SIZE (`units.size_text`) is the
        budget exactly — `G`/`M` when it is a whole number of GiB/MiB (binary units, as the
        budget is typed everywhere here), else plain bytes; `0` is unlimited — and N is the
        plan's ctx, so the runtime plans the ctx shown, not its own default.
Rule 2: the full load is realised by `FitEstimate.recommended`: the llama-server line that
        `fit --print-command` prints and the side panel shows (`fit.command` builds it; a model
        read over the network is named as llama-server fetches it, `remote_command`).
Rule 3: never a command for a configuration that does not fit, nor for a file other than the one on screen
        (a priced quantization is fetched by `-hf`, or has no command: `remote_command` Rule 4). Instead the line
        says what would: for an impossible Budget plan, the budget its minimum configuration needs; for a full
        load, the answer `quant.would_fit` decides (a smaller ctx, a smaller quant, or the memory it
        is short by), in words.
Rule 4: a line never points a command line at a window: where it names the list of quant types, the window
        says View ▸ Quants and the CLI `gguf-budget quants MODEL`.
The window and the CLI call these functions, so both say the same words; the numbers and the choice are the core's.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.quant.would_fit import FullLoadAnswer, full_load_answer
from gguf_budget.core.fit.ctx.auto_ctx import AutoFit
from gguf_budget.core.plan.types import MemoryPlan
from gguf_budget.core.units import human_bytes, size_text
from gguf_budget.core.views.fit_report import verdict_text
from gguf_budget.core.views.remote_command import no_command_reason, runnable

FORCE_FLAG = "--ram-budget-force"
NO_COMMAND = "no command"
QUANTS_IN_WINDOW = "View ▸ Quants"
QUANTS_IN_CLI = "gguf-budget quants MODEL"
"""Rule 4: where the quant types are listed, in the words of the surface that prints the line."""


@dataclass(frozen=True)
class RunIt:
    """One runtime's answer: the command to run and what it realises, or (no command) what would fit instead."""

    command: str | None
    realises: str = ""
    would_fit: str = ""

    @property
    def text(self) -> str:
        """The line beside the command, or in its place."""
        return self.realises if self.command is not None else f"{NO_COMMAND} — {self.would_fit}"


def budget_plan_run(plan: MemoryPlan) -> RunIt:
    """Rules 1 and 3 for the Budget plan."""
    if plan.impossible:
        smaller = ", or a smaller ctx" if plan.ctx_explicit else ""
        return RunIt(None, would_fit=f"a budget of at least {human_bytes(plan.minimum_required)} would fit{smaller}")
    flags = f"--ram-budget {size_text(plan.budget.cli_bytes)} --ctx {plan.ctx}"
    if plan.overridden:
        return RunIt(f"{flags} {FORCE_FLAG}", f"forced: the minimum configuration, over the {plan.budget} budget")
    return RunIt(flags, f"peak {human_bytes(plan.total)} at ctx {plan.ctx:,}, {plan.n_pinned} of {plan.n_layer} layers pinned")


def full_load_run(choice: AutoFit, max_ctx: int | None, smaller_quant: str | None = None, priced: bool = False,
                  quants: str = QUANTS_IN_WINDOW) -> RunIt:
    """Rules 2–4 for the full load; `priced`: the ladder was asked (`smaller_quant`), and this is its answer;
    `quants`: where the types are listed (`QUANTS_IN_CLI` on a command line)."""
    fit = choice.fit
    command = runnable(fit.recommended)
    answer = full_load_answer(choice, max_ctx, command is not None, smaller_quant, priced)
    if answer is FullLoadAnswer.COMMAND:
        assert command is not None
        return RunIt(command.shell, f"{verdict_text(fit).split(' — ')[0]} at ctx {choice.ctx:,}")
    if answer is FullLoadAnswer.NO_REPOSITORY:  # a priced quantization (`remote_command` Rule 4)
        assert fit.recommended is not None
        return RunIt(None, would_fit=no_command_reason(fit.recommended))
    if answer is FullLoadAnswer.UNKNOWN:
        return RunIt(None, would_fit=verdict_text(fit))
    if answer is FullLoadAnswer.SMALLER_CTX:
        return RunIt(None, would_fit=f"ctx {max_ctx:,} would fit with {fit.gpu_layers} GPU layers")
    if answer is FullLoadAnswer.SMALLER_QUANT:
        return RunIt(None, would_fit=f"{smaller_quant} of this model would fit ({quants} lists each type)")
    short = ", ".join(f"{name} short by {human_bytes(b)}" for name, b in fit.shortfall.items()) or verdict_text(fit)
    if answer is FullLoadAnswer.NOTHING_FITS:
        return RunIt(None, would_fit=f"no smaller ctx and no quant type of this model fits here ({short})")
    return RunIt(None, would_fit=f"no smaller ctx fits ({short}); {quants} prices smaller types")
