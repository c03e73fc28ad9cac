"""Will this model fit this machine, and how would llama.cpp place it? (seed 003, DESIGN §3.4)

Pure: a function of the ModelSpec, a HardwareSnapshot and a FitRequest; cheap enough for
every slider tick (prefix sums over the L + 1 slots; the auto search is a bisection).

Rule 1: usable = free − reserve, never below 0. The host reserve (6 GiB) applies to host
        RAM, the GPU reserve (1.5 GiB) to the FIRST NVIDIA GPU only. Host free is psutil's
        `available` after cgroup limits: swap and SSD paging are never counted as RAM.
Rule 2: weights, coarse (the seed's gate): GPU = complete file bytes · min(g, L) / L, host =
        the rest. A header-only file's complete size is unknown, so its tensor bytes stand in.
Rule 3: weights, exact: placement by `gpu_split` (llama.cpp `load_tensors`): the output
        layer first, then the last g − 1 blocks on the GPUs; token/position embeddings and
        other global tensors on the host. Tied embeddings: the offloaded output layer is a
        copy of `token_embd` (llama.cpp `TENSOR_DUPLICATED`), which the host also keeps — so
        the exact GPU + host then exceed the tensor bytes by that table.
Rule 4: KV: the seed's FP16 bound = Σ attention layers min(ctx, window) · n_head_kv ·
        (k_dim + v_dim) · 2, recurrent state excluded; the engine figure is `kv_cache` Rule 5
        (256-cell padding, window + 512 cells for sliding layers, F32 recurrent state, the
        chosen cache type). Which layers slide or recur comes from metadata where present,
        else from llama.cpp's per-architecture rules (`model_facts` Rules 4–5: `set_swa_pattern`
        in src/models/*.cpp, `recurrent_layer_arr`); MLA layers cache one latent row of
        kv_lora_rank + rope dims, V being a view of it (`model_facts` Rule 6, llama.cpp MLA).
        Each layer's cache sits on that layer's device (llama.cpp llama-kv-cache.cpp
        `llama_kv_cache`: `model.dev_layer(il)` when offload_kqv, the default).
Rule 5: auto g = the largest g for which every GPU holds its weights and KV within its
        usable memory, bisected (`gpu_split` Rule 5: O(log L) placements).
Rule 6: verdict: unknown when a needed fact is missing (listed, never taken as 0); else
        does_not_fit when any device is short (shortfall per device); else cpu_only (g = 0),
        fits_gpu (every block and the output layer on GPU, g = L + 1) or fits_split.
Rule 7: MoE: the CPU-experts strategy (llama.cpp `--cpu-moe`: `*_exps` tensors in host
        RAM, every other layer on the GPUs) is shown beside the default; its host side is
        budgeted conservatively as the complete file, as the seed's planner does.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate

from gguf_budget.core.fit.notes import fit_notes, fit_unknowns
from gguf_budget.core.views.fit_report import fit_dict, fit_text, snapshot_dict, snapshot_text
from gguf_budget.core.fit.types import (
    Claims, DeviceLoad, FitEstimate, FitRequest, FitVerdict,
    KVEstimate, Reserves, Strategy, WeightSplit,
)
from gguf_budget.core.fit.gpu_split import Placement, most_layers_that_fit, place_layers
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.model.kv import ENGINE_UBATCH, KVType, engine_cells, layer_kv_table
from gguf_budget.core.model.roles import TensorRole
from gguf_budget.core.model.spec import LayerKind, ModelSpec

KVTable = tuple[int | None, ...]

__all__ = ["Reserves", "FitRequest", "FitEstimate", "estimate_fit", "fit_dict", "fit_text",
           "snapshot_dict", "snapshot_text"]


@dataclass(frozen=True)
class _Slots:
    """Prefix sums over slots 0 … L (slot L = output layer) of weights and, when known, KV."""

    weights: tuple[int, ...]
    kv: tuple[int, ...] | None

    @classmethod
    def build(cls, slot_weights: list[int], kv_table: tuple[int | None, ...] | None) -> "_Slots":
        known = [b for b in kv_table if b is not None] if kv_table is not None else []
        kv = tuple(accumulate([*known, 0], initial=0)) if kv_table is not None and len(known) == len(kv_table) else None
        return cls(tuple(accumulate(slot_weights, initial=0)), kv)

    def load(self, start: int, end: int) -> tuple[int, int | None]:
        kv = None if self.kv is None else self.kv[end] - self.kv[start]
        return self.weights[end] - self.weights[start], kv


def estimate_fit(model: ModelSpec, snapshot: HardwareSnapshot, request: FitRequest) -> FitEstimate:
    """Place the model on the snapshot's devices and judge it (Rules 1–7)."""
    L = model.n_layer
    ctx = request.ctx if request.ctx is not None else (model.context_length or None)  # 0 is no answer
    table = layer_kv_table(model, engine_cells(ctx), request.kv_type, swa_extra=ENGINE_UBATCH) if ctx else None
    slots = _Slots.build([*model.layer_bytes, _output_slot_bytes(model)], table)
    frees = [g.free for g in snapshot.gpus]
    gpu_reserves = [request.reserves.gpu if i == 0 else 0 for i in range(len(frees))]
    usable = [max(f - r, 0) for f, r in zip(frees, gpu_reserves, strict=True)]
    auto = _auto_gpu_layers(slots, L, frees, usable) if slots.kv is not None else None
    wanted = request.gpu_layers if request.gpu_layers is not None else (auto or 0)
    placement = place_layers(L, wanted, frees)
    kv = _kv_estimate(model, ctx, request.kv_type, table, slots, placement)
    weights = _weights(model, placement)
    devices = _devices(model, snapshot, request.reserves, gpu_reserves, slots, placement, weights.host_exact, kv.host)
    unknowns = fit_unknowns(model, snapshot, ctx)
    verdict = _verdict(devices, placement, bool(unknowns))
    return FitEstimate(
        snapshot=snapshot, reserves=request.reserves, request=request, n_layer=L,
        gpu_layers=placement.gpu_layers, auto_gpu_layers=auto, output_on_gpu=placement.output_on_gpu,
        weights=weights, kv=kv, devices=devices, verdict=verdict, unknowns=unknowns,
        notes=fit_notes(model, snapshot, request, placement),
        claims=Claims(weights.file_bytes, model.header_only, verdict, snapshot.captured_at, snapshot.source),
        moe=_cpu_experts(model, snapshot, request.reserves, gpu_reserves, table, bool(unknowns)),
    )


