"""What llama-server adds to a full load, placed on the fit's devices: slots, cache, checkpoints, projector, draft.

Pure; called by `estimate` in two steps around the model's own placement.

Rule 1: the slots resolve first (`slots` Rule 1) and set how llama.cpp runs: sequences, KV
        sharing, and the output rows the compute graph is reserved for (`slots` Rule 5: N, or
        N · (1 + 3) with a draft), never fewer than the request's own.
Rule 2: before the model's layers are placed, the projector and the draft take their devices
        (`projector` Rule 2, `draft` Rule 3), as llama.cpp's fit counts them first: a GPU's room
        for the model is its usable memory less what they hold there.
Rule 3: the verdict counts, per device: the projector's weights and one image's compute buffer,
        the draft's weights and KV cache; on the host also the prompt cache and every slot's
        checkpoints as the session leaves them at its peak (`session` Rule 5), or — asked with
        `worst_case` — full (`checkpoints` Rules 3–4: each slot's list full; `prompt_cache` Rules
        2–3: the cache at its limit), and the draft's samplers and KV cells' metadata (`runtime_memory`
        Rules 11–12 for the draft's context: common/speculative.cpp lines 232–240 make one top-k sampler
        a sequence, each filling n_vocab candidates). The draft's compute and output buffers are itemized
        beside, like the model's own.
Rule 4: the prompt cache the person did not size holds one context's worth, within what the
        host has left once everything else is placed (`prompt_cache` Rule 5): it never turns a
        load that fits into one that does not; one the person sized is held, and may.
Rule 5: the server's resident memory beyond the model's in the worst case (`host_rss`): the full
        cache, the checkpoints, whatever of the projector and the draft sits in host RAM (the
        draft's weights mapped, as the model's), and the draft's output buffer, samplers and cells' metadata; what the draft and
        the projector hold in both ends of the band (`band_extra`, `band_mapped`: `server_band`).
Rule 6: the command carries the settings that realise the load: `-np`, `--kv-unified` for
        shared slots, `--cache-ram`, `--ctx-checkpoints` where the model makes checkpoints or the
        number is not the default, `--mmproj` (`--no-mmproj-offload` when placed on the host
        beside a GPU), `-md … --spec-type draft-simple -ngld N` (`-devd none` on the host,
        `-ctkd/-ctvd` for a quantized draft cache). Ollama: `OLLAMA_NUM_PARALLEL`; what it cannot
        say (cache size, checkpoints, a draft) is a note.
Rule 7: a draft beside a model that checkpoints adds its own state to each checkpoint
        (`create_checkpoint`: `update_dft`), its whole state for a draft that makes none itself
        (`checkpoints.partial_state_bytes`); its host weights are repacked for the CPU as the
        model's are (`repack`).
Rule 8: the prompt cache and the context checkpoints are llama-server's context's, which llama-server and llama-cli
        run (`runtime_memory.serves_sessions`): for llama-completion and llama-cpp-python neither is priced,
        whatever the settings say (`program_settings`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gguf_budget.core.fit.command import ServerFlags
from gguf_budget.core.fit.server.checkpoints import (
    CTX_CHECKPOINTS, DEFAULT_BATCH, CheckpointSettings, checkpoint_bytes, makes_checkpoints, partial_state_bytes,
)
from gguf_budget.core.fit.placement.devices import GpuSetup, Slots
from gguf_budget.core.fit.server.draft import DRAFT_N_MAX, SPEC_TYPE, DraftModel
from gguf_budget.core.fit.placement.moe import input_layer_bytes, output_slot_bytes
from gguf_budget.core.fit.server.prompt_cache import NO_LIMIT, chosen_cache_ram_mib, full_cache_bytes
from gguf_budget.core.fit.runtime_memory import (
    LOGIT_BYTES, compute_buffer, flash_attn, graph_settings, kv_cell_bytes, reserved_outputs, sampler_bytes,
    serves_sessions,
)
from gguf_budget.core.fit.runtime_types import EngineSettings, Runtime
from gguf_budget.core.fit.server.projector import ProjectorSpec
from gguf_budget.core.fit.buffers.repack import repack_buffer
from gguf_budget.core.fit.server.session import SessionModel, SessionTrace, replay
from gguf_budget.core.fit.server.image_size import ImageSize
from gguf_budget.core.fit.server.types import DraftLoad, ProjectorLoad, ServerLoad, ServerSettings, counted_held
from gguf_budget.core.fit.server.slots import SlotLayout, resolve_slots, slot_kv_table
from gguf_budget.core.fit.types import DeviceLoad
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.model.kv import KVType

HOST = "host"


def program_settings(settings: ServerSettings, runtime: Runtime) -> ServerSettings:
    """Rule 8: the settings as the program keeps them: no prompt cache and no checkpoints where it runs no server
    context (llama-completion, llama-cpp-python)."""
    return settings if serves_sessions(runtime) else replace(settings, cache_ram_mib=0, ctx_checkpoints=0)


def server_engine(engine: EngineSettings, settings: ServerSettings) -> tuple[SlotLayout, EngineSettings]:
    """Rule 1."""
    layout = resolve_slots(settings.n_parallel, settings.kv_unified)
    outputs = max(reserved_outputs(engine), layout.outputs(DRAFT_N_MAX if settings.draft is not None else 0))
    if (engine.n_seq, engine.kv_unified, engine.outputs) == (layout.n_seq, layout.unified, outputs):
        return layout, engine
    return layout, replace(engine, n_seq=layout.n_seq, kv_unified=layout.unified, outputs=outputs)


@dataclass(frozen=True, kw_only=True)
class ServerExtras:
    """Rule 2's first step: the projector and the draft placed, the checkpoints priced; the cache not yet."""

    settings: ServerSettings
    layout: SlotLayout
    ctx: int | None
    projector: ProjectorLoad | None
    draft: DraftLoad | None
    checkpoint: int | None
    checkpoints: int | None
    gpu_held: tuple[int, ...]
    host_held: int | None


