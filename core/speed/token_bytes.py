"""What one generated token reads, split by where it reads it from, and what a prompt costs in FLOPs. Exact.

Rule 1: a token reads every weight it passes through once: each block, the output table
        (the head), the final norm and the other global tensors, one row of the token
        embeddings, and the KV cache of the tokens so far: none at the start of a conversation
        (recurrent states excepted), the whole context at its end.
Rule 2: MoE: a block's routed-expert tensors (`*_exps`) are read at expert_used_count /
        expert_count (each token visits that many experts), rounded down per block; shared
        experts, attention and the router are read whole. Without both counts every expert
        byte counts (`MoeFraction` None).
Rule 3: budget plan: RAM holds the pinned layers, a resident head, the globals, the embedding
        row and the KV cache; the stream tier carries the unpinned layers and a streamed head
        (all of its table passes through the window each token). No VRAM.
Rule 4: full load: the GPUs hold the offloaded blocks (less the experts Rule 9 keeps on the
        host), the output layer when offloaded, and their layers' KV; the host the rest. The KV
        split is the fit's (unknown KV: None).
Rule 5: the tiers always add up to `read_per_token` (Rule 1) for the same KV.
Rule 6: a prompt of N tokens costs 2 FLOPs per weight of every block per token (routed experts
        at Rule 2's share), the head once (llama.cpp computes logits for the last prompt token
        only: `n_outputs` = 1), and attention: the token at position p of a layer with window w
        scores and mixes min(p, w) cached tokens, 2 · n_head · (k_dim + v_dim) FLOPs each
        (recurrent layers' state updates are not counted).
Rule 7: a prompt's *work* is the same count weighed by how fast llama.cpp's CPU kernels run
        each weight type (`kernel_speed` Rule 1: FLOPs / the type's speed relative to Q8_0;
        attention at F16's): what prefill time is priced from. FLOPs stay what is shown.
Rule 9: experts on the CPU (`--n-cpu-moe N`, `core.fit.placement.moe`; `--cpu-moe`: N = every block):
        the routed experts of the offloaded blocks among 0 … N − 1 are read from RAM at Rule 2's
        share instead of VRAM, as the fit keeps them (`fit.placement.moe.experts_on_host`), whether the fit
        was asked for them or is the expert-offload placement shown beside it (every slot
        offloaded).
Rule 10: tensor overrides (`-ot PATTERN=BUFFER`, the first pattern that finds a weight's name wins, as the fit
        places them: `fit.buffers.sched.Scheduler.weight_device`, with `--n-cpu-moe N`'s own override after the
        person's, `fit.placement.moe.expert_overrides`): a block weight an override keeps in a host buffer (`CPU`,
        `CPU_REPACK`, …: the names the fit gives the host, `fit.runtime_memory`) is read from RAM, one an override
        puts in a GPU's buffer from VRAM, whatever its block's slot; routed experts at Rule 2's share of what
        moved in each block (so whole blocks moved read exactly Rule 9's bytes). The tiers still add up (Rule 5).
Rule 8: a model's main weight type is the type holding the most block weights (Q4_K in a Q4_K_M
        file): a GPU backend's prefill speed is read for it (`backend_speed` Rule 2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import accumulate
from typing import TYPE_CHECKING

from gguf_budget.core.fit.placement.gpu_split import Placement
from gguf_budget.core.gguf.constants import GGMLQuantizationType as Q
from gguf_budget.core.model.kv import KVType, layer_kv_table
from gguf_budget.core.model.per_model_cache import per_model
from gguf_budget.core.model.roles import TensorRole
from gguf_budget.core.model.spec import LayerKind, ModelSpec, ModelTensor
from gguf_budget.core.speed.kernel_speed import ATTENTION_TYPE, type_speed

if TYPE_CHECKING:
    from gguf_budget.core.fit.runtime_types import TensorOverride
    from gguf_budget.core.fit.types import FitEstimate


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


def expert_read_bytes(model: ModelSpec) -> tuple[int, ...]:
    """Rule 9: each block's routed-expert bytes one token reads (0 for a dense model)."""
    moe = moe_fraction(model)
    if moe is None:
        return tuple(0 for _ in model.layer_bytes)
    return tuple(roles.get(TensorRole.EXPERTS, 0) * moe.used // moe.count for roles in model.layer_role_bytes)


def _block_elements(moe: MoeFraction | None, t: ModelTensor) -> int:
    """Rule 6: the elements of a block tensor one token passes through, routed experts at their share (`moe`, the
    model's, found once a model: it sums every layer's roles)."""
    experts = t.role is TensorRole.EXPERTS and moe is not None
    return t.n_elements * moe.used // moe.count if experts and moe is not None else t.n_elements


def block_weights(model: ModelSpec) -> int:
    """Rule 6: the weights (elements) of every block a token passes through, routed experts at their share."""
    moe = moe_fraction(model)
    return sum(_block_elements(moe, t) for t in model.tensors if t.layer is not None)


def block_work(model: ModelSpec) -> float:
    """Rule 7: `block_weights`, each tensor's weighed by its type's kernel speed."""
    moe = moe_fraction(model)
    return sum(_block_elements(moe, t) / type_speed(t.ggml_type) for t in model.tensors if t.layer is not None)


def main_type(model: ModelSpec) -> Q | None:
    """Rule 8; None for a model without blocks."""
    elements: dict[Q, int] = {}
    for t in model.tensors:
        if t.layer is not None and len(t.shape) > 1:
            elements[t.ggml_type] = elements.get(t.ggml_type, 0) + t.n_elements
    return max(elements, key=lambda q: elements[q]) if elements else None


def _head_tensors(model: ModelSpec) -> list[ModelTensor]:
    output = [t for t in model.tensors if t.role is TensorRole.OUTPUT]
    return output or [t for t in model.tensors if t.role is TensorRole.TOKEN_EMBD]


def head_weights(model: ModelSpec) -> int:
    """The output table's elements (the embedding table's when tied)."""
    return sum(t.n_elements for t in _head_tensors(model))


def head_work(model: ModelSpec) -> float:
    """Rule 7: `head_weights` weighed by the table's kernel speed."""
    return sum(t.n_elements / type_speed(t.ggml_type) for t in _head_tensors(model))


def attention_flops(model: ModelSpec) -> tuple[tuple[int | None, int], ...]:
    """Rule 6: (window or None for full attention, FLOPs per cached token) summed over the layers sharing it."""
    rates: dict[int | None, int] = {}
    for layer in model.layers:
        if layer.kind not in (LayerKind.FULL, LayerKind.SWA):
            continue
        window = layer.window if layer.kind is LayerKind.SWA else None
        rate = 2 * (layer.n_head or 0) * ((layer.k_dim or 0) + (layer.v_dim or 0))
        rates[window] = rates.get(window, 0) + rate
    return tuple(sorted(rates.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)))


