"""What a machine can give a model: free memory less what the person keeps back — one rule for every pool.

Rule 1: usable = available − reserve, never below 0, for host RAM and for each GPU alike.
Rule 2: `usable_ram` is that rule on the judged machine's host RAM with the host reserve the
        person set (the default is `DEFAULT_HOST_RESERVE`); None while no machine is known or
        when its RAM could not be read — an unknown is never taken as 0. The `plan` and
        `library` commands' default budget, the window's opening budget, the banner's "above
        usable RAM" note and the Library's verdicts all read it here.
"""

from __future__ import annotations

from gguf_budget.core.machine.snapshot import HardwareSnapshot

GiB = 1 << 30
DEFAULT_HOST_RESERVE = 6 * GiB
DEFAULT_GPU_RESERVE = 3 * GiB // 2


def usable(available: int, reserve: int) -> int:
    """Rule 1."""
    return max(available - reserve, 0)


def usable_ram(machine: HardwareSnapshot | None, host_reserve: int = DEFAULT_HOST_RESERVE) -> int | None:
    """Rule 2."""
    if machine is None or machine.host_error:
        return None
    return usable(machine.host_available, host_reserve)
