"""The records of what llama.cpp holds beyond weights and KV: settings in, itemized memory out.

Two kinds of memory are kept apart (issue 13): **anonymous** memory (KV, compute, output,
repacked copies, weights loaded without mmap, the process itself) is what the machine must
really have; **file-backed** mapped weights count in RSS but are clean pages the kernel can
drop and read back. The verdict does not use these figures yet: it compares weights + KV with
usable memory, the reserves standing in for the rest (`VERDICT_BASIS`).
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.errors import RequestError

VERDICT_BASIS = ("the verdict compares weights + KV with usable memory (free − reserve); the reserves stand in "
                 "for compute, output, repacked copies and the process, itemized beside it")


@dataclass(frozen=True)
class EngineSettings:
    """How llama.cpp runs, beyond ctx, GPU layers and cache type (defaults: llama-cli of the pinned revision).

    `outputs` is how many logits rows the compute graph is reserved for: 1 for llama-cli and
    llama-server of this revision, n_ubatch for llama-completion, llama-cpp-python and older
    builds. `cpu_features` None means: take the snapshot's.
    """

    ubatch: int = 512
    outputs: int = 1
    flash_attn: bool = True
    swa_full: bool = False
    mmap: bool = True
    repack: bool = True
    cpu_features: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if self.ubatch < 1 or self.outputs < 1:
            raise RequestError("ubatch and outputs must be at least 1")


@dataclass(frozen=True)
class DeviceMemory:
    """What llama.cpp holds on one device, by kind; None where a fact is missing."""

    name: str
    mapped_weights: int
    loaded_weights: int
    repack: int
    kv: int | None
    output: int
    compute: int | None
    process: int

    @property
    def anonymous(self) -> int | None:
        """What the device must really have: everything but the mapped file."""
        if self.kv is None or self.compute is None:
            return None
        return self.loaded_weights + self.repack + self.kv + self.output + self.compute + self.process

    @property
    def total(self) -> int | None:
        anon = self.anonymous
        return None if anon is None else anon + self.mapped_weights


@dataclass(frozen=True)
class RuntimeMemory:
    """The itemized prediction: one `DeviceMemory` per device (host first), and how it was made."""

    settings: EngineSettings
    devices: tuple[DeviceMemory, ...]
    repacked_tensors: tuple[str, ...]
    cpu_features: frozenset[str] | None
    compute_approximate: bool

    @property
    def host(self) -> DeviceMemory:
        return self.devices[0]

    @property
    def peak_rss(self) -> int | None:
        """Predicted peak RSS of the llama.cpp process: every host item, mapped weights included."""
        return self.host.total

    @property
    def verdict_basis(self) -> str:
        return VERDICT_BASIS
