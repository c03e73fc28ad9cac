"""The llama-server limits that keep its worst case — every cache and checkpoint full — within the host's room.

Pure; read from a finished estimate. The room is the host's usable memory less everything the
verdict counts but the cache and checkpoints (weights, KV, the projector and the draft).

Rule 1: nothing is offered when the worst case fits the room already.
Rule 2: `--cache-ram N`: the most whole MiB that leave room for every slot's checkpoints full
        (`prompt_cache` Rule 2: the cache never holds more than N MiB). Its cost: fewer cached
        prompts, said as how many of the session's largest slot states N holds; a conversation
        that returns after its state was evicted re-reads its prompt.
Rule 3: `--ctx-checkpoints C`: the most per slot that fit beside the cache at its limit
        (`checkpoints` Rule 3), for a model that makes them. Its cost: a turn that goes back
        further than the oldest kept checkpoint re-reads its prompt from the start.
Rule 4: `-np N`: the most slots whose checkpoints fit beside the cache (each slot keeps its own
        list). Its cost: fewer requests served at once (the KV cache itself does not shrink).
Rule 5: each cap is offered only if it alone keeps the worst case in: none when the cache alone
        overruns the room (then only a smaller `--cache-ram` can), and never 0 slots or a 0 MiB cache.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.fit.server.prompt_cache import MiB, NO_LIMIT
from gguf_budget.core.fit.types import FitEstimate
from gguf_budget.core.units import human_bytes


@dataclass(frozen=True, kw_only=True)
class Cap:
    """One limit and what it costs."""

    flag: str
    value: int
    cost: str

    @property
    def args(self) -> tuple[str, str]:
        return self.flag, str(self.value)


def _room(e: FitEstimate) -> int | None:
    s, host = e.server, e.devices[0]
    if s is None or host.need is None or s.counted is None:
        return None
    return host.usable - (host.need - s.counted)


def worst_case_caps(e: FitEstimate) -> tuple[Cap, ...]:
    """Rules 1–5 for the estimate's server."""
    s, room = e.server, _room(e)
    if s is None or room is None or s.worst_held is None or s.prompt_cache is None or s.checkpoints is None:
        return ()
    if s.worst_held <= room:
        return ()
    caps = []
    mib = (room - s.checkpoints) // MiB
    if mib >= 1 and (s.cache_ram_mib == NO_LIMIT or mib < s.cache_ram_mib):
        state = s.session.largest_state if s.session is not None else 0
        held = f"about {mib * MiB // state} of this session's largest prompt states ({human_bytes(state)} each)" \
            if state else f"{mib} MiB of prompt states"
        caps.append(Cap(flag="--cache-ram", value=mib,
                        cost=f"fewer cached prompts: it holds {held}; a conversation whose state was evicted re-reads "
                             "its prompt when it returns"))
    per_slot, spare = (s.checkpoint or 0) * s.layout.n_seq, room - s.prompt_cache
    if per_slot and spare >= 0:
        n = spare // per_slot
        if n < s.settings.ctx_checkpoints:
            caps.append(Cap(flag="--ctx-checkpoints", value=n,
                            cost="a turn that goes back further than the oldest kept checkpoint re-reads its prompt "
                                 "from the start" + (" (0: every edit re-reads it)" if n == 0 else "")))
        one = (s.checkpoint or 0) * s.settings.ctx_checkpoints
        slots = spare // one if one else 0
        if s.layout.n_seq > 1 and 1 <= slots < s.layout.n_seq:
            caps.append(Cap(flag="-np", value=slots, cost=f"{slots} request(s) served at once instead of "
                                                          f"{s.layout.n_seq}"))
    return tuple(caps)
