"""The budget `plan` takes when none is given: this machine's usable RAM, and the line that says so.

Rule 1: the budget is `core.machine.usable.usable_ram` with the host reserve given, so `plan`,
        `fit`, `library` and the window read the same machine the same way.
Rule 2: the line names the figures the budget came from, so no one mistakes it for a typed one.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.errors import RequestError
from gguf_budget.core.machine.usable import DEFAULT_HOST_RESERVE, usable_ram
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.units import human_bytes


@dataclass(frozen=True)
class MachineBudget:
    """This machine's usable RAM as a plan budget (Rule 1)."""

    available: int
    reserve: int
    budget: int

    def text(self) -> str:
        """Rule 2."""
        return (f"Budget: this machine's usable RAM, {human_bytes(self.budget)} "
                f"({human_bytes(self.available)} available − {human_bytes(self.reserve)} reserve)")


def machine_budget(snapshot: HardwareSnapshot, reserve: int = DEFAULT_HOST_RESERVE) -> MachineBudget:
    """Raises RequestError in words when the host RAM could not be read."""
    budget = usable_ram(snapshot, reserve)
    if budget is None:
        raise RequestError(f"this machine's RAM could not be read ({snapshot.host_error})")
    return MachineBudget(snapshot.host_available, reserve, budget)
