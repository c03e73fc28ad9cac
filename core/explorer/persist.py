"""What the explorer remembers between runs, as plain dicts: the storage (QSettings) only keeps them.

Rule 1: every value read back is validated (`RESTORE`: sizes and counts against the core's
        `ranges`, words against their enums, recent entries as short paths); an invalid one
        falls back to its default and is named in the refusals, so start-up never fails
        because of what was stored.
Rule 2: the knobs are global (ring depth, head mode, KV type, ctx policy, slow threshold,
        typed bandwidths, the typed GPU backend and compute rates (`typed_words`), recent files, the llama.cpp program, llama-server's slots, KV sharing,
        prompt cache and checkpoints); budget, ctx and ctx cap are per model (`session`
        Rule 3), stored under the model's key (64 hex digits) as `budget` (0: unlimited, as the
        CLI spells it), `ctx`, `ctx_cap` and `used` (the order of use, oldest first).
Rule 3: llama-server's knobs are stored as the CLI spells them: `parallel` a slot count or
        `auto`, `kv_unified` `auto`/`unified`/`split`, `cache_ram` MiB (-1 no limit, 0 off) or
        `auto` (sized by this tool), `ctx_checkpoints` a count, `worst_case` whether the verdict
        counts every cache and checkpoint full. A vision projector or a draft
        model is not remembered: each was checked against one model and goes with it
        (`session` Rule 6).
Rule 4: llama.cpp's engine options, a V cache type apart from K's and a forced `--n-cpu-moe` are stored
        as llama.cpp spells them (`llama_options`, e.g. `-fa off -ub 256 -ctv q8_0`) and read back by the
        one reader of llama.cpp's words: text it would refuse, or that sets anything else, is refused.
Rule 5: the typed GPU backend is stored as llama.cpp names it (`CUDA`, `Vulkan`; one of `GPU_BACKENDS`), the
        typed GPU FP16 and CPU rates as whole FLOP/s, read back through the same ranges the machine editor and
        the command line check them against (`ranges.GPU_TFLOPS`, `ranges.CPU_GFLOPS`).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Mapping

from gguf_budget.core.errors import BudgetError, RequestError
from gguf_budget.core.explorer.session import ModelChoice, ModelMemory
from gguf_budget.core.llama_words.reader import read_llama_args, split_command
from gguf_budget.core.machine.backend import GPU_BACKENDS, Backend
from gguf_budget.core.explorer.state import DEFAULT_N_BUFFERS, DEFAULT_SLOW_BELOW_TOK_S, SLOW_RANGE, ExplorerState, TypedBandwidths
from gguf_budget.core.fit.server.checkpoints import CTX_CHECKPOINTS
from gguf_budget.core.fit.runtime_types import DEFAULT_RUNTIME, Runtime
from gguf_budget.core.fit.server.types import CACHE_RAM, CHECKPOINTS, SLOTS, ServerSettings
from gguf_budget.core.model.kv import DEFAULT_KV_TYPE, KV_TYPES, KVType
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.plan.types import CTX_POLICIES, HEAD_MODES, CtxPolicy, HeadMode
from gguf_budget.core.ranges import BANDWIDTH, BUDGET, BUFFERS, CONTEXT, CPU_GFLOPS, GPU_TFLOPS, ScaledRate

RECENT_LIMIT = 8
MAX_PATH_CHARS = 4096
MODEL_KEY = re.compile(r"[0-9a-f]{64}")
MODEL_FIELDS = ("budget", "ctx", "ctx_cap", "used")
AUTO = "auto"
KV_SHARING = {AUTO: None, "unified": True, "split": False}
"""Rule 3: `kv_unified` as stored → `ServerSettings.kv_unified`."""


@dataclass(frozen=True, kw_only=True)
class ExplorerSettings:
    """The global knobs as the person left them (Rule 2)."""

    prefer: str = CtxPolicy.SPEED.value
    n_buffers: int = DEFAULT_N_BUFFERS
    head_mode: str = HeadMode.AUTO.value
    kv_type: str = DEFAULT_KV_TYPE.value
    force: bool = False
    slow_below_tok_s: float = DEFAULT_SLOW_BELOW_TOK_S
    ram_bw: int | None = None
    disk_bw: int | None = None
    vram_bw: int | None = None
    backend: str | None = None
    gpu_flops: int | None = None
    cpu_flops: int | None = None
    recent: tuple[str, ...] = field(default_factory=tuple)
    runtime: str = DEFAULT_RUNTIME.value
    parallel: str = "1"
    kv_unified: str = AUTO
    cache_ram: str = AUTO
    ctx_checkpoints: int = CTX_CHECKPOINTS
    worst_case: bool = False
    llama_options: str = ""


def _int_in(low: int, high: int) -> Callable[[Any], int | None]:
    def check(value: Any) -> int | None:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            return None
        try:
            n = int(value)
        except ValueError:
            return None
        return n if low <= n <= high else None

    return check


def _float_in(low: float, high: float) -> Callable[[Any], float | None]:
    def check(value: Any) -> float | None:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            return None
        try:
            x = float(value)
        except ValueError:
            return None
        return x if low <= x <= high else None

    return check


def _rate(rate: ScaledRate) -> Callable[[Any], int | None]:
    """Rule 5: whole FLOP/s inside `rate`'s range."""
    number = _int_in(0, 1 << 62)

    def check(value: Any) -> int | None:
        n = number(value)
        try:
            return None if n is None else rate.check(n)
        except RequestError:
            return None

    return check


