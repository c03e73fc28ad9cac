"""What the compare view says: two plans' ledgers line by line, and one line per model.

Rule 1: a row per ledger line in ledger order, then the total, with their difference, as
        `plan.difference.line_differences` computes them; this module only names them.
Rule 2: a difference is written with its sign (`units.signed_bytes`).
Rule 3: a row is shown by its line's plain name (`ledger_names`); `line` stays the ledger key.
Rule 4: a priced variant (a quantization not downloaded, `ModelSpec.priced_type`) is labelled so in its column
        and line, never by the name of the file it was priced from.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.plan.difference import TOTAL_LINE, LineDifference, line_differences
from gguf_budget.core.quant.priced import PRICED_LABEL
from gguf_budget.core.plan.types import MemoryPlan
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.ledger_names import TOTAL_NAME, line_name, line_tooltip

NAME_LIMIT = 60


@dataclass(frozen=True)
class CompareRow(LineDifference):
    """One ledger line (or the total) of both plans, with the words that name it."""

    @property
    def name(self) -> str:
        """Rule 3."""
        return TOTAL_NAME if self.line == TOTAL_LINE else line_name(self.line)

    @property
    def emphasised(self) -> bool:
        """The total row stands out from the lines it adds up (drawn bold)."""
        return self.line == TOTAL_LINE

    @property
    def tooltip(self) -> str:
        return "Every line added up: the peak the plan holds." if self.line == TOTAL_LINE else line_tooltip(self.line)


def compare_rows(first: MemoryPlan, second: MemoryPlan) -> tuple[CompareRow, ...]:
    """Rule 1: every ledger line, then the total."""
    return tuple(CompareRow(d.line, d.first, d.second) for d in line_differences(first, second))


def column_title(model: ModelSpec) -> str:
    """Rule 4: a table column's name: the file's, or the type a priced variant is of it."""
    name = safe_text(PurePath(model.path).name, 48)
    return name if model.priced_type is None else f"{model.priced_type} ({PRICED_LABEL}) of {name}"


def model_text(label: str, model: ModelSpec, plan: MemoryPlan | None) -> str:
    """One line naming a model and what its plan decided (Rule 4: a priced variant's weights are priced)."""
    kind = model.file_type_name or "unknown file type"
    where = "in the file" if model.priced_type is None else PRICED_LABEL
    head = (f"{label}: {safe_text(model.name or model.architecture, NAME_LIMIT)} · {kind} · "
            f"{human_bytes(model.tensor_bytes)} of weights {where}")
    if plan is None:
        return head
    streamed = "streamed" if plan.stream_lm_head else "resident"
    return (f"{head} — {plan.outcome} at ctx {plan.ctx:,}, {plan.n_pinned}/{plan.n_layer} layers pinned, "
            f"head {streamed}")