def _projector(settings: ServerSettings, setup: GpuSetup, flash_attn: bool) -> ProjectorLoad | None:
    spec = settings.projector
    if spec is None:
        return None
    device = f"gpu{setup.gpus[0].index}" if setup.gpus and settings.projector_offload else HOST
    w, h = priced_image(spec, settings.image)
    return ProjectorLoad(spec=spec, device=device, weights=spec.weight_bytes, compute=spec.compute_bytes(w, h, flash_attn),
                         image_width=w, image_height=h, image_tokens=spec.image_tokens(w, h))


def priced_image(spec: ProjectorSpec, image: ImageSize | None) -> tuple[int, int]:
    """The image the encoder sees for the one asked (None: the projector's own size)."""
    return spec.image_side(image.width if image else None, image.height if image else None)


def image_room(settings: ServerSettings) -> int:
    """`auto_ctx` Rule 1: the context one image in every slot takes (0 without a projector)."""
    spec = settings.projector
    if spec is None:
        return 0
    return spec.image_tokens(*priced_image(spec, settings.image)) * resolve_slots(settings.n_parallel,
                                                                                  settings.kv_unified).n_seq


def _draft(draft: DraftModel | None, setup: GpuSetup, ctx: int | None, layout: SlotLayout,
           engine: EngineSettings, features: frozenset[str] | None) -> DraftLoad | None:
    if draft is None:
        return None
    spec = draft.spec
    L = spec.n_layer
    table = slot_kv_table(spec, ctx, draft.kv_type, layout, ubatch=engine.ubatch, swa_full=engine.swa_full) if ctx else None
    slots = Slots.build([*spec.layer_bytes, output_slot_bytes(spec)], table)
    p = setup.place(L, draft.layers_on_gpu(bool(setup.gpus)))
    blocks, host_kv = slots.load(0, p.host_blocks)
    g = spec.global_bytes
    host_w = input_layer_bytes(spec) + blocks + (0 if p.output_on_gpu else (g.output or 0) + g.output_norm)
    weights, kv = [(HOST, host_w)], [(HOST, host_kv)]
    compute_device = HOST
    for gpu, run in zip(setup.gpus, p.runs, strict=True):
        w, k = slots.load(*run)
        weights.append((f"gpu{gpu.index}", w))
        kv.append((f"gpu{gpu.index}", k))
        if w and compute_device == HOST:
            compute_device = f"gpu{gpu.index}"
    draft_engine = replace(engine, outputs=layout.n_seq)
    compute = compute_buffer(spec, graph_settings(spec, ctx, draft.kv_type, draft_engine))[0] if ctx else None
    chosen = engine.cpu_features if engine.cpu_features is not None else features
    repack = (repack_buffer(spec, chosen, p.host_blocks, not p.output_on_gpu).nbytes
              if chosen is not None and engine.repack else 0)
    return DraftLoad(path=spec.path, gpu_layers=p.gpu_layers, n_layer=L, kv_type=draft.kv_type, weights=tuple(weights),
                     kv=tuple(kv), compute_device=compute_device, compute=compute,
                     output=LOGIT_BYTES * (spec.n_vocab or 0) * layout.n_seq, repack=repack,
                     sampler=sampler_bytes(spec, engine), kv_cells=kv_cell_bytes(spec, ctx, engine) if ctx else 0)


