"""Which part of the model each tensor belongs to, decided by its name.

Rule 1: names outside `blk.N.` are globals, by their stem: `token_embd`, `position_embd`,
        `output_norm`, `output`; anything else global is `other` (rope_freqs, token_types…).
Rule 2: inside a block, the first matching row of `BLOCK_ROLE_RULES` wins, so norms are
        recognised before the attention and SSM prefixes that some norms share.
Rule 3: a block tensor that matches no rule is `other` — counted, never dropped.
"""

from __future__ import annotations

import re

GLOBAL_ROLES = ("token_embd", "position_embd", "output_norm", "output")
BLOCK_ROLES = ("attention", "ffn", "experts", "shared_experts", "norms", "ssm", "other")

_BLOCK_NAME = re.compile(r"^blk\.(\d{1,9})\.(.+)$")

BLOCK_ROLE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("norms", re.compile(r"_norm(_\w+)?\.|^layer_output_norm|^norm\.")),
    ("experts", re.compile(r"_exps\b")),
    ("shared_experts", re.compile(r"_shexp\b")),
    ("ssm", re.compile(r"^ssm_|^time_mix_|^channel_mix_|^shortconv")),
    ("attention", re.compile(r"^attn_")),
    ("ffn", re.compile(r"^ffn_|^exp_probs_b")),
)


def split_block_name(name: str) -> tuple[int, str] | None:
    """`blk.12.attn_q.weight` → (12, "attn_q.weight"); globals → None."""
    m = _BLOCK_NAME.match(name)
    return (int(m.group(1)), m.group(2)) if m else None


def block_role(suffix: str) -> str:
    for role, pattern in BLOCK_ROLE_RULES:
        if pattern.search(suffix):
            return role
    return "other"


def global_role(name: str) -> str:
    stem = name.rsplit(".", 1)[0] if name.endswith((".weight", ".bias")) else name
    return stem if stem in GLOBAL_ROLES else "other"
