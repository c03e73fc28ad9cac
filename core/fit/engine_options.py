"""What a person set of llama.cpp's engine, in llama.cpp's own options: None is "the program's own default".

`EngineSettings` is what a full load is priced with (every value resolved); `EngineOptions` is
what was asked, so the program's own defaults can differ (llama-cpp-python's full-size SWA cache,
its 512-token batch) and the printed command says only what differs from them.

Rule 1: defaults are llama.cpp 0c1e570's (common/common.h `common_params`, src/llama-context.cpp
        `llama_context_default_params` for llama-cpp-python): flash attention auto, ubatch 512,
        batch 2048 (llama-cpp-python 512), the sliding-window cache window-sized except in
        llama-cpp-python (`swa_full = true` there), load mode auto (mmap), repack on, KV and
        large-batch ops offloaded, split by layer, main GPU 0, every device, llama.cpp's own
        `--fit` on with its 4096-token floor (`fit_params_min_ctx`).
Rule 2: load modes (common/arg.cpp `--load-mode`): auto, mmap and mmap+mlock map the file;
        none, mlock and dio read it into anonymous memory (`mmap = False`); mlock and mmap+mlock
        lock the weights in RAM.
Rule 3: `argv()` spells what differs from Rule 1 as llama.cpp spells it, in one fixed order, so a
        printed command reads back (`llama_words.reader`) to the same options.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gguf_budget.core.errors import RequestError
from gguf_budget.core.fit.runtime_types import (
    DEFAULT_THREADS, EngineSettings, Runtime, SplitMode, TensorOverride,
)
from gguf_budget.core.model.context import DEFAULT_CTX
from gguf_budget.core.vocab import TextEnum

DEFAULT_UBATCH = 512
SWA_FULL_BY_DEFAULT = frozenset({Runtime.LLAMA_CPP_PYTHON})


class LoadMode(TextEnum):
    """llama.cpp's `-lm/--load-mode` (Rule 2)."""

    AUTO = "auto"
    NONE = "none"
    MMAP = "mmap"
    MLOCK = "mlock"
    MMAP_MLOCK = "mmap+mlock"
    DIO = "dio"

    @property
    def maps(self) -> bool:
        return self in (LoadMode.AUTO, LoadMode.MMAP, LoadMode.MMAP_MLOCK)

    @property
    def locks(self) -> bool:
        return self in (LoadMode.MLOCK, LoadMode.MMAP_MLOCK)


def _on_off(value: bool) -> str:
    return "on" if value else "off"


@dataclass(frozen=True, kw_only=True)
class EngineOptions:
    """The engine options a person set (None or the default: not set; Rule 1)."""

    flash_attn: bool | None = None
    ubatch: int | None = None
    batch: int | None = None
    swa_full: bool | None = None
    load_mode: LoadMode = LoadMode.AUTO
    threads: int | None = None
    threads_batch: int | None = None
    repack: bool = True
    kv_offload: bool = True
    op_offload: bool = True
    split_mode: SplitMode = SplitMode.LAYER
    main_gpu: int = 0
    overrides: tuple[TensorOverride, ...] = ()
    devices: tuple[str, ...] | None = None
    fit: bool = True
    fit_ctx: int = DEFAULT_CTX

    def __post_init__(self) -> None:
        for name in ("ubatch", "batch", "threads", "threads_batch"):
            value = getattr(self, name)
            if value is not None and not 1 <= value <= 2**31 - 1:
                raise RequestError(f"{name.replace('_', ' ')} must be from 1 to 2^31−1, got {value}")
        if not 0 <= self.main_gpu < 2**31 or not 0 <= self.fit_ctx < 2**31:
            raise RequestError("the main GPU and --fit-ctx must be from 0 to 2^31−1")
        object.__setattr__(self, "load_mode", LoadMode(self.load_mode))
        object.__setattr__(self, "split_mode", SplitMode(self.split_mode))

    def swa_full_for(self, runtime: Runtime) -> bool:
        return self.swa_full if self.swa_full is not None else runtime in SWA_FULL_BY_DEFAULT

    def settings(self, runtime: Runtime, base: EngineSettings | None = None) -> EngineSettings:
        """The resolved settings a full load is priced with (Rule 1), over `base`'s other fields."""
        base = base if base is not None else EngineSettings(runtime=runtime)
        return replace(base, runtime=runtime, flash_attn=self.flash_attn, ubatch=self.ubatch or DEFAULT_UBATCH,
                       batch=self.batch, swa_full=self.swa_full_for(runtime), mmap=self.load_mode.maps,
                       mlock=self.load_mode.locks, threads=self.threads or DEFAULT_THREADS,
                       threads_batch=self.threads_batch, repack=self.repack, kv_offload=self.kv_offload,
                       op_offload=self.op_offload, split_mode=self.split_mode, main_gpu=self.main_gpu,
                       overrides=self.overrides, devices=self.devices)

    def argv(self) -> list[str]:
        """Rule 3: what differs from llama.cpp's defaults, in llama.cpp's spelling."""
        out: list[str] = []
        out += ["-fa", _on_off(self.flash_attn)] if self.flash_attn is not None else []
        out += ["-b", str(self.batch)] if self.batch is not None else []
        out += ["-ub", str(self.ubatch)] if self.ubatch is not None else []
        out += ["--swa-full"] if self.swa_full else []
        out += ["-lm", self.load_mode.value] if self.load_mode is not LoadMode.AUTO else []
        out += ["-t", str(self.threads)] if self.threads is not None else []
        out += ["-tb", str(self.threads_batch)] if self.threads_batch is not None else []
        out += ["--no-repack"] if not self.repack else []
        out += ["-nkvo"] if not self.kv_offload else []
        out += ["--no-op-offload"] if not self.op_offload else []
        out += ["-sm", self.split_mode.value] if self.split_mode is not SplitMode.LAYER else []
        out += ["-mg", str(self.main_gpu)] if self.main_gpu else []
        for o in self.overrides:
            out += ["-ot", f"{o.pattern}={o.buffer}"]
        out += ["-dev", ",".join(self.devices) or "none"] if self.devices is not None else []
        out += ["-fit", "off"] if not self.fit else []
        out += ["-fitc", str(self.fit_ctx)] if self.fit_ctx != DEFAULT_CTX else []
        return out

    @property
    def given(self) -> tuple[str, ...]:
        """The names of the options set (for "which settings are defaults")."""
        default = EngineOptions()
        return tuple(name for name in self.__dataclass_fields__ if getattr(self, name) != getattr(default, name))


DEFAULT_ENGINE_OPTIONS = EngineOptions()
