"""What a machine can give a model: free memory less what the person keeps back — one rule for every pool.

Rule 1: usable = available − reserve, never below 0, for host RAM and for each GPU alike.
Rule 2: `usable_ram` is that rule on the judged machine's host RAM with the host reserve the
        person set (the default is `DEFAULT_HOST_RESERVE`); None while no machine is known or
        when its RAM could not be read — an unknown is never taken as 0. The `plan` and
        `library` commands' default budget, the window's opening budget, the banner's "above
        usable RAM" note and the Library's verdicts all read it here.
Rule 3: `machine_budget` is the budget `plan` takes when none is given: `usable_ram` with the figures
        it came from (`views.machine_budget` words it), or a RequestError when the RAM could not be read.
Rule 4: a pool drawn as a bar splits its total into used (total − free, free at most the total), the
        reserve kept within what is free, and the rest, Rule 1's usable (`pool_shares`).
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.errors import RequestError
from gguf_budget.core.machine.snapshot import HardwareSnapshot

GiB = 1 << 30
DEFAULT_HOST_RESERVE = 6 * GiB
DEFAULT_GPU_RESERVE = 3 * GiB // 2


def usable(available: int, reserve: int) -> int:
    """Rule 1."""
    return max(available - reserve, 0)


@dataclass(frozen=True)
class PoolShares:
    """Rule 4: a pool's used memory, the reserve kept within what is free, and what is left usable."""

    used: int
    reserve: int
    usable: int


def pool_shares(total: int, available: int, reserve: int) -> PoolShares:
    """Rule 4."""
    free = min(available, total)
    return PoolShares(used=total - free, reserve=min(reserve, free), usable=usable(free, reserve))


def usable_ram(machine: HardwareSnapshot | None, host_reserve: int = DEFAULT_HOST_RESERVE) -> int | None:
    """Rule 2."""
    if machine is None or machine.host_error:
        return None
    return usable(machine.host_available, host_reserve)


@dataclass(frozen=True)
class MachineBudget:
    """Rule 3: this machine's usable RAM as a plan budget, with what it came from."""

    available: int
    reserve: int
    budget: int


def machine_budget(snapshot: HardwareSnapshot, reserve: int = DEFAULT_HOST_RESERVE) -> MachineBudget:
    """Rule 3; raises RequestError in words when the host RAM could not be read."""
    budget = usable_ram(snapshot, reserve)
    if budget is None:
        raise RequestError(f"this machine's RAM could not be read ({snapshot.host_error})")
    return MachineBudget(snapshot.host_available, reserve, budget)
