"""MoE placements shown beside the plain layer split: routed experts kept in host RAM.

Rule 1: CPU experts (llama.cpp `--cpu-moe`): every `*_exps` tensor in host RAM, every other
        tensor of every layer offloaded; its host side is budgeted conservatively as the
        complete file, as the full load's first gate does (docs/budget-plan.md).
Rule 2: expert offload (llama.cpp `--n-cpu-moe N`, `gpu_split` Rule 7): every slot offloaded
        (-ngl L + 1) and the routed experts of blocks 0 … N − 1 in host RAM, N the smallest that
        lets every GPU hold its run — as llama.cpp's own `--fit` moves MoE weights to system
        memory before it gives up layers (common/fit.cpp). Its host side is the exact
        inventory: the input layer and those experts. N = 0 means everything fits on the GPUs;
        when even N = L does not, the GPUs' shortfall at N = L is reported.
Rule 3: dense models have neither; a machine without a GPU has neither (everything is in
        host RAM already, there is no "rest on the GPUs").
Rule 4: what llama-server holds beside the model (`server`) stays where the plain split puts it:
        on the GPUs it narrows their room (`GpuSetup.held`), on the host it is `host_held`.
Rule 5: each strategy is judged as the plain split is (`devices.fits`): every device's weights, KV and the
        compute buffer llama.cpp reserves there with those experts on the host (`priced`: `--n-cpu-moe N` is
        llama.cpp's tensor override `blk.i.ffn_(up|down|gate|gate_up)_(ch|)exps` → CPU for i < N, common/arg.cpp
        `llm_add_n_cpu_ffn_overrides`, so its scheduler offloads those products' large batches to a GPU). The
        `--n-cpu-moe` search prices only the N whose GPUs hold their weights and KV (`devices` Rule 6).
"""

from __future__ import annotations

from typing import Callable

from gguf_budget.core.fit.command import NO_SERVER_FLAGS, ServerFlags, run_command
from gguf_budget.core.fit.placement.devices import GpuSetup, KVTable, Slots, device_loads, fits, verdict_of
from gguf_budget.core.fit.placement.gpu_split import Placement, fewest_cpu_moe_layers
from gguf_budget.core.fit.runtime_types import TensorOverride
from gguf_budget.core.fit.types import DeviceLoad, FitRequest, FitVerdict, Strategy
from gguf_budget.core.machine.snapshot import HardwareSnapshot
from gguf_budget.core.model.per_model_cache import per_model
from gguf_budget.core.model.roles import TensorRole
from gguf_budget.core.model.spec import ModelSpec


LLM_FFN_EXPS_REGEX = r"\.ffn_(up|down|gate|gate_up)_(ch|)exps"  # common/common.h

Priced = Callable[[tuple[DeviceLoad, ...], Placement, int], tuple[DeviceLoad, ...]]
"""Rule 5: the devices of a placement with the routed experts of its first N blocks on the host, with their compute."""


def expert_overrides(n_cpu_moe: int) -> tuple[TensorOverride, ...]:
    """Rule 5: `--n-cpu-moe N` as the one tensor override it amounts to (none for N = 0)."""
    if n_cpu_moe <= 0:
        return ()
    blocks = "|".join(str(i) for i in range(n_cpu_moe))
    return (TensorOverride(rf"blk\.({blocks}){LLM_FFN_EXPS_REGEX}", "CPU"),)


def output_slot_bytes(model: ModelSpec) -> int:
    return model.output_table_bytes + model.global_bytes.output_norm


def input_layer_bytes(model: ModelSpec) -> int:
    g = model.global_bytes
    return g.token_embd + (g.position_embd or 0) + g.other


@per_model(maxsize=16)
def _experts(model: ModelSpec) -> tuple[int, ...]:
    """Each block's routed experts' bytes, kept per model: every placement a search prices asks it."""
    return tuple(r.get(TensorRole.EXPERTS, 0) for r in model.layer_role_bytes)


