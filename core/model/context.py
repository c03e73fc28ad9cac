"""How much context: one default, one ceiling and one way to read a typed ctx, for every command and screen.

Rule 1: DEFAULT_CTX = 4096 tokens — llama.cpp's `fit_params_min_ctx` (common/common.h): its
        default `--fit` never shrinks the context below it before it gives up GPU layers. The
        Budget plan's speed-first auto holds here unless every layer stays pinned beyond it; the
        full load never shrinks below it (`fit.ctx.auto_ctx`); a file that gives no trained context
        is planned and fitted at it (and says so).
Rule 2: `ctx_ceiling(context_length, cap)` is the most an *automatic* ctx may take: the trained
        context, lowered by a cap when one is set. A cap never raises it past the trained context
        — llama.cpp's default `-c 0` takes the trained context, and quality beyond it is not
        what the model was trained for; whoever wants more asks for an explicit ctx, which is
        honoured as asked (as `llama-server -c N` is, with its warning). No trained context: the
        cap, else DEFAULT_CTX. The Budget plan's search, the full load's search, its "largest ctx
        that fits", the quant ladder, the Library and the ctx slider all stop here.
Rule 3: the ctx slider spans CTX_STEP to the ceiling, or to an asked ctx beyond it
        (`ctx_slider_top`), at most `ranges.CONTEXT`'s high.
Rule 4: a typed ctx reads the same on the command line and in the window (`ranges.CONTEXT.parse`
        → `units.parse_count`): digits with `,` `_` or spaces between groups (`8,192`), or a whole
        number of K (`8k`, `128K` = 131,072: contexts are powers of two, as model cards write them).
"""

from __future__ import annotations

from gguf_budget.core.ranges import CONTEXT

DEFAULT_CTX = 4096


def ctx_ceiling(context_length: int | None, cap: int | None) -> int:
    """Rule 2."""
    trained = context_length or None
    if trained is None:
        return cap or DEFAULT_CTX
    return min(trained, cap) if cap else trained


def ctx_slider_top(context_length: int | None, cap: int | None, asked: int | None) -> int:
    """Rule 3: the ctx slider's top (before clamping to its step)."""
    return min(max(ctx_ceiling(context_length, cap), asked or 0), CONTEXT.high)