def complete_file_bytes(model: ModelSpec) -> int:
    """The whole file as published: header + aligned tensor data (a skeleton's full size)."""
    return model.complete_file_bytes


def _output_slot_bytes(model: ModelSpec) -> int:
    return model.output_table_bytes + model.global_bytes.output_norm


def _host_weights(model: ModelSpec, block_bytes: list[int] | tuple[int, ...], p: Placement) -> int:
    """The input layer, the blocks kept on the host and, unless offloaded, the output layer (Rule 3)."""
    g = model.global_bytes
    output = 0 if p.output_on_gpu else (g.output or 0) + g.output_norm
    return g.token_embd + (g.position_embd or 0) + g.other + sum(block_bytes[:p.host_blocks]) + output


def _auto_gpu_layers(slots: _Slots, L: int, frees: list[int], usable: list[int]) -> int:
    if not frees:
        return 0
    return most_layers_that_fit(L, lambda g: _gpus_fit(slots, place_layers(L, g, frees), usable))


def _gpus_fit(slots: _Slots, placement: Placement, usable: list[int]) -> bool:
    for (start, end), room in zip(placement.runs, usable, strict=False):
        w, kv = slots.load(start, end)
        if w + (kv or 0) > room:
            return False
    return True


def _weights(model: ModelSpec, p: Placement) -> WeightSplit:
    L = model.n_layer
    file_bytes = complete_file_bytes(model)
    gpu_coarse = file_bytes * min(p.gpu_layers, L) // L if L else 0
    gpu_blocks = sum(model.layer_bytes[p.host_blocks:])
    return WeightSplit(
        file_bytes=file_bytes, gpu_coarse=gpu_coarse, host_coarse=file_bytes - gpu_coarse,
        gpu_exact=gpu_blocks + (_output_slot_bytes(model) if p.output_on_gpu else 0),
        host_exact=_host_weights(model, model.layer_bytes, p),
    )


