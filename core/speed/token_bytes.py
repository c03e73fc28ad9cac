"""What one generated token reads, split by where it reads it from. Exact bytes.

Rule 1: a token reads every weight it passes through once: each block, the output table
        (the head), the final norm and the other global tensors, one row of the token
        embeddings, and the whole KV cache at the plan's ctx (the upper end of a conversation).
Rule 2: MoE: a block's routed-expert tensors (`*_exps`) are read at expert_used_count /
        expert_count (each token visits that many experts), rounded down per block; shared
        experts, attention and the router are read whole. Without both counts every expert
        byte counts (`MoeFraction` None).
Rule 3: budget plan: RAM holds the pinned layers, a resident head, the globals, the embedding
        row and the KV cache; the stream tier carries the unpinned layers and a streamed head
        (all of its table passes through the window each token). No VRAM.
Rule 4: full load: the GPUs hold the offloaded blocks, the output layer when offloaded, and
        their layers' KV; the host the rest. The KV split is the fit's (unknown KV: None).
Rule 5: the tiers always add up to `read_per_token` (Rule 1) for the same ctx's KV.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate

from gguf_budget.core.fit.gpu_split import Placement
from gguf_budget.core.fit.types import FitEstimate
from gguf_budget.core.model.roles import TensorRole
from gguf_budget.core.model.spec import ModelSpec


@dataclass(frozen=True)
class TokenBytes:
    """Bytes one token reads from each tier."""

    ram: int
    stream: int
    vram: int

    @property
    def total(self) -> int:
        return self.ram + self.stream + self.vram


@dataclass(frozen=True)
class MoeFraction:
    """Routed experts read per token: `used` of `count`."""

    used: int
    count: int

    @property
    def text(self) -> str:
        return f"routed experts counted at {self.used}/{self.count} per token (experts used / expert count)"


def moe_fraction(model: ModelSpec) -> MoeFraction | None:
    used, count = model.expert_used_count, model.expert_count
    if not model.routed_expert_bytes or not used or not count or used > count:
        return None
    return MoeFraction(used, count)


def layer_read_bytes(model: ModelSpec) -> tuple[int, ...]:
    """Rule 2: bytes each block gives one token."""
    moe = moe_fraction(model)
    if moe is None:
        return tuple(model.layer_bytes)
    out = []
    for total, roles in zip(model.layer_bytes, model.layer_role_bytes, strict=True):
        experts = roles.get(TensorRole.EXPERTS, 0)
        out.append(total - experts + experts * moe.used // moe.count)
    return tuple(out)


@dataclass(frozen=True)
class TokenPrices:
    """A model's per-token reads, priced once so every budget costs two lookups."""

    layer_prefix: tuple[int, ...]
    file_prefix: tuple[int, ...]
    head: int
    output_norm: int
    other_globals: int
    embd_row: int
    moe: MoeFraction | None

    @classmethod
    def of(cls, model: ModelSpec) -> TokenPrices:
        g = model.global_bytes
        return cls(
            layer_prefix=tuple(accumulate(layer_read_bytes(model), initial=0)),
            file_prefix=tuple(accumulate(model.layer_bytes, initial=0)),
            head=model.output_table_bytes,
            output_norm=g.output_norm,
            other_globals=(g.position_embd or 0) + g.other,
            embd_row=model.token_embd_row_bytes,
            moe=moe_fraction(model),
        )

    @property
    def n_layer(self) -> int:
        return len(self.layer_prefix) - 1

    def read_per_token(self, kv: int) -> int:
        """Rule 1: everything a token reads, with `kv` bytes of cache."""
        return self.layer_prefix[-1] + self.head + self.output_norm + self.other_globals + self.embd_row + kv

    def budget_plan(self, n_pinned: int, stream_head: bool, kv: int) -> TokenBytes:
        """Rule 3."""
        pinned = self.layer_prefix[n_pinned]
        streamed = self.layer_prefix[-1] - pinned + (self.head if stream_head else 0)
        ram = pinned + (0 if stream_head else self.head) + self.output_norm + self.other_globals + self.embd_row + kv
        return TokenBytes(ram=ram, stream=streamed, vram=0)

    def streamed_file_bytes(self, n_pinned: int, stream_head: bool) -> int:
        """What the page cache must hold to serve the stream tier: the unpinned layers whole, and a streamed head."""
        return self.file_prefix[-1] - self.file_prefix[n_pinned] + (self.head if stream_head else 0)

    def full_load(self, host_blocks: int, output_on_gpu: bool, kv_host: int, kv_gpu: int) -> TokenBytes:
        """Rule 4."""
        gpu_blocks = self.layer_prefix[-1] - self.layer_prefix[host_blocks]
        output = self.head + self.output_norm
        host = self.layer_prefix[host_blocks] + self.other_globals + self.embd_row + kv_host
        if output_on_gpu:
            return TokenBytes(ram=host, stream=0, vram=gpu_blocks + output + kv_gpu)
        return TokenBytes(ram=host + output, stream=0, vram=gpu_blocks + kv_gpu)


def fit_token_bytes(prices: TokenPrices, fit: FitEstimate) -> TokenBytes | None:
    """None when the fit cannot price the KV cache."""
    if fit.kv.host is None or fit.kv.gpu is None:
        return None
    host_blocks = Placement(fit.n_layer, fit.gpu_layers, ()).host_blocks
    return prices.full_load(host_blocks, fit.output_on_gpu, fit.kv.host, fit.kv.gpu)
