"""The full load's context when none is asked: what llama.cpp's own default `--fit` does.

llama.cpp (common/fit.cpp `common_params_fit_impl`, on by default) loads a model whose default
placement does not fit by shrinking the context first and giving up GPU layers only after that.
`fit`, the window's full load, the quant ladder and the Library all answer through `auto_fit`,
so "does it fit?" has one answer: the one llama-server would give.

Rule 1: an asked ctx is judged exactly as asked ("context size set by user -> no change") —
        with a vision projector, the asked ctx is the text's and the load's is that plus room
        for one image in every slot (`server.image_room`): llama-server puts an image's tokens
        in the slot's context (tools/mtmd `mtmd_helper_eval_chunks`), so `-c` must hold both.
        An automatic ctx (Rule 2) already holds everything; the notes say what an image leaves.
Rule 2: otherwise the ctx starts at the ceiling (`model.context.ctx_ceiling`: the trained
        context, lowered by a cap); when the load does not fit there without giving anything up
        (Rule 3), the ctx shrinks to the largest candidate that does, no lower than the floor
        min(DEFAULT_CTX, ceiling) (`fit_params_min_ctx`). Candidates are the ceiling and the
        multiples of ENGINE_CELL_PAD (256) between the floor and it — llama.cpp rounds a shrunk
        n_ctx down to a multiple of 256 — and the floor itself.
Rule 3: "without giving anything up": GPU layers fixed by the request are held (`-ngl N`); with
        none fixed, every layer and the output layer on the GPUs (fits_gpu) when the machine
        has GPUs, else admitted by host RAM alone (cpu_only).
Rule 4: when not even the floor fits that way, the ctx is the floor and the placement is
        chosen there (automatic GPU layers: the most that fit, or the fixed ones): llama.cpp
        gives up GPU layers only once the context is at its minimum. That judgement — a split,
        CPU only, or does not fit — is the answer.
Rule 5: the largest ctx that fits with the chosen GPU layers held (`largest_ctx`), up to the
        ceiling — or up to an asked ctx past it (llama.cpp runs an asked ctx as asked, so the
        largest ctx is never below one that fits): for a ctx chosen by Rule 2 that ctx itself
        (the same candidates and test, so nothing is searched again); else
        `max_ctx.largest_fitting_ctx`, aimed from the load's own ctx when it fits there (its
        compute buffers are already replayed; its verdict and headroom are that ctx's, not asked
        again), at the zero of the headroom falling as its tightest device's KV cache grows. `fit`, the window and every quant row read it here.
Rule 6: every device's KV cache grows with ctx, so "fits without giving anything up" holds up to
        some ctx and no further: the largest candidate is found as the largest ctx is, aimed by the
        load's headroom (`max_ctx.last_fitting`): the ceiling first (a load that fits there is judged
        once, not log2 of the candidates times), then the floor, then where the headroom reaches zero.
Rule 7: `-fit off` (common/common.cpp: `common_fit_params` runs only `if (params.fit_params)`) adjusts
        nothing: an unset ctx is the trained context (llama.cpp's n_ctx 0), unset GPU layers are
        every layer (src/llama-model.cpp `n_gpu_layers()`: −1 is n_layer + 1). `-fitc N` moves the
        floor of Rule 2 from 4096 to N.
llama.cpp interpolates its own projection linearly between the floor and the trained context;
this search is exact against this tool's placement, so its ctx can differ by a step of 256.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import overload

from gguf_budget.core.fit.estimate import estimate_fit, fit_headroom
from gguf_budget.core.fit.ctx.max_ctx import largest_fitting_ctx, last_fitting
from gguf_budget.core.fit.placement.devices import headroom
from gguf_budget.core.fit.server.holdings import image_room
from gguf_budget.core.fit.types import FitEstimate, FitRequest, FitVerdict
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.model.context import DEFAULT_CTX, ctx_ceiling
from gguf_budget.core.model.kv import ENGINE_CELL_PAD
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.vocab import TextEnum


class FitCtxReason(TextEnum):
    """Why the full load's ctx is what it is; the value is the JSON word."""

    ASKED = "asked"  # Rule 1
    CEILING = "ceiling"  # Rule 2: the trained context (or the cap) fits as it is
    SHRUNK = "shrunk"  # Rule 2: shrunk below the ceiling to fit
    FLOOR = "floor"  # Rule 4: at the floor, with the placement chosen there


@dataclass(frozen=True)
class AutoFit:
    """The full load at the ctx llama.cpp's default fit would choose, and why that ctx."""

    fit: FitEstimate
    ctx: int
    ceiling: int
    reason: FitCtxReason
    trained: int | None
    image_room: int = 0
    """Rule 1: tokens added to an asked ctx so every slot holds one image beside the asked text."""

    @property
    def asked(self) -> int:
        """The ctx as asked, before Rule 1's image room was added (the ctx itself for a chosen one)."""
        return self.ctx - self.image_room

    @property
    def shrunk(self) -> bool:
        """The ctx was lowered below the ceiling to fit (Rule 2 or 4)."""
        return self.reason in (FitCtxReason.SHRUNK, FitCtxReason.FLOOR) and self.ctx < self.ceiling


