"""The records of what llama-server adds to a full load: the settings asked, and where each byte would go.

Defaults: one slot (`-np 1`; llama-server's own default is automatic — 4 slots sharing one
unified KV cache, `slots` Rule 1), the prompt cache sized by the tool (one context's worth,
within what the host has left, `prompt_cache` Rule 5), 32 context checkpoints per slot
(llama-server's default, `checkpoints` Rule 3), no projector, no draft, the typical chat session
(`session_spec.TYPICAL_CHAT`) and the verdict on its peak rather than the worst case.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.errors import RequestError
from gguf_budget.core.fit.server.checkpoints import CTX_CHECKPOINTS
from gguf_budget.core.fit.server.draft import DraftModel
from gguf_budget.core.fit.server.image_size import ImageSize
from gguf_budget.core.fit.server.projector import ProjectorSpec
from gguf_budget.core.fit.server.prompt_cache import check_cache_ram
from gguf_budget.core.fit.server.session import SessionTrace
from gguf_budget.core.fit.server.session_spec import TYPICAL_CHAT, SessionSpec
from gguf_budget.core.fit.server.slots import MAX_SLOTS, SlotLayout
from gguf_budget.core.ranges import Range
from gguf_budget.core.model.kv import KVType

MAX_CTX_CHECKPOINTS = 2**31 - 1
SLOTS = Range("parallel slots (-np)", 1, MAX_SLOTS)
CACHE_RAM = Range("prompt cache (--cache-ram)", -1, 2**31 - 1, "MiB")
CHECKPOINTS = Range("context checkpoints per slot", 0, MAX_CTX_CHECKPOINTS)
DRAFT_LAYERS = Range("draft GPU layers (-ngld)", 0, 2**31 - 1)


@dataclass(frozen=True, kw_only=True)
class ServerSettings:
    """What the person asked of llama-server beyond the model: None means "not given" (see the module)."""

    n_parallel: int | None = 1
    kv_unified: bool | None = None
    cache_ram_mib: int | None = None
    ctx_checkpoints: int = CTX_CHECKPOINTS
    projector: ProjectorSpec | None = None
    projector_offload: bool = True
    image: ImageSize | None = None
    draft: DraftModel | None = None
    session: SessionSpec = TYPICAL_CHAT
    worst_case: bool = False
    """Judge on every cache and checkpoint full instead of the session's peak."""

    def __post_init__(self) -> None:
        if self.n_parallel is not None and not 1 <= self.n_parallel <= MAX_SLOTS:
            raise RequestError(f"parallel slots (-np) must be from 1 to {MAX_SLOTS}, or auto")
        check_cache_ram(self.cache_ram_mib)
        if not 0 <= self.ctx_checkpoints <= MAX_CTX_CHECKPOINTS:
            raise RequestError("context checkpoints must be 0 or more")


@dataclass(frozen=True, kw_only=True)
class ProjectorLoad:
    """The projector as placed: its weights and one image's compute buffer on `device`."""

    spec: ProjectorSpec
    device: str
    weights: int
    compute: int
    image_width: int
    image_height: int
    image_tokens: int

    @property
    def total(self) -> int:
        return self.weights + self.compute


@dataclass(frozen=True, kw_only=True)
class DraftLoad:
    """The draft as placed: weights and KV per device (host first), its compute and output buffers."""

    path: str
    gpu_layers: int
    n_layer: int
    kv_type: KVType
    weights: tuple[tuple[str, int], ...]
    kv: tuple[tuple[str, int | None], ...]
    compute_device: str
    compute: int | None
    output: int
    repack: int = 0
    """The CPU's repacked copies of its host weights (`repack`), beside the mapped ones."""
    sampler: int = 0
    """Its samplers' candidates in host RAM, one a sequence (`runtime_memory` Rule 11)."""
    kv_cells: int = 0
    """Its KV cache's cells' metadata in host RAM (`runtime_memory` Rule 12)."""

    @property
    def n_slots(self) -> int:
        """What -ngld counts up to: every block of the draft and its output layer."""
        return self.n_layer + 1

    def on(self, device: str) -> int | None:
        """Weights + KV the draft holds on `device` (what the verdict counts)."""
        w = dict(self.weights).get(device, 0)
        kv = dict(self.kv).get(device, 0)
        return None if kv is None else w + kv


@dataclass(frozen=True, kw_only=True)
class ServerLoad:
    """Everything llama-server adds, resolved: the slots, the host's cache lines, the projector, the draft.

    `held` is what the verdict counts on each device beyond the model's weights and KV (host first).
    `host_rss` is what the server adds to the process's resident memory once its cache is full.
    """

    settings: ServerSettings
    layout: SlotLayout
    n_ctx: int | None
    ctx_seq: int | None
    slot_ctx: int | None
    outputs: int
    cache_ram_mib: int
    cache_chosen: bool
    prompt_cache: int | None
    checkpoint: int | None
    checkpoints: int | None
    projector: ProjectorLoad | None
    draft: DraftLoad | None
    held: tuple[tuple[str, int | None], ...]
    host_rss: int | None
    session: SessionTrace | None = None
    """The session replayed (`session`); None when the context or a layer's facts are unknown."""
    worst_held: int | None = None
    """The cache and every slot's checkpoints full: the worst case, in host RAM."""
    band_extra: int = 0
    """What the server holds resident beside the model's own in both ends of the band, anonymous: the draft's
    repack, KV, output and compute, the projector's weights and compute."""
    band_mapped: int = 0
    """The draft's mapped weights: resident, file-backed."""

    @property
    def counted(self) -> int | None:
        """The cache and checkpoints the verdict counts (`counted_held`)."""
        return counted_held(self.settings, self.session, self.worst_held)

    def held_on(self, device: str) -> int | None:
        return dict(self.held).get(device, 0)


def counted_held(settings: ServerSettings, session: SessionTrace | None, worst_held: int | None) -> int | None:
    """The cache and checkpoints the verdict counts: the session's peak, or the worst case when asked (what a
    `ServerLoad` counts, known before the load is built)."""
    if settings.worst_case or session is None:
        return worst_held
    return session.peak.held
