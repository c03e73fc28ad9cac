"""`--ctx` and `--ctx-cap` for the commands that judge a full load (`fit`, `quants`): one wording, one default."""

from __future__ import annotations

import argparse

from gguf_budget.core.model.context import DEFAULT_CTX
from gguf_budget.core.ranges import CONTEXT

from gguf_budget.gui.cli.args import ranged

CTX_HELP = (f"context to judge exactly, {CONTEXT.text}; 8,192 and 8k read too (default: as llama.cpp's own --fit "
            f"does — the trained context, shrunk to the largest that fits, not below {DEFAULT_CTX} before GPU layers "
            "are given up)")
CAP_HELP = f"the most an automatic ctx may take, {CONTEXT.text} (default: the trained context; a cap never raises it)"


def add_ctx_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ctx", type=ranged(CONTEXT), help=CTX_HELP)
    p.add_argument("--ctx-cap", type=ranged(CONTEXT), metavar="N", help=CAP_HELP)