def _positions_seen(n: int, window: int | None) -> int:
    """Σ over p = 1..n of min(p, window): the cached tokens n prompt tokens attend to."""
    if window is None or n <= window:
        return n * (n + 1) // 2
    return window * (window + 1) // 2 + (n - window) * window


@dataclass(frozen=True, kw_only=True)
class TokenPrices:
    """A model's per-token reads and FLOPs, priced once so every budget costs two lookups."""

    layer_prefix: tuple[int, ...]
    file_prefix: tuple[int, ...]
    head: int
    output_norm: int
    other_globals: int
    embd_row: int
    moe: MoeFraction | None
    block_weights: int = 0
    head_weights: int = 0
    block_work: float = 0.0
    head_work: float = 0.0
    attention: tuple[tuple[int | None, int], ...] = ()
    main_type: Q | None = None
    expert_prefix: tuple[int, ...] = (0,)
    model: ModelSpec | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, model: ModelSpec) -> TokenPrices:
        """The model's prices, made once a model object (`per_model_cache`): a ctx tick's context tiers, headline
        and plan view ask for them again (a 70B's took 0.1 s)."""
        return _priced(model)

    @classmethod
    def _made(cls, model: ModelSpec) -> TokenPrices:
        g = model.global_bytes
        return cls(
            layer_prefix=tuple(accumulate(layer_read_bytes(model), initial=0)),
            file_prefix=tuple(accumulate(model.layer_bytes, initial=0)),
            head=model.output_table_bytes,
            output_norm=g.output_norm,
            other_globals=(g.position_embd or 0) + g.other,
            embd_row=model.token_embd_row_bytes,
            moe=moe_fraction(model),
            block_weights=block_weights(model),
            head_weights=head_weights(model),
            block_work=block_work(model),
            head_work=head_work(model),
            attention=attention_flops(model),
            main_type=main_type(model),
            expert_prefix=tuple(accumulate(expert_read_bytes(model), initial=0)),
            model=model,
        )

    def prompt_flops(self, n: int) -> int:
        """Rule 6: the FLOPs of a prompt of `n` tokens."""
        if n <= 0:
            return 0
        attention = sum(rate * _positions_seen(n, window) for window, rate in self.attention)
        return 2 * n * self.block_weights + 2 * self.head_weights + attention

    def prompt_work(self, n: int) -> float:
        """Rule 7: the work of a prompt of `n` tokens, in Q8_0-equivalent FLOPs."""
        if n <= 0:
            return 0.0
        attention = sum(rate * _positions_seen(n, window) for window, rate in self.attention)
        return 2 * n * self.block_work + 2 * self.head_work + attention / type_speed(ATTENTION_TYPE)

    def kv_split(self, kv_type: KVType, tokens: int, host_blocks: int, swa_full: bool = False) -> tuple[int, int] | None:
        """The KV of `tokens` cached tokens on the host's first `host_blocks` blocks and on the rest (sliding
        layers capped at their window unless `swa_full`); None if unknown."""
        if self.model is None:
            return None
        table = layer_kv_table(self.model, tokens, kv_type, swa_full=swa_full)
        if any(v is None for v in table):
            return None
        known = [v or 0 for v in table]
        return sum(known[:host_blocks]), sum(known[host_blocks:])

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