def _checkpoint(model: ModelSpec, kv_type: KVType, ctx: int | None, layout: SlotLayout, engine: EngineSettings) -> int | None:
    """One full checkpoint of one slot (`checkpoints` Rule 4 at a slot's whole context), 0 for a model that makes none."""
    if not makes_checkpoints(model, CheckpointSettings(swa_full=engine.swa_full)):
        return 0
    tokens = layout.slot_ctx(ctx, model.context_length) if ctx else model.context_length or 0
    return checkpoint_bytes(model, kv_type, tokens, layout.streams)


def server_extras(model: ModelSpec, setup: GpuSetup, settings: ServerSettings, ctx: int | None, layout: SlotLayout,
                  engine: EngineSettings, kv_type: KVType, features: frozenset[str] | None = None) -> ServerExtras:
    """Rule 2: the projector and the draft placed before the model; the checkpoints priced."""
    projector = _projector(settings, setup, flash_attn(engine))
    draft = _draft(settings.draft, setup, ctx, layout, engine, features)
    one = _checkpoint(model, kv_type, ctx, layout, engine) if settings.ctx_checkpoints else 0
    if one and settings.draft is not None and ctx:  # the draft's own state rides along (`update_dft`)
        d = settings.draft.spec
        extra = partial_state_bytes(d, settings.draft.kv_type, layout.slot_ctx(ctx, model.context_length), layout.streams)
        one = None if extra is None else one + extra
    every = None if one is None else one * settings.ctx_checkpoints * layout.n_seq
    gpu_held = []
    for gpu in setup.gpus:
        name = f"gpu{gpu.index}"
        held = (projector.total if projector is not None and projector.device == name else 0)
        gpu_held.append(held + ((draft.on(name) or 0) if draft is not None else 0))
    host = projector.total if projector is not None and projector.device == HOST else 0
    host_draft = draft.on(HOST) if draft is not None else 0
    beside = draft.sampler + draft.kv_cells if draft is not None else 0
    host_held = None if every is None or host_draft is None else host + host_draft + beside
    return ServerExtras(settings=settings, layout=layout, ctx=ctx, projector=projector, draft=draft, checkpoint=one,
                        checkpoints=every, gpu_held=tuple(gpu_held), host_held=host_held)


def _one_context(model: ModelSpec, x: ServerExtras, kv_type: KVType, engine: EngineSettings,
                 kv_total: int | None) -> int | None:
    """`prompt_cache` Rule 5's size: one sequence's KV cache at n_ctx cells (the model's own with one slot)."""
    if x.ctx is None:
        return None
    if x.layout == SlotLayout():
        return kv_total
    table = slot_kv_table(model, x.layout.total_cells(x.ctx), kv_type, SlotLayout(), ubatch=engine.ubatch,
                          swa_full=engine.swa_full)
    return None if any(b is None for b in table) else sum(b for b in table if b is not None)


