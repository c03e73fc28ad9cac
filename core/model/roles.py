"""Which part of the model each tensor belongs to, decided by its name.

Rule 1: names outside `blk.N.` are globals, by their stem: `token_embd`, `position_embd`,
        `output_norm`, `output`; anything else global is `other` (rope_freqs, token_types…).
Rule 2: inside a block, the first matching row of `BLOCK_ROLE_RULES` wins, so norms are
        recognised before the attention and SSM prefixes that some norms share.
Rule 3: a block tensor that matches no rule is `other` — counted, never dropped.
"""

from __future__ import annotations

import re

from gguf_budget.core.vocab import TextEnum


class TensorRole(TextEnum):
    """What a tensor is for; the value is the key of `layer_role_bytes` and of the JSON."""

    TOKEN_EMBD = "token_embd"
    POSITION_EMBD = "position_embd"
    OUTPUT_NORM = "output_norm"
    OUTPUT = "output"
    ATTENTION = "attention"
    FFN = "ffn"
    EXPERTS = "experts"
    SHARED_EXPERTS = "shared_experts"
    NORMS = "norms"
    SSM = "ssm"
    OTHER = "other"


GLOBAL_ROLES = (TensorRole.TOKEN_EMBD, TensorRole.POSITION_EMBD, TensorRole.OUTPUT_NORM, TensorRole.OUTPUT)
"""Roles of the tensors outside the blocks; any other global stem is `other`."""
BLOCK_ROLES = (TensorRole.ATTENTION, TensorRole.FFN, TensorRole.EXPERTS, TensorRole.SHARED_EXPERTS,
               TensorRole.NORMS, TensorRole.SSM, TensorRole.OTHER)
"""The roles a block's bytes are split into, `other` last."""

_BLOCK_NAME = re.compile(r"^blk\.(\d{1,9})\.(.+)$")

BLOCK_ROLE_RULES: tuple[tuple[TensorRole, re.Pattern[str]], ...] = (
    (TensorRole.NORMS, re.compile(r"_norm(_\w+)?\.|^layer_output_norm|^norm\.")),
    (TensorRole.EXPERTS, re.compile(r"_exps\b")),
    (TensorRole.SHARED_EXPERTS, re.compile(r"_shexp\b")),
    (TensorRole.SSM, re.compile(r"^ssm_|^time_mix_|^channel_mix_|^shortconv")),
    (TensorRole.ATTENTION, re.compile(r"^attn_")),
    (TensorRole.FFN, re.compile(r"^ffn_|^exp_probs_b")),
)


def split_block_name(name: str) -> tuple[int, str] | None:
    """`blk.12.attn_q.weight` → (12, "attn_q.weight"); globals → None."""
    m = _BLOCK_NAME.match(name)
    return (int(m.group(1)), m.group(2)) if m else None


def block_role(suffix: str) -> TensorRole:
    for role, pattern in BLOCK_ROLE_RULES:
        if pattern.search(suffix):
            return role
    return TensorRole.OTHER


def global_role(name: str) -> TensorRole:
    stem = name.rsplit(".", 1)[0] if name.endswith((".weight", ".bias")) else name
    return TensorRole(stem) if stem in GLOBAL_ROLES else TensorRole.OTHER