@dataclass(frozen=True)
class _Candidates(Sequence[int]):
    """Rule 2's candidates, lowest first: the floor, every multiple of the pad between, the ceiling — computed
    by index, never listed (a header claiming a 2^32-token context has 16 million of them)."""

    floor: int
    ceiling: int

    @property
    def _steps(self) -> range:
        return range(-(-(self.floor + 1) // ENGINE_CELL_PAD) * ENGINE_CELL_PAD, self.ceiling, ENGINE_CELL_PAD)

    def __len__(self) -> int:
        return 1 + len(self._steps) + (self.ceiling > self.floor)

    @overload
    def __getitem__(self, i: int) -> int: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[int]: ...

    def __getitem__(self, i: int | slice) -> int | Sequence[int]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        i = i + n if i < 0 else i
        if not 0 <= i < n:
            raise IndexError(i)
        if i == 0:
            return self.floor
        return self.ceiling if i == n - 1 else self._steps[i - 1]


def _whole(model: ModelSpec, snapshot: HardwareSnapshot, request: FitRequest, ctx: int) -> tuple[bool, int | None]:
    """Rule 3 at one ctx, with the load's headroom (Rule 6). "Every layer on the GPUs" is asked as such (-ngl L + 1):
    the automatic layers are every layer exactly when every device fits there, so the GPU-layer search need not run
    at each candidate."""
    if request.gpu_layers is None and snapshot.gpus:
        verdict, spare = fit_headroom(model, snapshot, replace(request, ctx=ctx, gpu_layers=model.n_layer + 1))
        return verdict is FitVerdict.FITS_GPU, spare
    verdict, spare = fit_headroom(model, snapshot, replace(request, ctx=ctx))
    return verdict.admitted, spare


def auto_fit(model: ModelSpec, snapshot: HardwareSnapshot, request: FitRequest, cap: int | None = None,
             report: bool = True) -> AutoFit:
    """Rules 1–4, 6: `request.ctx` None asks for llama.cpp's default; `cap` lowers the ceiling. With `-fit off`
    (Rule 7) nothing is adjusted: an unset ctx is the ceiling, unset GPU layers are every layer. `report` False:
    a search's candidate (`estimate` Rule 14)."""
    ceiling = ctx_ceiling(model.context_length, cap)
    if not request.fit:
        layers = request.gpu_layers if request.gpu_layers is not None else model.n_layer + 1
        request = replace(request, gpu_layers=layers, ctx=request.ctx if request.ctx is not None else ceiling)
    if request.ctx is not None:
        room = image_room(request.server)
        ctx = request.ctx + room
        return AutoFit(estimate_fit(model, snapshot, replace(request, ctx=ctx), report), ctx, ceiling, FitCtxReason.ASKED,
                       model.context_length, room)
    candidates = _Candidates(min(request.fit_ctx or DEFAULT_CTX, ceiling), ceiling)
    last = last_fitting(len(candidates), lambda i: candidates[i],
                        lambda i: _whole(model, snapshot, request, candidates[i]))
    if last < 0:
        ctx, reason = candidates[0], FitCtxReason.FLOOR
    else:
        ctx = candidates[last]
        reason = FitCtxReason.CEILING if ctx == ceiling else FitCtxReason.SHRUNK
    return AutoFit(estimate_fit(model, snapshot, replace(request, ctx=ctx), report), ctx, ceiling, reason,
                   model.context_length)


def largest_cap(choice: AutoFit) -> int:
    """Rule 5: the ctx the largest that fits is searched up to: the ceiling, or an asked ctx past it."""
    return max(choice.ceiling, choice.ctx)


def largest_ctx(model: ModelSpec, snapshot: HardwareSnapshot, choice: AutoFit) -> int | None:
    """Rule 5."""
    if choice.reason in (FitCtxReason.CEILING, FitCtxReason.SHRUNK):
        return choice.ctx
    fit = choice.fit
    if not fit.verdict.admitted:
        return largest_fitting_ctx(model, snapshot, fit.request, fit.gpu_layers, largest_cap(choice))
    return largest_fitting_ctx(model, snapshot, fit.request, fit.gpu_layers, largest_cap(choice), choice.ctx,
                               headroom(fit.devices), _falling(fit, choice.ctx))


def _falling(fit: FitEstimate, ctx: int) -> tuple[int, int] | None:
    """Rule 5: how fast the load's headroom falls with ctx, for the search to aim with (`max_ctx` Rule 6): the KV cache
    of its tightest device over the cells it holds; None where that device is the host (`max_ctx` Rule 6 says why) or
    holds no cache."""
    known = [d for d in fit.devices if d.need is not None]
    if not known or ctx <= 0:
        return None
    tightest = min(known, key=lambda d: d.usable - (d.need or 0))
    return (tightest.kv, fit.kv.cells or ctx) if tightest.kv and tightest is not fit.devices[0] else None