def _unlimited_cache(model: ModelSpec, x: ServerExtras, kv_type: KVType, engine: EngineSettings) -> int | None:
    """`prompt_cache` Rule 3's estimate for `--cache-ram -1`."""
    if x.ctx is None or x.checkpoints is None:
        return None
    n_ctx = x.layout.total_cells(x.ctx)
    table = slot_kv_table(model, n_ctx, kv_type, SlotLayout(), ubatch=engine.ubatch, swa_full=True)
    if any(b is None for b in table):
        return None
    return sum(b for b in table if b is not None) + x.checkpoints


def _replay(model: ModelSpec, x: ServerExtras, kv_type: KVType, engine: EngineSettings, mib: int) -> SessionTrace | None:
    """Rule 3's session: `session` replayed with the cache limit the command sets."""
    if x.ctx is None or x.checkpoints is None:
        return None
    s, layout = x.settings, x.layout
    cp = CheckpointSettings(max_checkpoints=s.ctx_checkpoints, n_batch=engine.batch or DEFAULT_BATCH,
                            n_ubatch=engine.ubatch, swa_full=engine.swa_full)
    image = x.projector.image_tokens if x.projector is not None else 0
    return replay(model, SessionModel(kv_type=kv_type, layout=layout, slot_ctx=layout.slot_ctx(x.ctx, model.context_length),
                                      n_ctx=layout.total_cells(x.ctx), cache_ram_mib=mib, checkpoints=cp, draft=s.draft,
                                      image_tokens=image), s.session)


def finish_server(model: ModelSpec, x: ServerExtras, devices: tuple[DeviceLoad, ...], kv_type: KVType,
                  engine: EngineSettings, kv_total: int | None) -> tuple[ServerLoad, tuple[DeviceLoad, ...]]:
    """Rules 3–5: the prompt cache sized, the session replayed, what the verdict counts added to the host's need;
    the load as the fit reports it."""
    host, *gpus = devices
    asked = x.settings.cache_ram_mib
    one_context = _one_context(model, x, kv_type, engine, kv_total)
    if asked is not None:
        mib = asked
    elif host.need is None or one_context is None:
        mib = 0
    else:
        room = host.usable - host.need - (x.checkpoints or 0 if x.settings.worst_case else 0)
        mib = chosen_cache_ram_mib(one_context, room)
    cache = full_cache_bytes(mib, _unlimited_cache(model, x, kv_type, engine) if mib == NO_LIMIT else None)
    worst = None if cache is None or x.checkpoints is None else cache + x.checkpoints
    session = _replay(model, x, kv_type, engine, mib)
    host = replace(host, server=host.server + (counted_held(x.settings, session, worst) or 0))
    load = ServerLoad(
        settings=x.settings, layout=x.layout, n_ctx=x.layout.total_cells(x.ctx) if x.ctx else None,
        ctx_seq=x.layout.ctx_seq(x.ctx) if x.ctx else None,
        slot_ctx=x.layout.slot_ctx(x.ctx, model.context_length) if x.ctx else None,
        outputs=reserved_outputs(engine), cache_ram_mib=mib, cache_chosen=asked is None, prompt_cache=cache,
        checkpoint=x.checkpoint, checkpoints=x.checkpoints, projector=x.projector, draft=x.draft,
        held=((host.name, None if host.kv is None else host.server), *((d.name, d.server) for d in gpus)),
        host_rss=_host_rss(x, cache), session=session, worst_held=worst,
        band_extra=_band_extra(x), band_mapped=_band_mapped(x),
    )
    return load, (host, *gpus)


def _band_mapped(x: ServerExtras) -> int:
    """Rule 5: the draft's host weights, mapped as the model's."""
    d = x.draft
    return 0 if d is None else dict(d.weights).get(HOST, 0)


def _band_extra(x: ServerExtras) -> int:
    """Rule 5: what the draft and the projector hold resident in host RAM beside the model's own, anonymous."""
    total = 0
    p = x.projector
    if p is not None and p.device == HOST:
        total += p.total
    d = x.draft
    if d is not None:
        total += ((dict(d.kv).get(HOST) or 0) + d.output + d.repack + d.sampler + d.kv_cells
                  + (d.compute or 0 if d.compute_device == HOST else 0))
    return total


