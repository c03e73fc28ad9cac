"""What a goal search is asked (`tune` Rules 3 and 6): the goals and their floors, in a module of their own, so the
window's Goal control and its words (`explorer.goal`) import no search, pricing or ladder code before it runs one.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.errors import RequestError
from gguf_budget.core.model.context import DEFAULT_CTX
from gguf_budget.core.vocab import TextEnum


class Goal(TextEnum):
    """What to optimise (Rule 3)."""

    MAX_CTX = "max-ctx"
    MAX_SPEED = "max-speed"
    MAX_SLOTS = "max-slots"
    LEAST_MEMORY = "least-memory"


@dataclass(frozen=True, kw_only=True)
class Constraints:
    """The floors a goal must meet, and what costs quality that may be chosen (Rule 6)."""

    min_tok_s: float = 0.0
    min_ctx: int = DEFAULT_CTX
    allow_q4_kv: bool = False
    allow_heavy_quant: bool = False
    keep_file_type: bool = False
    """Rule 1: search the open file's own type only."""
    place_experts: bool = True
    """Rule 7: search the `-ot` expert placement (False: `--n-cpu-moe` is the only expert knob, the command has no
    `-ot` regex)."""

    def __post_init__(self) -> None:
        if not 0 <= self.min_tok_s < 1e9 or not 1 <= self.min_ctx < 2**31:
            raise RequestError("--min-tok-s must be from 0 and --min-ctx from 1 to 2^31−1")