def _bool(value: Any) -> bool | None:
    text = str(value).lower() if isinstance(value, (bool, str)) else ""
    return True if text in ("true", "1") else False if text in ("false", "0") else None


def _word(words: tuple[str, ...]) -> Callable[[Any], str | None]:
    return lambda value: str(value) if isinstance(value, str) and value in words else None


def _count_or_auto(low: int, high: int) -> Callable[[Any], str | None]:
    """Rule 3: `auto`, or a whole number in [low, high], as text."""
    number = _int_in(low, high)

    def check(value: Any) -> str | None:
        if value == AUTO:
            return AUTO
        n = number(value)
        return None if n is None else str(n)

    return check


def _recent(value: Any) -> tuple[str, ...] | None:
    entries = value if isinstance(value, list) else [value]
    good = tuple(e for e in entries if isinstance(e, str) and 0 < len(e) <= MAX_PATH_CHARS and "\0" not in e)
    return good[:RECENT_LIMIT] if len(good) == len(entries) else None


RESTORE: dict[str, Callable[[Any], Any]] = {
    "prefer": _word(tuple(p.value for p in CTX_POLICIES)),
    "n_buffers": _int_in(BUFFERS.low, BUFFERS.high),
    "head_mode": _word(tuple(m.value for m in HEAD_MODES)),
    "kv_type": _word(tuple(t.value for t in KV_TYPES)),
    "force": _bool,
    "slow_below_tok_s": _float_in(*SLOW_RANGE),
    "ram_bw": _int_in(BANDWIDTH.low, BANDWIDTH.high),
    "disk_bw": _int_in(BANDWIDTH.low, BANDWIDTH.high),
    "vram_bw": _int_in(BANDWIDTH.low, BANDWIDTH.high),
    "backend": _word(tuple(b.value for b in GPU_BACKENDS)),
    "gpu_flops": _rate(GPU_TFLOPS),
    "cpu_flops": _rate(CPU_GFLOPS),
    "recent": _recent,
    "runtime": _word(tuple(r.value for r in Runtime)),
    "parallel": _count_or_auto(SLOTS.low, SLOTS.high),
    "kv_unified": _word(tuple(KV_SHARING)),
    "cache_ram": _count_or_auto(CACHE_RAM.low, CACHE_RAM.high),
    "ctx_checkpoints": _int_in(CHECKPOINTS.low, CHECKPOINTS.high),
    "worst_case": _bool,
    "llama_options": lambda value: _llama_options(value),
}
"""Rule 1: each global key and the check that turns what came back into a value (None: invalid)."""

_MODEL_RESTORE: dict[str, Callable[[Any], int | None]] = {
    "budget": _int_in(0, BUDGET.high),
    "ctx": _int_in(CONTEXT.low, CONTEXT.high),
    "ctx_cap": _int_in(CONTEXT.low, CONTEXT.high),
    "used": _int_in(0, 1 << 62),
}


@dataclass(frozen=True)
class Refusal:
    """A stored value that was not valid, and the default used instead (Rule 1)."""

    key: str
    raw: Any
    default: Any


def settings_from(raw: Mapping[str, Any]) -> tuple[ExplorerSettings, tuple[Refusal, ...]]:
    """Rule 1: the global knobs in `raw` (absent keys take their defaults)."""
    defaults = asdict(ExplorerSettings())
    values, refused = dict(defaults), []
    for key, check in RESTORE.items():
        if raw.get(key) is None:
            continue
        value = check(raw[key])
        if value is None:
            refused.append(Refusal(key, raw[key], defaults[key]))
        else:
            values[key] = value
    return ExplorerSettings(**values), tuple(refused)


def settings_dict(settings: ExplorerSettings) -> dict[str, Any]:
    """What `settings_from` reads back; None for a key to remove."""
    return {key: (None if value == () else value) for key, value in asdict(settings).items()}


def memory_from(raw: Mapping[str, Mapping[str, Any]]) -> tuple[ModelMemory, tuple[Refusal, ...]]:
    """Rule 2: the per-model memory; a row with an invalid key or value is dropped whole and named."""
    rows: list[tuple[int, str, ModelChoice]] = []
    refused: list[Refusal] = []
    for key, values in raw.items():
        checked = {name: _MODEL_RESTORE[name](values[name]) for name in MODEL_FIELDS if values.get(name) is not None}
        bad = [name for name, value in checked.items() if value is None]
        if not MODEL_KEY.fullmatch(key) or bad or set(values) - set(MODEL_FIELDS):
            refused.append(Refusal(f"models/{key}", dict(values), None))
            continue
        budget = checked.get("budget")
        rows.append((checked.get("used") or 0, key, ModelChoice(
            None if budget is None else Budget.from_cli(budget), checked.get("ctx"), checked.get("ctx_cap"))))
    return ModelMemory({key: choice for _, key, choice in sorted(rows)}), tuple(refused)


