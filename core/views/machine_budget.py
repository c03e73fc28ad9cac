"""The line that says where `plan`'s default budget came from (the budget itself: `machine.usable.machine_budget`).

Rule 1: the line names the figures the budget came from, so no one mistakes it for a typed one.
"""

from __future__ import annotations

from gguf_budget.core.machine.usable import MachineBudget
from gguf_budget.core.units import human_bytes


def machine_budget_text(usable: MachineBudget) -> str:
    """Rule 1."""
    return (f"Budget: this machine's usable RAM, {human_bytes(usable.budget)} "
            f"({human_bytes(usable.available)} available − {human_bytes(usable.reserve)} reserve)")