def _kv_estimate(model: ModelSpec, ctx: int | None, kv_type: KVType, table: KVTable | None, slots: _Slots,
                 p: Placement) -> KVEstimate:
    kinds = [layer.kind for layer in model.layers]
    n_rec = kinds.count(LayerKind.RECURRENT)
    state = model.recurrent_state_bytes
    lower = None
    if ctx and LayerKind.UNKNOWN not in kinds:
        f16 = layer_kv_table(model, ctx, KVType.F16)
        lower = sum(b or 0 for b, k in zip(f16, kinds, strict=True) if k is not LayerKind.RECURRENT)
    engine = slots.kv[-1] if slots.kv is not None else None
    host = None if slots.kv is None else slots.kv[p.host_blocks]
    return KVEstimate(
        kv_type=kv_type, ctx=ctx, cells=engine_cells(ctx) if ctx else None, lower_bound=lower, engine=engine,
        attention_layers=kinds.count(LayerKind.FULL) + kinds.count(LayerKind.SWA),
        swa_layers=kinds.count(LayerKind.SWA),
        recurrent_layers=n_rec, recurrent_state=(n_rec * state if state is not None else None) if n_rec else 0,
        gpu=None if engine is None or host is None else engine - host, host=host,
    )


def _devices(model: ModelSpec, snapshot: HardwareSnapshot, reserves: Reserves, gpu_reserves: list[int], slots: _Slots, p: Placement,
             host_weights: int, host_kv: int | None) -> tuple[DeviceLoad, ...]:
    host = DeviceLoad("host", "host RAM", snapshot.host_available, reserves.host, host_weights, host_kv)
    gpus = []
    for gpu, reserve, (start, end) in zip(snapshot.gpus, gpu_reserves, p.runs, strict=False):
        w, kv = slots.load(start, end)
        gpus.append(DeviceLoad(f"gpu{gpu.index}", f"GPU {gpu.index} ({gpu.name})", gpu.free, reserve, w, kv))
    return (host, *gpus)


def _verdict(devices: tuple[DeviceLoad, ...], p: Placement, unknown: bool) -> FitVerdict:
    if unknown:
        return FitVerdict.UNKNOWN
    if any(d.shortfall for d in devices):
        return FitVerdict.DOES_NOT_FIT
    if p.gpu_layers == 0:
        return FitVerdict.CPU_ONLY
    return FitVerdict.FITS_GPU if p.all_on_gpu else FitVerdict.FITS_SPLIT


def _cpu_experts(model: ModelSpec, snapshot: HardwareSnapshot, reserves: Reserves, gpu_reserves: list[int],
                 table: KVTable | None, unknown: bool) -> Strategy | None:
    """Rule 7: routed experts in host RAM, every other tensor of every layer offloaded."""
    if not model.routed_expert_bytes:
        return None
    L = model.n_layer
    dense = [b - r.get(TensorRole.EXPERTS, 0) for b, r in zip(model.layer_bytes, model.layer_role_bytes, strict=True)]
    slots = _Slots.build([*dense, _output_slot_bytes(model)], table)
    p = place_layers(L, L + 1, [g.free for g in snapshot.gpus])
    _, host_kv = slots.load(0, p.host_blocks)
    devices = _devices(model, snapshot, reserves, gpu_reserves, slots, p, complete_file_bytes(model), host_kv)
    verdict = _verdict(devices, p, unknown)
    return Strategy(
        name="cpu_experts",
        description="routed experts in host RAM (llama.cpp --cpu-moe), the rest on the GPUs; "
                    "host budgeted as the complete file (conservative)",
        verdict=FitVerdict.FITS_SPLIT if verdict is FitVerdict.FITS_GPU else verdict,
        devices=devices,
        host_exact=model.routed_expert_bytes + _host_weights(model, dense, p),
    )