def _host_rss(x: ServerExtras, cache: int | None) -> int | None:
    """Rule 5."""
    if cache is None or x.checkpoints is None:
        return None
    total = cache + x.checkpoints
    if x.projector is not None and x.projector.device == HOST:
        total += x.projector.total
    d = x.draft
    if d is not None:
        on_host = d.on(HOST)
        if on_host is None or d.compute is None:
            return None
        total += on_host + d.output + d.sampler + d.kv_cells + (d.compute if d.compute_device == HOST else 0)
    return total


def server_args(load: ServerLoad, model: ModelSpec, swa_full: bool) -> tuple[str, ...]:
    """Rule 6: llama-server's flags for the load."""
    s, layout = load.settings, load.layout
    args = ["-np", str(layout.n_seq)]
    args += ["--kv-unified"] if layout.unified and layout.n_seq > 1 else []
    args += ["--cache-ram", str(load.cache_ram_mib)]
    if makes_checkpoints(model, CheckpointSettings(swa_full=swa_full)) or s.ctx_checkpoints != CTX_CHECKPOINTS:
        args += ["--ctx-checkpoints", str(s.ctx_checkpoints)]
    p = load.projector
    if p is not None:
        args += ["--mmproj", p.spec.path]
        args += ["--no-mmproj-offload"] if not s.projector_offload else []
    d, dm = load.draft, s.draft
    if d is not None and dm is not None:
        args += ["-md", d.path, "--spec-type", SPEC_TYPE, "-ngld", str(d.gpu_layers)]
        args += ["-devd", "none"] if not dm.on_gpu else []
        args += ["-ctkd", dm.kv_type, "-ctvd", dm.kv_type] if dm.kv_type != "f16" else []
    return tuple(args)


def ollama_server(load: ServerLoad) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """Rule 6's Ollama side: its environment, and what it cannot say."""
    env = (("OLLAMA_NUM_PARALLEL", str(load.layout.n_seq)),) if load.layout.n_seq > 1 else ()
    notes = [f"Ollama has no prompt-cache size (llama-server --cache-ram {load.cache_ram_mib})"]
    if load.checkpoints:
        notes.append("Ollama does not keep llama-server's context checkpoints")
    if load.projector is not None:
        notes.append(f"Ollama takes the projector as a second FROM line of the Modelfile ({load.projector.spec.path})")
    if load.draft is not None:
        notes.append("Ollama has no speculative decoding with a draft model")
    return env, tuple(notes)



def server_flags(load: ServerLoad, model: ModelSpec, swa_full: bool) -> ServerFlags:
    """Rule 6, whole: the flags and Ollama's side of them."""
    env, notes = ollama_server(load)
    return ServerFlags(server_args(load, model, swa_full), env, notes)


def server_unknowns(model: ModelSpec, ctx: int | None, load: ServerLoad) -> tuple[str, ...]:
    """Facts the server's lines need that a file does not give (the model's own are `notes.fit_unknowns`)."""
    out = []
    d = load.draft
    if ctx and d is not None and any(kv is None for _, kv in d.kv):
        out.append(f"the draft model's KV cache: {d.path} lacks its attention facts")
    return tuple(out)


def server_notes(load: ServerLoad) -> tuple[str, ...]:
    """What a reader of the server's lines should know."""
    notes = []
    p = load.projector
    if p is not None and load.slot_ctx is not None:
        room = load.slot_ctx - p.image_tokens
        notes.append(f"one image takes {p.image_tokens} tokens of a slot's {load.slot_ctx}-token context"
                     + (f" ({room} left for text)" if room >= 0 else ": a slot cannot hold one image"))
        if p.spec.approximate:
            notes.append(f"projector type {p.spec.projector_type!r}: its image tokens and compute buffer are priced "
                         "as the LLaVA MLP's at its patch count (an approximation)")
    if load.cache_chosen:
        notes.append(f"prompt cache: llama-server's default lets it grow to 8192 MiB; the command sets --cache-ram "
                     f"{load.cache_ram_mib} (one context's worth of prompts, within what the host has left) and the "
                     "verdict counts it full")
    return tuple(notes)
