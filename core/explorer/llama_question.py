"""A llama.cpp command line as the question: the session state it asks about, and what of it is not priced.

`fit … -- ARGS`, `fit --command "llama-server …"`, the llama.cpp options given to `fit` itself and the
window's "Ask about a llama.cpp command…" all come here, so one command gives one answer everywhere.

Rule 1: the command's options are set over the state the rest of the question built (the model, the
        machine, this tool's own options): an option the command gives wins; one it does not give
        is the program's own default (Rule 2), not this tool's.
Rule 2: each program's defaults (llama.cpp 0c1e570, common/arg.cpp and tools/server/server.cpp):
        llama-server runs `-np -1`, auto — 4 slots sharing one unified KV cache; llama-cli and
        llama-completion one sequence; llama-completion has no prompt cache and keeps no context
        checkpoints; llama-cpp-python (`--runtime`) is llama.cpp's library defaults
        (`llama_context_default_params`: a full-size sliding-window cache, a 512-token batch).
Rule 3: `-c N` is the context asked (`-c 0`: the model's own, which llama.cpp's `--fit` may shrink);
        `-ngl auto` leaves the layers to `--fit`, `-ngl all` (or a number past the last layer) is
        every layer; `-fitt` sets each GPU's reserve (MiB, one value for every GPU; not given, the
        program's own 1024 MiB on every GPU, common/common.h `fit_params_target` — what `--fit` keeps
        free when it places `-ngl auto`, and the margin a command that places its layers itself is
        judged by, so the command `fit` prints reads back to the same answer — unless the person set
        this tool's GPU reserves: a reserve typed is theirs, the tool's default gives way), `-cram`,
        `-ctxcp`, `-np`, `-kvu` llama-server's settings, `-mm` and `-md` its projector and draft (read
        and checked as `fit --mmproj`/`--draft` read them); `-ctkd`/`-ctvd` the draft's cache (one
        type is priced: K's).
Rule 4: `answered` lists which settings the command gave and which took the program's defaults, and
        every option that was not priced, with why — an answer never drops one silently.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from gguf_budget.core.errors import LlamaArgsError
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit.engine_options import EngineOptions
from gguf_budget.core.fit.placement.gpu_split import MAX_TENSOR_SPLIT
from gguf_budget.core.fit.runtime_memory import serves_sessions
from gguf_budget.core.fit.runtime_types import Runtime
from gguf_budget.core.fit.server.inputs import open_draft, open_projector
from gguf_budget.core.fit.server.types import ServerSettings
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.machine.usable import DEFAULT_GPU_RESERVE
from gguf_budget.core.llama_words.options import Program
from gguf_budget.core.model.kv import KVType
from gguf_budget.core.model.spec import ModelSpec

if TYPE_CHECKING:
    from gguf_budget.core.llama_words.reader import LlamaCommand, LlamaSettings

MiB = 1 << 20
EVERY_LAYER = 2**31 - 1
"""`-ngl all`, `--cpu-moe`: past any model's last layer (the placement and the expert offload clamp it)."""
RUNTIME_OF = {Program.SERVER: Runtime.LLAMA_SERVER, Program.CLI: Runtime.LLAMA_CLI,
              Program.COMPLETION: Runtime.LLAMA_COMPLETION}
PROGRAM_OF = {r: p for p, r in RUNTIME_OF.items()}


@dataclass(frozen=True)
class LlamaQuestion:
    """Rule 4: the state asked about, and what the command gave, left to defaults, and did not price."""

    state: ExplorerState
    runtime: Runtime
    given: tuple[str, ...]
    unpriced: tuple[str, ...]
    ignored: tuple[str, ...]
    notes: tuple[str, ...]

    @property
    def lines(self) -> tuple[str, ...]:
        """What the text answer says of the question, one line each."""
        out = [f"Asked of {self.runtime}: " + (", ".join(self.given) if self.given else "nothing but its defaults")
               + "; every other setting is its default"]
        out += [f"Not priced  {line}" for line in self.unpriced]
        if self.ignored:
            out.append("Ignored     " + "; ".join(self.ignored))
        out += list(self.notes)
        return tuple(out)


def program_for(runtime: Runtime | None) -> Program | None:
    """The program whose options a command is read against: `--runtime`'s (llama-cpp-python: llama-server's)."""
    return None if runtime is None else PROGRAM_OF.get(runtime, Program.SERVER)


def question_dict(question: LlamaQuestion | None) -> dict[str, object] | None:
    """`fit --json`'s `llama_command`: what was asked, and what was not priced."""
    if question is None:
        return None
    return {"runtime": question.runtime.value, "given": list(question.given), "unpriced": list(question.unpriced),
            "ignored": list(question.ignored), "notes": list(question.notes)}


def _server(s: LlamaSettings, runtime: Runtime, model: ModelSpec | None, base: ServerSettings) -> ServerSettings:
    """Rules 2–3: llama-server's settings the command gives, else the program's own."""
    if s.parallel is not None:
        n_parallel: int | None = None if s.parallel == -1 else s.parallel
    else:
        n_parallel = None if runtime is Runtime.LLAMA_SERVER else 1
    quiet = not serves_sessions(runtime)
    if model is None and (s.mmproj is not None or s.draft_model is not None):
        raise LlamaArgsError("--mmproj and --model-draft belong to one model: ask about that model")
    projector = open_projector(s.mmproj, model) if s.mmproj is not None and model is not None else base.projector
    draft = base.draft
    if s.draft_model is not None and model is not None:
        on_gpu = s.draft_device != ()
        draft = open_draft(s.draft_model, model, gpu_layers=_draft_layers(s.draft_gpu_layers), on_gpu=on_gpu,
                           kv_type=s.draft_type_k or s.draft_type_v or KVType.F16)
    return replace(base, n_parallel=n_parallel, kv_unified=s.kv_unified,
                   cache_ram_mib=s.cache_ram if s.cache_ram is not None else (0 if quiet else None),
                   ctx_checkpoints=s.ctx_checkpoints if s.ctx_checkpoints is not None else (0 if quiet else 32),
                   projector=projector,
                   projector_offload=s.mmproj_offload if s.mmproj_offload is not None else base.projector_offload,
                   draft=draft)


