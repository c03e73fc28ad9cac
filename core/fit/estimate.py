"""Will this model fit this machine, and how would llama.cpp place it? (first gate: docs/budget-plan.md)

Pure: a function of the ModelSpec, a HardwareSnapshot and a FitRequest; cheap enough for
every slider tick (prefix sums over the L + 1 slots; the auto search is a bisection).

Rule 1: usable = free − reserve, never below 0. The host reserve (6 GiB) applies to host
        RAM, the GPU reserve (1.5 GiB) to the first GPU the fit uses, per-device reserves where
        set (`devices` Rule 1). Host free is psutil's `available` after cgroup limits: swap and
        SSD paging are never counted as RAM. GPUs whose budget is host RAM share its pool
        (`devices` Rule 3).
Rule 2: weights, coarse (the first gate): GPU = complete file bytes · min(g, L) / L, host =
        the rest. A header-only file's complete size is unknown, so its tensor bytes stand in.
Rule 3: weights, exact: placement by `gpu_split` (llama.cpp `load_tensors`): the output
        layer first, then the last g − 1 blocks on the GPUs; token/position embeddings and
        other global tensors on the host. Tied embeddings: the offloaded output layer is a
        copy of `token_embd` (llama.cpp `TENSOR_DUPLICATED`), which the host also keeps — so
        the exact GPU + host then exceed the tensor bytes by that table.
Rule 4: KV: the FP16 lower bound = Σ attention layers min(ctx, window) · n_head_kv ·
        (k_dim + v_dim) · 2, recurrent state excluded; the engine figure is `kv_cache` Rule 5
        (256-cell padding, window + ubatch cells rounded up to 256 for sliding layers, all cells
        with --swa-full, F32 recurrent state, the chosen cache type). Which layers slide or recur
        comes from metadata where present, else from llama.cpp's per-architecture rules
        (`swa_rules`, `model_facts` Rule 5: `recurrent_layer_arr`); MLA layers of a file with the MLA
        lengths cache one latent row (K only), older deepseek2 files every head's K and V
        (`model_facts` Rule 6: src/llama-hparams.cpp `llama_hparams::is_mla`).
        Each layer's cache sits on that layer's device (llama.cpp llama-kv-cache.cpp
        `llama_kv_cache`: `model.dev_layer(il)` when offload_kqv, the default).
Rule 5: auto g = the largest g for which every GPU holds its weights, KV and compute buffer within its
        usable memory (`devices.fits`, the verdict's own test), bisected (`gpu_split` Rule 5: O(log L)
        placements). With one GPU the bound before compute buffers starts from its answer in the last search on the
        same machine (kept per model): a slider tick's search asks two or three placements, not seven.
Rule 6: verdict: unknown when a needed fact is missing (listed, never taken as 0); else
        does_not_fit when any device — a GPU holding no layer but computing offloaded large batches too,
        and the host — is short of weights + KV + compute + server within free − reserve (shortfall per
        device, `devices` Rule 4); else cpu_only (g = 0),
        fits_gpu (every block and the output layer on GPU, g = L + 1) or fits_split.
Rule 7: MoE: the CPU-experts strategy (`--cpu-moe`) and the expert offload (the smallest
        `--n-cpu-moe N` with every layer offloaded) are shown beside the default (`moe.py`).
Rule 8: every placement carries the llama-server command that realises it (`command.py`).
Rule 9: beside the verdict, what llama.cpp would hold per device beyond weights + KV + compute — repacked
        copies, the process — and the predicted peak RSS (`runtime_memory`).
Rule 10: llama-server's own additions (`server`): its slots set the KV cells and the compute
        graph's outputs; its projector and draft are placed before the model's layers; what they,
        the checkpoints and the full prompt cache hold is part of each device's need — the cache and the
        checkpoints only for a program that keeps them (`holdings` Rule 8).
Rule 11: llama.cpp's placement options move bytes between devices after the layer split
        (`placement`): `-ot` weights to the buffer it names, `-nkvo` every layer's KV to the host.
Rule 12: each device's compute buffer is part of its need (`runtime_memory` Rule 5: the scheduler replayed
        over the reserved graph for this placement; the host's adds the logits output buffer, and beside it
        the samplers and the KV cells' metadata, `runtime_memory` Rules 11–12). The
        verdict, the automatic GPU layers, the `--n-cpu-moe` search and, through `fit_verdict`, the
        automatic and largest ctx all judge it so.
Rule 13: `-sm row` where llama.cpp has no split buffer is refused as llama.cpp refuses it (`split_mode` Rule 1):
        does_not_fit, its error the verdict's reason (`FitEstimate.refused`); `-sm tensor` and SYCL's row
        split are priced as `-sm layer`, and said so. Cache types llama.cpp makes no context for (an MLA model's
        V type apart from K's, a quantized V cache with `-fa off`) are refused the same way (`cache_refusal`).
Rule 14: a search's candidate asks no report (`report` False): its verdict, devices and command are the report's
        own, but the automatic GPU layers beside fixed ones, the MoE strategies (Rule 7) and the peak-RSS band
        (Rule 9) — several placements priced each, read by no search — are left None.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import accumulate

from gguf_budget.core.fit.command import run_command
from gguf_budget.core.fit.placement.devices import GpuSetup, KVTable, Slots, device_loads, fits, headroom, verdict_of
from gguf_budget.core.fit.placement.gpu_split import Placement, most_layers_that_fit
from gguf_budget.core.fit.placement.moe import (
    Priced, cpu_experts, expert_offload, expert_overrides, experts_on_host, input_layer_bytes, output_slot_bytes,
    slots_with_cpu_experts,
)
from gguf_budget.core.fit.notes import fit_notes, fit_unknowns
from gguf_budget.core.fit.types import Claims, DeviceLoad, FitEstimate, FitRequest, FitVerdict, KVEstimate, WeightSplit
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.fit.placement.options import device_weights
from gguf_budget.core.fit.runtime_memory import (
    backends_of, device_computes, kv_cell_bytes, output_buffer, runtime_memory, sampler_bytes,
)
from gguf_budget.core.fit.runtime_types import EngineSettings
from gguf_budget.core.fit.server.holdings import (
    finish_server, program_settings, server_engine, server_extras, server_flags, server_notes, server_unknowns,
)
from gguf_budget.core.fit.server.band import server_band, session_workloads
from gguf_budget.core.fit.server.types import ServerLoad
from gguf_budget.core.fit.server.slots import SlotLayout, slot_kv_table
from gguf_budget.core.fit.cache_refusal import cache_refusal
from gguf_budget.core.fit.placement.split_mode import refusal, split_notes
from gguf_budget.core.model.kv import KVType, layer_kv_table
from gguf_budget.core.model.layer_kinds import kind_counts
from gguf_budget.core.model.per_model_cache import per_model
from gguf_budget.core.model.spec import LayerKind, ModelSpec

__all__ = ["estimate_fit"]


@dataclass(frozen=True, kw_only=True)
class _Judgement:
    """Everything the verdict rests on: what `fit_verdict` needs, and what `estimate_fit` reports beside it."""

    ctx: int | None
    table: KVTable | None
    slots: Slots
    setup: GpuSetup
    auto: int | None
    placement: Placement
    kv: KVEstimate
    weights: WeightSplit
    devices: tuple[DeviceLoad, ...]
    unknowns: tuple[str, ...]
    verdict: FitVerdict
    engine: EngineSettings
    server: ServerLoad
    priced: Priced
    refused: str | None


def _judge(model: ModelSpec, snapshot: HardwareSnapshot, request: FitRequest, search: bool = True,
           judged: bool = False) -> _Judgement:
    """Rules 1–13; `search` False skips the automatic GPU layers where the request fixes them (no report of them);
    `judged` prices the devices' compute buffers only where they fit before them, and no KV lower bound (a verdict
    alone)."""
    L = model.n_layer
    ctx = request.ctx if request.ctx is not None else (model.context_length or None)  # 0 is no answer
    settings = program_settings(request.server, request.engine.runtime)
    request = request if settings is request.server else replace(request, server=settings)
    layout, engine = server_engine(request.engine, request.server)
    table = slot_kv_table(model, ctx, request.kv_type, layout, ubatch=engine.ubatch, swa_full=engine.swa_full,
                          v_type=request.v_type) if ctx else None
    forced = _forced_cpu_moe(model, request)
    slots = (slots_with_cpu_experts(model, table)(forced) if forced else
             Slots.build([*model.layer_bytes, output_slot_bytes(model)], table))
    bare = GpuSetup.build(snapshot, request)
    extras = server_extras(model, bare, request.server, ctx, layout, engine, request.kv_type, snapshot.cpu_features)
    setup = replace(bare, held=extras.gpu_held)
    priced = _pricer(model, ctx, request, engine, setup)

    def unpriced(p: Placement) -> tuple[DeviceLoad, ...]:
        """The devices of `p` before their compute buffers."""
        host_kv = None if slots.kv is None else slots.kv[p.host_blocks]
        return device_loads(snapshot, setup, request.reserves.host, slots, p, _host_exact(model, p, forced),
                            host_kv, extras.host_held or 0)

    searched: dict[Placement, tuple[DeviceLoad, ...]] = {}

    def loads(p: Placement, judged: bool | None = None) -> tuple[DeviceLoad, ...]:
        """The devices of `p` with their compute buffers. `judged` (the host too, or the GPUs alone) asks for a
        fits-or-not only: a load short before its compute buffers is returned unpriced (`devices` Rule 6). A
        placement the automatic GPU layers priced is not priced again for the answer."""
        bare = unpriced(p)
        if judged is not None and not fits(_placed(model, engine, bare, setup, p, forced), host=judged):
            return bare
        if p not in searched:
            searched[p] = priced(bare, p, forced)
        return searched[p]

    def gpus_fit(g: int) -> bool:
        p = setup.place(L, g)
        return fits(_placed(model, engine, loads(p, judged=False), setup, p, forced), host=False)

    def gpus_fit_unpriced(g: int) -> bool:
        p = setup.place(L, g)
        return fits(_placed(model, engine, unpriced(p), setup, p, forced), host=False)

    auto = None
    if slots.kv is not None and (search or request.gpu_layers is None):
        upper = None
        if len(setup.gpus) == 1:
            last = _last_upper(model, snapshot)
            upper = most_layers_that_fit(L, gpus_fit_unpriced, near=last[0] if last else None)
            last[:] = [upper]
        auto = most_layers_that_fit(L, gpus_fit, upper)
    wanted = request.gpu_layers if request.gpu_layers is not None else (auto or 0)
    placement = setup.place(L, wanted)
    kv = _kv_estimate(model, ctx, request.kv_type, table, slots, placement, layout, lower=not judged)
    weights = _weights(model, placement, forced)
    server, devices = finish_server(model, extras, loads(placement, judged=True if judged else None), request.kv_type,
                                    engine, kv.engine)
    devices = _placed(model, engine, devices, setup, placement, forced)
    if not engine.kv_offload and setup.gpus:
        kv = replace(kv, host=kv.engine, gpu=0 if kv.engine is not None else None)
    unknowns = fit_unknowns(model, snapshot, ctx) + server_unknowns(model, ctx, server)
    refused = refusal(engine, setup.gpus) or cache_refusal(model, request.kv_type, request.v_type, engine.flash_attn)
    verdict = verdict_of(devices, placement, bool(unknowns), refused is not None)
    return _Judgement(ctx=ctx, table=table, slots=slots, setup=setup, auto=auto, placement=placement, kv=kv,
                      weights=weights, devices=devices, unknowns=unknowns, verdict=verdict, engine=engine,
                      server=server, priced=priced, refused=refused)


@per_model(maxsize=16)
def _last_upper(model: ModelSpec, snapshot: HardwareSnapshot) -> list[int]:
    """Rule 5: the most layers that fit before their compute buffers in the last search on this machine, where the next
    one starts (`gpu_split` Rule 5: with one GPU, the same answer from any start; a slider tick's is a layer or two
    away)."""
    return []


def _pricer(model: ModelSpec, ctx: int | None, request: FitRequest, engine: EngineSettings, setup: GpuSetup) -> Priced:
    """Rule 12: each device's compute buffer, as llama.cpp's scheduler reserves it for the placement (`runtime_memory`
    Rule 5), with `--n-cpu-moe N`'s experts on the host (`moe` Rule 5); the host's adds the logits output buffer (and
    beside it the samplers and the KV cells' metadata, `runtime_memory` Rules 11–12), and a
    GPU whose budget is host RAM adds its compute to the one pool (`devices` Rule 3)."""

    def priced(devices: tuple[DeviceLoad, ...], p: Placement, cpu_moe: int) -> tuple[DeviceLoad, ...]:
        settings = replace(engine, overrides=engine.overrides + expert_overrides(cpu_moe)) if cpu_moe else engine
        host_c, *gpu_c = device_computes(model, ctx, request.kv_type, settings, devices, setup.gpus, p.all_on_gpu,
                                         request.v_type)
        host, *gpus = devices
        pooled = sum(c or 0 for g, c in zip(setup.gpus, gpu_c, strict=True) if g.shares_host_memory)
        host = replace(host, shared=host.shared + pooled,
                       compute=None if host_c is None else host_c + output_buffer(model, engine),
                       sampler=sampler_bytes(model, engine), kv_cells=kv_cell_bytes(model, ctx, engine) if ctx else 0)
        return (host, *(replace(d, compute=c) for d, c in zip(gpus, gpu_c, strict=True)))

    return priced


def _placed(model: ModelSpec, engine: EngineSettings, devices: tuple[DeviceLoad, ...], setup: GpuSetup,
            p: Placement, forced: int) -> tuple[DeviceLoad, ...]:
    """Rule 11: `-ot` moves weights between devices, `-nkvo` every layer's KV to the host (`placement`); the weights
    are placed by every override at once, `--n-cpu-moe`'s (`forced` blocks) after the command's `-ot`s, as the
    estimate's compute buffers are."""
    if not setup.gpus or (not engine.overrides and engine.kv_offload and all(g.max_buffer is None for g in setup.gpus)):
        return devices
    host, *gpus = devices
    if not engine.kv_offload:
        known = [d.kv for d in devices]
        total = None if any(k is None for k in known) else sum(k or 0 for k in known)
        host, gpus = replace(host, kv=total), [replace(d, kv=0) for d in gpus]
    if engine.overrides or any(g.max_buffer is not None for g in setup.gpus):
        every = replace(engine, overrides=engine.overrides + expert_overrides(forced)) if forced else engine
        held = device_weights(model, backends_of(model, every, devices, setup.gpus, p.all_on_gpu).sched)
        host, gpus = replace(host, weights=held[-1]), [replace(d, weights=w) for d, w in zip(gpus, held, strict=False)]
    return (host, *gpus)


def fit_verdict(model: ModelSpec, snapshot: HardwareSnapshot, request: FitRequest) -> FitVerdict:
    """The verdict `estimate_fit` gives, without the figures only its report needs (a search asks it often): with the
    GPU layers fixed, the automatic count it would report beside them is not searched."""
    return _judge(model, snapshot, request, search=False, judged=True).verdict


def fit_headroom(model: ModelSpec, snapshot: HardwareSnapshot, request: FitRequest) -> tuple[FitVerdict, int | None]:
    """`fit_verdict` and the judged load's headroom (`devices` Rule 7), which aims the largest-ctx search."""
    j = _judge(model, snapshot, request, search=False, judged=True)
    return j.verdict, headroom(j.devices)


def estimate_fit(model: ModelSpec, snapshot: HardwareSnapshot, request: FitRequest, report: bool = True) -> FitEstimate:
    """Place the model on the snapshot's devices and judge it (Rules 1–14; `report` False: a search's candidate)."""
    j = _judge(model, snapshot, request, search=report)
    ctx, placement, unknowns, verdict = j.ctx, j.placement, j.unknowns, j.verdict
    held = j.devices[0].server
    flags = server_flags(j.server, model, j.engine.swa_full)
    placed = replace(j.engine, overrides=j.engine.overrides + expert_overrides(_forced_cpu_moe(model, request)))
    memory = server_band(runtime_memory(model, ctx, request.kv_type, placed, snapshot.cpu_features, j.devices,
                                        placement.host_blocks, not placement.output_on_gpu, j.setup.gpus,
                                        placement.all_on_gpu, v_type=request.v_type,
                                        workloads=session_workloads(j.server)),
                         j.server, model, request.kv_type, j.engine) if report else None
    return FitEstimate(
        snapshot=snapshot, reserves=request.reserves, request=request, n_layer=model.n_layer,
        gpu_layers=placement.gpu_layers, auto_gpu_layers=j.auto, output_on_gpu=placement.output_on_gpu,
        weights=j.weights, kv=j.kv, devices=j.devices, verdict=verdict, unknowns=unknowns,
        notes=(fit_notes(model, snapshot, request, placement, j.setup) + server_notes(j.server)
               + split_notes(j.engine, j.setup.gpus)),
        refused=j.refused,
        claims=Claims(j.weights.file_bytes, model.header_only, verdict, snapshot.captured_at, snapshot.source),
        moe=cpu_experts(model, snapshot, j.setup, request, j.table, bool(unknowns), j.priced, held) if report else None,
        moe_offload=expert_offload(model, snapshot, j.setup, request, ctx, j.table, bool(unknowns),
                                   placement.gpu_layers, j.priced, held, flags) if report else None,
        command=run_command("layers", model.path, ctx, placement.gpu_layers, request.kv_type, request.tensor_split,
                            _forced_cpu_moe(model, request) or None, server=flags, v_type=request.v_type,
                            engine_argv=request.engine_argv, priced_type=model.priced_type),
        memory=memory,
        server=j.server,
    )


def complete_file_bytes(model: ModelSpec) -> int:
    """The whole file as published: header + aligned tensor data (a skeleton's full size)."""
    return model.complete_file_bytes


def _host_weights(model: ModelSpec, p: Placement) -> int:
    """The input layer, the blocks kept on the host and, unless offloaded, the output layer (Rule 3).

    A tied output layer kept on the host is the embedding table itself: counted once, in the input layer.
    """
    g = model.global_bytes
    output = 0 if p.output_on_gpu else (g.output or 0) + g.output_norm
    return input_layer_bytes(model) + _blocks_below(model)[p.host_blocks] + output


@per_model(maxsize=16)
def _blocks_below(model: ModelSpec) -> tuple[int, ...]:
    """The bytes of blocks 0 … i − 1 for each i (0 … L), summed once per model: the GPU-layer search splits the blocks
    at many counts a tick."""
    return tuple(accumulate(model.layer_bytes, initial=0))


def _forced_cpu_moe(model: ModelSpec, request: FitRequest) -> int:
    """`--n-cpu-moe N` as asked (N past the last block: every block, `--cpu-moe`); 0 without experts or without it."""
    n = request.n_cpu_moe
    return min(n, model.n_layer) if n and model.routed_expert_bytes else 0


def _host_exact(model: ModelSpec, p: Placement, cpu_moe: int) -> int:
    """Rule 3: the host's exact weights, all the GPU-layer search's unpriced loads read of the split."""
    return _host_weights(model, p) + experts_on_host(model, p.host_blocks, cpu_moe)


def _weights(model: ModelSpec, p: Placement, cpu_moe: int = 0) -> WeightSplit:
    """Rules 2–3; `cpu_moe` blocks keep their routed experts on the host even where the block is offloaded."""
    L = model.n_layer
    file_bytes = complete_file_bytes(model)
    gpu_coarse = file_bytes * min(p.gpu_layers, L) // L if L else 0
    kept = experts_on_host(model, p.host_blocks, cpu_moe)
    below = _blocks_below(model)
    gpu_blocks = below[-1] - below[p.host_blocks] - kept
    return WeightSplit(
        file_bytes=file_bytes, gpu_coarse=gpu_coarse, host_coarse=file_bytes - gpu_coarse,
        gpu_exact=gpu_blocks + (output_slot_bytes(model) if p.output_on_gpu else 0),
        host_exact=_host_exact(model, p, cpu_moe),
    )


def _kv_estimate(model: ModelSpec, ctx: int | None, kv_type: KVType, table: KVTable | None, slots: Slots,
                 p: Placement, layout: SlotLayout, lower: bool = True) -> KVEstimate:
    """Rule 4; `lower` False: a verdict alone, which reads no FP16 lower bound (None)."""
    kinds = kind_counts(model)
    n_rec = kinds[LayerKind.RECURRENT]
    state = model.recurrent_state_bytes
    bound = None
    if lower and ctx and not kinds[LayerKind.UNKNOWN]:
        f16 = layer_kv_table(model, ctx, KVType.F16)
        bound = sum(b or 0 for b, layer in zip(f16, model.layers, strict=True) if layer.kind is not LayerKind.RECURRENT)
    engine = slots.kv[-1] if slots.kv is not None else None
    host = None if slots.kv is None else slots.kv[p.host_blocks]
    return KVEstimate(
        kv_type=kv_type, ctx=ctx, cells=layout.total_cells(ctx) if ctx else None, lower_bound=bound, engine=engine,
        attention_layers=kinds[LayerKind.FULL] + kinds[LayerKind.SWA],
        swa_layers=kinds[LayerKind.SWA],
        recurrent_layers=n_rec, recurrent_state=(n_rec * state if state is not None else None) if n_rec else 0,
        gpu=None if engine is None or host is None else engine - host, host=host,
    )
