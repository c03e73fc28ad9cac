"""What the quant ladder is asked (`ladder` Rules 2, 5–7): its own small module, so a window that builds the request
on every view (`explorer.dock_inputs`) imports no pricing, mix or ladder code until the ladder is asked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gguf_budget.core.errors import RequestError
from gguf_budget.core.fit.server.types import ServerSettings
from gguf_budget.core.fit.types import FitRequest, Reserves
from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.core.model.kv import DEFAULT_KV_TYPE, KVType
from gguf_budget.core.plan.types import BudgetRequest
from gguf_budget.core.speed.estimate import DEFAULT_PROMPT_TOKENS


@dataclass(frozen=True, kw_only=True)
class LadderRequest:
    """ctx None = llama.cpp's default ctx per row, under `ctx_cap` (Rules 2, 6); budget None = no budget plans;
    bandwidths for Rule 7."""

    ctx: int | None = None
    ctx_cap: int | None = None
    kv_type: KVType = DEFAULT_KV_TYPE
    reserves: Reserves = field(default_factory=Reserves)
    budget: BudgetRequest | None = None
    imatrix: bool = True
    bandwidths: Bandwidths = field(default_factory=Bandwidths)
    prompt_tokens: int = DEFAULT_PROMPT_TOKENS
    server: ServerSettings = field(default_factory=ServerSettings)
    """What llama-server runs beside each type's full load (slots, cache, checkpoints, a projector, a draft)."""
    like: FitRequest | None = None
    """The full load's own request, whose llama.cpp options (engine, V cache type, a forced `--n-cpu-moe`, the
    program, the split) every row keeps, so the file's own row is the full load `fit` shows; None: the defaults."""

    def __post_init__(self) -> None:
        if self.ctx is not None and self.ctx < 1:
            raise RequestError("context must be at least 1 token")