def memory_dict(memory: ModelMemory) -> dict[str, dict[str, int]]:
    """Rule 2: what `memory_from` reads back."""
    out: dict[str, dict[str, int]] = {}
    for used, (key, choice) in enumerate(memory.rows().items()):
        row = {"used": used}
        if choice.budget is not None:
            row["budget"] = choice.budget.cli_bytes
        if choice.ctx is not None:
            row["ctx"] = choice.ctx
        if choice.ctx_cap is not None:
            row["ctx_cap"] = choice.ctx_cap
        out[key] = row
    return out


def _auto_or_int(text: str) -> int | None:
    return None if text == AUTO else int(text)


def server_from(settings: ExplorerSettings) -> ServerSettings:
    """Rule 3: llama-server's knobs as remembered (no projector, no draft)."""
    return ServerSettings(n_parallel=_auto_or_int(settings.parallel), kv_unified=KV_SHARING[settings.kv_unified],
                          cache_ram_mib=_auto_or_int(settings.cache_ram), ctx_checkpoints=settings.ctx_checkpoints,
                          worst_case=settings.worst_case)


def server_words(server: ServerSettings) -> dict[str, Any]:
    """Rule 3: what `server_from` reads back, as `ExplorerSettings` fields."""
    sharing = next(word for word, value in KV_SHARING.items() if value is server.kv_unified)
    return {"parallel": AUTO if server.n_parallel is None else str(server.n_parallel), "kv_unified": sharing,
            "cache_ram": AUTO if server.cache_ram_mib is None else str(server.cache_ram_mib),
            "ctx_checkpoints": server.ctx_checkpoints, "worst_case": server.worst_case}


STORED_WORDS = frozenset({"flash_attn", "ubatch", "batch", "swa_full", "load_mode", "threads", "threads_batch", "repack",
                          "kv_offload", "op_offload", "split_mode", "main_gpu", "fit", "fit_ctx", "override_tensor",
                          "n_cpu_ffn", "device", "cache_type_v", "n_cpu_moe", "cpu_moe"})
"""Rule 4: the settings `llama_options` may give (the engine's, the V cache type, the forced expert offload)."""


def _llama_options(value: Any) -> str | None:
    """Rule 4: text the reader reads, giving only what `llama_options` stores."""
    if not isinstance(value, str) or len(value) > 4000:
        return None
    try:
        command = read_llama_args(split_command(value))
    except BudgetError:
        return None
    return value if command.set_names() <= STORED_WORDS and not command.ignored and not command.unpriced else None


def llama_options(state: ExplorerState) -> str:
    """Rule 4: what `state_from` reads back."""
    argv = state.engine.argv() + (["-ctv", state.v_type.value] if state.v_type is not None else [])
    argv += ["--n-cpu-moe", str(state.n_cpu_moe)] if state.n_cpu_moe is not None else []
    return shlex.join(argv)


def typed_words(typed: TypedBandwidths) -> dict[str, Any]:
    """Rules 2 and 5: the typed bandwidths, backend and rates as `ExplorerSettings` fields (what `typed_from` reads)."""
    return {"ram_bw": typed.ram, "disk_bw": typed.disk, "vram_bw": typed.vram,
            "backend": None if typed.backend is None else typed.backend.value, "gpu_flops": typed.gpu_flops,
            "cpu_flops": typed.cpu_flops}


def typed_from(settings: ExplorerSettings) -> TypedBandwidths:
    """Rules 2 and 5: what the person typed for the machine, as remembered."""
    return TypedBandwidths(ram=settings.ram_bw, disk=settings.disk_bw, vram=settings.vram_bw,
                           backend=None if settings.backend is None else Backend(settings.backend),
                           gpu_flops=settings.gpu_flops, cpu_flops=settings.cpu_flops)


def state_from(settings: ExplorerSettings) -> ExplorerState:
    """The state a session starts from: the global knobs; budget, ctx and cap come with each model."""
    typed = typed_from(settings)
    state = ExplorerState(
        prefer=CtxPolicy(settings.prefer), n_buffers=settings.n_buffers, head_mode=HeadMode(settings.head_mode),
        kv_type=KVType(settings.kv_type), force=settings.force, slow_below_tok_s=settings.slow_below_tok_s,
        bandwidths=typed.over(None), typed_bandwidths=typed,
        runtime=Runtime(settings.runtime), server=server_from(settings),
    )
    if not settings.llama_options:
        return state
    from gguf_budget.core.explorer.llama_question import ask  # Rule 4's reader: ~7 ms of imports, when options were kept

    asked = ask(read_llama_args(split_command(settings.llama_options)), state, None, state.runtime).state
    return replace(state, engine=asked.engine, v_type=asked.v_type, n_cpu_moe=asked.n_cpu_moe)