def experts_on_host(prices: TokenPrices, read: TokenBytes, host_blocks: int, n_cpu_moe: int | None) -> TokenBytes:
    """Rule 9: `read` with the routed experts of the offloaded blocks host_blocks … n_cpu_moe − 1 moved to RAM."""
    n = min(max(n_cpu_moe or 0, 0), len(prices.expert_prefix) - 1)
    moved = prices.expert_prefix[n] - prices.expert_prefix[host_blocks] if n > host_blocks else 0
    return TokenBytes(ram=read.ram + moved, stream=read.stream, vram=read.vram - moved)


def experts_on_cpu(prices: TokenPrices, n_cpu_moe: int, kv_gpu: int) -> TokenBytes:
    """Rule 9 for the expert-offload placement: every slot on the GPUs, the first `n_cpu_moe` blocks' experts in RAM."""
    return experts_on_host(prices, prices.full_load(0, True, 0, kv_gpu), 0, n_cpu_moe)


HOST_BUFFER = "CPU"
"""Rule 10: an override buffer whose name starts so is the host's (the fit refuses any other name not a GPU's)."""


@per_model(maxsize=64)
def _block_moves(model: ModelSpec, overrides: tuple[tuple[str, str], ...]) -> tuple[tuple[int, int], ...]:
    """Rule 10, per block: the bytes one token reads of its weights an override sends to the host, and of those it
    sends to a GPU (routed experts at Rule 2's share of the moved experts); once per model and overrides, as a search
    prices the same overrides at many contexts."""
    moe = moe_fraction(model)
    moved = [[0, 0, 0, 0] for _ in range(model.n_layer)]  # to host: other, experts; to a GPU: other, experts
    for t in model.tensors:
        if t.layer is None or not 0 <= t.layer < model.n_layer:
            continue
        buffer = next((b for pattern, b in overrides if re.search(pattern, t.name)), None)
        if buffer is not None:
            at = 0 if buffer.upper().startswith(HOST_BUFFER) else 2
            moved[t.layer][at + (t.role is TensorRole.EXPERTS and moe is not None)] += t.nbytes

    def share(experts: int) -> int:
        return experts if moe is None else experts * moe.used // moe.count

    return tuple((h + share(he), g + share(ge)) for h, he, g, ge in moved)


def overridden(prices: TokenPrices, read: TokenBytes, host_blocks: int,
               overrides: tuple[TensorOverride, ...]) -> TokenBytes:
    """Rule 10: `read` with what the overrides send from offloaded blocks to the host, and from the host's blocks
    (0 … host_blocks − 1) to a GPU, read where they are."""
    if prices.model is None or not overrides:
        return read
    moves = _block_moves(prices.model, tuple((o.pattern, o.buffer) for o in overrides))
    to_host = sum(h for h, _ in moves[host_blocks:])
    to_gpu = sum(g for _, g in moves[:host_blocks])
    return TokenBytes(ram=read.ram + to_host - to_gpu, stream=read.stream, vram=read.vram - to_host + to_gpu)


def fit_token_bytes(prices: TokenPrices, fit: FitEstimate, tokens: int) -> TokenBytes | None:
    """Rule 4 with `tokens` cached, experts and overridden weights where Rules 9–10 put them; None when the KV cache
    cannot be priced."""
    if fit.kv.host is None or fit.kv.gpu is None:
        return None
    host_blocks = Placement(fit.n_layer, fit.gpu_layers, ()).host_blocks
    split = prices.kv_split(fit.kv.kv_type, tokens, host_blocks, fit.request.engine.swa_full)
    if split is None:
        return None
    read = prices.full_load(host_blocks, fit.output_on_gpu, *split)
    overrides = fit.request.engine.overrides
    if not overrides:
        return experts_on_host(prices, read, host_blocks, fit.request.n_cpu_moe)
    from gguf_budget.core.fit.placement.moe import expert_overrides  # Rule 10 only: `plan` starts without the fit

    n_cpu_moe = min(fit.request.n_cpu_moe or 0, fit.n_layer) if prices.model and prices.model.routed_expert_bytes else 0
    return overridden(prices, read, host_blocks, overrides + expert_overrides(n_cpu_moe))


@per_model(maxsize=8)
def _priced(model: ModelSpec) -> TokenPrices:
    return TokenPrices._made(model)