def cpu_experts(model: ModelSpec, snapshot: HardwareSnapshot, setup: GpuSetup, request: FitRequest,
                table: KVTable | None, unknown: bool, priced: Priced, host_held: int = 0) -> Strategy | None:
    """Rule 1."""
    if not model.routed_expert_bytes or not setup.gpus:
        return None
    L = model.n_layer
    dense = [b - e for b, e in zip(model.layer_bytes, _experts(model), strict=True)]
    slots = Slots.build([*dense, output_slot_bytes(model)], table)
    p = setup.place(L, L + 1)
    _, host_kv = slots.load(0, p.host_blocks)
    devices = priced(device_loads(snapshot, setup, request.reserves.host, slots, p, model.complete_file_bytes, host_kv,
                                  host_held), p, L)
    verdict = verdict_of(devices, p, unknown)
    host_blocks = sum(dense[:p.host_blocks]) + (0 if p.output_on_gpu else output_slot_bytes(model))
    return Strategy(
        name="cpu_experts",
        description="routed experts in host RAM (llama.cpp --cpu-moe), the rest on the GPUs; "
                    "host budgeted as the complete file (conservative)",
        verdict=FitVerdict.FITS_SPLIT if verdict is FitVerdict.FITS_GPU else verdict,
        devices=devices,
        host_exact=model.routed_expert_bytes + input_layer_bytes(model) + host_blocks,
        gpu_layers=p.gpu_layers,
    )


def experts_on_host(model: ModelSpec, host_blocks: int, n_cpu_moe: int) -> int:
    """The routed experts `--n-cpu-moe N` keeps on the host of blocks the placement offloads (host_blocks … N − 1)."""
    return sum(_experts(model)[host_blocks:n_cpu_moe]) if n_cpu_moe > host_blocks else 0


def slots_with_cpu_experts(model: ModelSpec, table: KVTable | None) -> Callable[[int], Slots]:
    """The slots' weights on the GPUs with the routed experts of blocks 0 … n − 1 kept on the host."""
    experts, output = _experts(model), output_slot_bytes(model)

    def slots(n: int) -> Slots:
        on_gpu = [b - (e if i < n else 0) for i, (b, e) in enumerate(zip(model.layer_bytes, experts, strict=True))]
        return Slots.build([*on_gpu, output], table)

    return slots


def expert_offload(model: ModelSpec, snapshot: HardwareSnapshot, setup: GpuSetup, request: FitRequest, ctx: int | None,
                   table: KVTable | None, unknown: bool, plain_gpu_layers: int, priced: Priced, host_held: int = 0,
                   server: ServerFlags = NO_SERVER_FLAGS) -> Strategy | None:
    """Rule 2: the smallest --n-cpu-moe N with every layer offloaded (Ollama gets the plain split's layers)."""
    if not model.routed_expert_bytes or not setup.gpus:
        return None
    L = model.n_layer
    slots_for = slots_with_cpu_experts(model, table)
    p = setup.place(L, L + 1)

    def loads(n: int, search: bool = False) -> tuple[DeviceLoad, ...]:
        """The devices at N; in the `search`, GPUs short before their compute buffers are left unpriced (`devices`
        Rule 6)."""
        host_weights = input_layer_bytes(model) + sum(_experts(model)[:n])
        bare = device_loads(snapshot, setup, request.reserves.host, slots_for(n), p, host_weights,
                            0 if table else None, host_held)
        return bare if search and not fits(bare, host=False) else priced(bare, p, n)

    found = fewest_cpu_moe_layers(L, lambda n: fits(loads(n, search=True), host=False)) if table is not None else None
    n = L if found is None else found
    devices = loads(n)
    host_weights = devices[0].weights
    verdict = verdict_of(devices, p, unknown)
    return Strategy(
        name="n_cpu_moe",
        description=f"every layer offloaded (-ngl {L + 1}), the routed experts of the first {n} of {L} blocks in "
                    "host RAM; host side exact",
        verdict=FitVerdict.FITS_SPLIT if verdict is FitVerdict.FITS_GPU and n else verdict,
        devices=devices,
        host_exact=host_weights,
        gpu_layers=p.gpu_layers,
        n_cpu_moe=n,
        command=run_command("n_cpu_moe", model.path, ctx, p.gpu_layers, request.kv_type, request.tensor_split, n,
                            plain_gpu_layers, server, v_type=request.v_type, engine_argv=request.engine_argv,
                            priced_type=model.priced_type),
    )