def _draft_layers(ngld: int | None) -> int | None:
    return None if ngld is None or ngld < 0 else ngld


def _engine(s: LlamaSettings, base: EngineOptions) -> EngineOptions:
    return replace(
        base, flash_attn=s.flash_attn if s.flash_attn_given else base.flash_attn,
        ubatch=s.ubatch if s.ubatch is not None else base.ubatch, batch=s.batch if s.batch is not None else base.batch,
        swa_full=s.swa_full if s.swa_full is not None else base.swa_full,
        load_mode=s.load_mode if s.load_mode is not None else base.load_mode,
        threads=s.threads if s.threads is not None else base.threads,
        threads_batch=s.threads_batch if s.threads_batch is not None else base.threads_batch,
        repack=s.repack if s.repack is not None else base.repack,
        kv_offload=s.kv_offload if s.kv_offload is not None else base.kv_offload,
        op_offload=s.op_offload if s.op_offload is not None else base.op_offload,
        split_mode=s.split_mode if s.split_mode is not None else base.split_mode,
        main_gpu=s.main_gpu if s.main_gpu is not None else base.main_gpu,
        overrides=base.overrides + s.overrides, devices=s.device if s.device is not None else base.devices,
        fit=s.fit if s.fit is not None else base.fit, fit_ctx=s.fit_ctx if s.fit_ctx is not None else base.fit_ctx)


FIT_TARGET_MIB = 1024
"""llama.cpp's `-fitt` default: what `--fit` keeps free on each GPU (common/common.h `fit_params_target`)."""


def _reserves(fit_target_mib: tuple[int, ...] | None, base: Reserves) -> Reserves:
    """Rule 3: `-fitt` — one value for every GPU, or one per GPU in order; not given, the program's 1024 MiB on
    every GPU where the GPU reserves are this tool's default (the host's reserve stays this tool's)."""
    if fit_target_mib is None:
        if base.gpu != DEFAULT_GPU_RESERVE or base.per_gpu:
            return base
        fit_target_mib = (FIT_TARGET_MIB,)
    if not fit_target_mib:
        raise LlamaArgsError('error while handling argument "-fitt": give a MiB value, or one per GPU')
    per_gpu = tuple(m * MiB for m in fit_target_mib)
    if len(per_gpu) == 1:
        per_gpu = per_gpu * MAX_TENSOR_SPLIT
    return Reserves(base.host, per_gpu[0], per_gpu)


def _gpu_layers(s: LlamaSettings, base: int | None) -> int | None:
    """`-ngl auto` leaves it to `--fit`; `-ngl all` (llama.cpp's −2) and any number past the last layer are every
    layer (the placement takes at most n_layer + 1, `gpu_split` Rule 1)."""
    if s.gpu_layers is None:
        return base
    if s.gpu_layers == -1:
        return None
    return EVERY_LAYER if s.gpu_layers < -1 else s.gpu_layers


def ask(command: LlamaCommand, state: ExplorerState, model: ModelSpec | None,
        runtime: Runtime | None = None) -> LlamaQuestion:
    """Rules 1–4: the state the command asks about (`runtime` None: the command's program, else llama-server);
    `model` None asks for every model alike (the Library), so a projector or a draft cannot be given."""
    program = command.program or Program.SERVER
    runtime = runtime or RUNTIME_OF[program]
    s = command.settings
    notes = list(command.notes)  # -sm row and tensor: the fit says what it prices (`split_mode`)
    if (s.n_cpu_moe or s.cpu_moe) and model is not None and not model.routed_expert_bytes:
        notes.append("--n-cpu-moe/--cpu-moe: this model has no routed experts, so nothing moves to the CPU")
    if s.draft_type_v is not None and s.draft_type_k is not None and s.draft_type_v != s.draft_type_k:
        notes.append(f"the draft's V cache is priced as its K cache's type ({s.draft_type_k})")
    k = s.cache_type_k or state.kv_type
    v = s.cache_type_v or state.v_type or state.kv_type
    ctx = state.ctx if s.ctx is None else (s.ctx or None)
    new = replace(
        state, runtime=runtime, ctx=ctx, gpu_layers=_gpu_layers(s, state.gpu_layers),
        kv_type=k, v_type=None if v == k else v,
        n_cpu_moe=EVERY_LAYER if s.cpu_moe else (s.n_cpu_moe if s.n_cpu_moe is not None else state.n_cpu_moe),
        tensor_split=s.tensor_split if s.tensor_split is not None else state.tensor_split,
        reserves=_reserves(s.fit_target_mib, state.reserves),
        server=_server(s, runtime, model, state.server), engine=_engine(s, state.engine))
    given = tuple(dict.fromkeys(g.text for g in command.priced if g.option.detail not in ("model", "model_url",
                                                                                            "hf_repo", "hf_file")))
    return LlamaQuestion(new, runtime, given, tuple(f"{g.text}: {g.option.reason}" for g in command.unpriced),
                         tuple(f"{g.text} ({g.option.reason})" for g in command.ignored), tuple(notes))
