"""A llama.cpp command line read as llama.cpp reads it: what it sets that we price, and what it sets that we don't.

Rule 1: tokens are read in order against `options.SPELLINGS` (llama.cpp's `common_params_parse_ex`):
        `--long_name` is first read as `--long-name`; a flag takes no value, every other option
        takes the next token as its value, whatever it looks like (`-c -1` is a value). The first
        token may name the program (`llama-server`, `./build/bin/llama-cli`, `llama-server.exe`).
Rule 2: an unknown option is one line naming it (llama.cpp: `error: invalid argument: X`); an
        option of another program, likewise; a missing value is llama.cpp's "expected value for
        argument"; a malformed value is one line: `error while handling argument "-c": …`.
Rule 3: priced options fill `LlamaSettings` by the value rules of common/arg.cpp: on/off words
        as `is_truthy`/`is_falsey`/`is_autoy`; `-ngl` a number, `auto` or `all`; `-np -1` is auto;
        `-c 0` is the model's own context (and `--fit` may shrink it); `-ot` is repeatable and
        takes `PATTERN=BUFFER,…` (the pattern a regex, checked here with Python's `re`, close to
        std::regex's ECMAScript for the patterns people write); `--n-cpu-ffn N` is N overrides
        of the dense FFN of blocks 0 … N − 1 to the CPU, as llama.cpp adds them.
Rule 4: a repeated option: the last value wins (llama.cpp warns the same), except `-ot`, which adds.
Rule 5: an ignored or unpriced option is kept with its reason, listed once in the answer; a value
        that looks like a secret (`--api-key`, `-hft`) is never repeated.
Rule 6: a command as people paste it: leading environment assignments (`CUDA_VISIBLE_DEVICES=0`)
        and a wrapper before the program (`numactl …`, `nohup`, `taskset …`) are set aside and
        named; older program names are read as today's (`main` → llama-completion, `server` →
        llama-server); older llama.cpp's bare `-fa` (a flag then) is `-fa on`; a trailing `&` is
        dropped. Each is said in the notes.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePath
from types import MappingProxyType
from typing import Callable, Mapping, Sequence

from gguf_budget.core.errors import LlamaArgsError, RequestError
from gguf_budget.core.fit.engine_options import LoadMode
from gguf_budget.core.fit.placement.gpu_split import parse_tensor_split
from gguf_budget.core.fit.runtime_types import SplitMode, TensorOverride
from gguf_budget.core.llama_words.options import LEGACY, SPELLINGS, Effect, LlamaOption, Program
from gguf_budget.core.model.kv import KVType

MAX_TOKENS = 4096
"""A command line longer than this is not one a person typed."""
SECRET_OPTIONS = frozenset({"--api-key", "--hf-token", "--api-key-file"})
DENSE_FFN = r"\.ffn_(up|down|gate)\."
_INT32 = (-(2**31), 2**31 - 1)


@dataclass(frozen=True)
class Given:
    """One option as the command gave it (the spelling used, its value; None for a flag)."""

    option: LlamaOption
    spelling: str
    value: str | None

    @property
    def text(self) -> str:
        if self.value is None:
            return self.spelling
        shown = "…" if self.option.name in SECRET_OPTIONS else shlex.quote(self.value)
        return f"{self.spelling} {shown}"


@dataclass(frozen=True, kw_only=True)
class LlamaSettings:
    """The priced options a command set (None: not given — the program's own default applies)."""

    model: str | None = None
    model_url: str | None = None
    hf_repo: str | None = None
    hf_file: str | None = None
    ctx: int | None = None
    batch: int | None = None
    ubatch: int | None = None
    swa_full: bool | None = None
    ctx_checkpoints: int | None = None
    cache_ram: int | None = None
    kv_unified: bool | None = None
    flash_attn: bool | None = None
    flash_attn_given: bool = False
    threads: int | None = None
    threads_batch: int | None = None
    kv_offload: bool | None = None
    repack: bool | None = None
    op_offload: bool | None = None
    cache_type_k: KVType | None = None
    cache_type_v: KVType | None = None
    parallel: int | None = None
    """-1: auto."""
    mmproj: str | None = None
    mmproj_offload: bool | None = None
    load_mode: LoadMode | None = None
    device: tuple[str, ...] | None = None
    overrides: tuple[TensorOverride, ...] = ()
    n_cpu_moe: int | None = None
    cpu_moe: bool = False
    gpu_layers: int | None = None
    """-1: auto, -2: all (llama.cpp's own codes)."""
    split_mode: SplitMode | None = None
    tensor_split: tuple[float, ...] | None = None
    main_gpu: int | None = None
    fit: bool | None = None
    fit_target_mib: tuple[int, ...] | None = None
    fit_ctx: int | None = None
    draft_model: str | None = None
    draft_gpu_layers: int | None = None
    draft_device: tuple[str, ...] | None = None
    draft_type_k: KVType | None = None
    draft_type_v: KVType | None = None


@dataclass(frozen=True)
class LlamaCommand:
    """A llama.cpp command line as read (Rules 1–5)."""

    program: Program | None
    settings: LlamaSettings
    priced: tuple[Given, ...] = ()
    unpriced: tuple[Given, ...] = ()
    ignored: tuple[Given, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def model_source(self) -> str | None:
        """Where the model comes from, as given: a path (-m), a URL (-mu) or a Hub reference (-hf[:QUANT], -hff)."""
        s = self.settings
        if s.model is not None:
            return s.model
        if s.model_url is not None:
            return s.model_url
        if s.hf_repo is not None:
            return f"{s.hf_repo}" if s.hf_file is None else f"{s.hf_repo.split(':')[0]}/{s.hf_file}"
        return None

    def set_names(self) -> frozenset[str]:
        """The priced settings the command gave (`LlamaOption.detail`), for "which are defaults"."""
        return frozenset(g.option.detail for g in self.priced)


def _fail(spelling: str, why: str) -> LlamaArgsError:
    return LlamaArgsError(f'error while handling argument "{spelling}": {why}')


def _int(text: str, low: int = _INT32[0], high: int = _INT32[1]) -> int:
    t = text.strip()
    if not re.fullmatch(r"[+-]?\d{1,20}", t):
        raise RequestError(f"not a whole number: {text[:40]!r}")
    value = int(t)
    if not low <= value <= high:
        raise RequestError(f"{value} is outside {low} … {high}")
    return value


def _truth(text: str) -> bool | None:
    """on/off/auto as llama.cpp's `is_truthy`, `is_falsey`, `is_autoy` read them (None: auto)."""
    if text in ("on", "enabled", "true", "1"):
        return True
    if text in ("off", "disabled", "false", "0"):
        return False
    if text in ("auto", "-1"):
        return None
    raise RequestError(f"unknown value {text[:40]!r} (on, off or auto)")


def _on_off(text: str) -> bool:
    value = _truth(text)
    if value is None:
        raise RequestError(f"unknown value {text[:40]!r} (on or off)")
    return value


def _kv_type(text: str) -> KVType:
    try:
        return KVType(text.strip().lower())
    except ValueError:
        raise RequestError(f"unsupported cache type {text[:40]!r} (priced here: {', '.join(KVType)})") from None


def _layers(text: str) -> int:
    if text == "auto":
        return -1
    if text == "all":
        return -2
    return _int(text)


def _devices(text: str) -> tuple[str, ...]:
    names = tuple(d.strip() for d in text.split(",") if d.strip())
    if not names:
        raise RequestError("no device named (a list such as CUDA0,CUDA1, or none)")
    return () if names == ("none",) else names


def _overrides(text: str) -> tuple[TensorOverride, ...]:
    out = []
    for item in text.split(","):
        pattern, eq, buffer = item.partition("=")
        if not eq or not pattern or not buffer:
            raise RequestError(f"invalid value {item[:60]!r} (PATTERN=BUFFER, such as exps=CPU)")
        try:
            re.compile(pattern)
        except re.error as e:
            raise RequestError(f"the pattern {pattern[:60]!r} is not a regular expression: {e}") from None
        out.append(TensorOverride(pattern, buffer))
    return tuple(out)


def _mib_list(text: str) -> tuple[int, ...]:
    return tuple(_int(p, 0) for p in text.split(",")) if text.strip() else ()


def _split_mode(text: str) -> SplitMode:
    try:
        return SplitMode(text)
    except ValueError:
        raise RequestError(f"invalid value {text[:40]!r} (none, layer, row or tensor)") from None


def _load_mode(text: str) -> LoadMode:
    try:
        return LoadMode(text)
    except ValueError:
        raise RequestError(f"invalid value {text[:40]!r} ({', '.join(LoadMode)})") from None


def _split(text: str) -> tuple[float, ...]:
    shares = parse_tensor_split(text)
    if shares is None:
        raise RequestError("give the shares, e.g. 1,1 or 3,1")
    return shares


def _text(text: str) -> str:
    if not text.strip():
        raise RequestError("empty value")
    return text


_VALUE_PARSERS: Mapping[str, tuple[str, Callable[[str], object]]] = MappingProxyType({
    "model": ("model", _text), "model_url": ("model_url", _text), "hf_repo": ("hf_repo", _text),
    "hf_file": ("hf_file", _text), "ctx": ("ctx", lambda t: _int(t, 0)), "batch": ("batch", lambda t: _int(t, 1)),
    "ubatch": ("ubatch", lambda t: _int(t, 1)), "ctx_checkpoints": ("ctx_checkpoints", lambda t: _int(t, 0)),
    "cache_ram": ("cache_ram", lambda t: _int(t, -1)), "flash_attn": ("flash_attn", _truth),
    "threads": ("threads", lambda t: _int(t, -1)), "threads_batch": ("threads_batch", lambda t: _int(t, -1)),
    "cache_type_k": ("cache_type_k", _kv_type), "cache_type_v": ("cache_type_v", _kv_type),
    "parallel": ("parallel", lambda t: _int(t, -1)), "mmproj": ("mmproj", _text), "load_mode": ("load_mode", _load_mode),
    "device": ("device", _devices), "n_cpu_moe": ("n_cpu_moe", lambda t: _int(t, 0)),
    "gpu_layers": ("gpu_layers", _layers), "split_mode": ("split_mode", _split_mode), "tensor_split": ("tensor_split", _split),
    "main_gpu": ("main_gpu", lambda t: _int(t, 0)), "fit": ("fit", _on_off), "fit_target": ("fit_target_mib", _mib_list),
    "fit_ctx": ("fit_ctx", lambda t: _int(t, 0)), "draft_model": ("draft_model", _text),
    "draft_gpu_layers": ("draft_gpu_layers", _layers), "draft_device": ("draft_device", _devices),
    "draft_type_k": ("draft_type_k", _kv_type), "draft_type_v": ("draft_type_v", _kv_type),
})
_FLAGS: Mapping[str, str] = MappingProxyType({
    "swa_full": "swa_full", "kv_unified": "kv_unified", "kv_offload": "kv_offload", "repack": "repack",
    "op_offload": "op_offload", "mmproj_offload": "mmproj_offload", "cpu_moe": "cpu_moe",
})
ADDING = frozenset({"override_tensor", "n_cpu_ffn"})
"""Rule 4: the priced options that add to a list; every other priced option is a flag or has a value parser."""


ONCE_FLAGS = frozenset({"--flash-attn", "--color", "--log-colors", "--fit"})
"""Rule 6: on/off options that older llama.cpp builds took as bare flags."""
OLD_PROGRAMS: Mapping[str, Program] = MappingProxyType({"main": Program.COMPLETION, "server": Program.SERVER})
"""Rule 6: `main` was what llama-completion is now (llama-cli became the chat program), `server` llama-server."""
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def program_of(token: str) -> Program | None:
    """`./build/bin/llama-server`, `llama-cli.exe`, an older `./main` → the program; anything else → None."""
    name = PurePath(token.replace("\\", "/")).name.removesuffix(".exe")
    return next((p for p in Program if p.value == name), None) or OLD_PROGRAMS.get(name)


def _pasted(tokens: list[str], notes: list[str]) -> list[str]:
    """Rule 6: the program and its arguments out of a command as pasted."""
    if tokens and tokens[-1] == "&":
        tokens = tokens[:-1]
    at = next((i for i, t in enumerate(tokens) if program_of(t) is not None), None)
    if at:
        env = [t for t in tokens[:at] if _ENV.match(t)]
        rest = [t for t in tokens[:at] if not _ENV.match(t)]
        if env:
            notes.append(f"environment {' '.join(env)}: not priced (describe the GPUs it leaves with --gpu-total)")
        if rest:
            notes.append(f"{rest[0][:40]} runs before llama.cpp: not priced")
        tokens = tokens[at:]
    if tokens:
        name = PurePath(tokens[0].replace("\\", "/")).name.removesuffix(".exe")
        if name in OLD_PROGRAMS:
            notes.append(f"{name} is an older llama.cpp's name: read as {OLD_PROGRAMS[name]}")
    return tokens


def read_llama_args(argv: Sequence[str], program: Program | None = None) -> LlamaCommand:
    """Rules 1–5 over `argv` (the program's name first, or not)."""
    tokens = list(argv)
    if len(tokens) > MAX_TOKENS:
        raise LlamaArgsError(f"a command of {len(tokens):,} words is not a llama.cpp command line (at most {MAX_TOKENS:,})")
    notes: list[str] = []
    tokens = _pasted(tokens, notes)
    named = program_of(tokens[0]) if tokens else None
    if named is not None:
        tokens = tokens[1:]
        program = named
    elif tokens and not tokens[0].startswith("-"):
        raise LlamaArgsError(f"{tokens[0][:60]!r} is not a llama.cpp program (llama-server, llama-cli or "
                             "llama-completion) nor an option")
    values: dict[str, object] = {}
    overrides: list[TensorOverride] = []
    priced: list[Given] = []
    unpriced: list[Given] = []
    ignored: list[Given] = []
    i = 0
    while i < len(tokens):
        spelling = tokens[i]
        if spelling.startswith("--"):
            spelling = spelling.replace("_", "-")
        if spelling in LEGACY:
            long_name, mode = LEGACY[spelling]
            notes.append(f"{spelling} is an older llama.cpp's spelling: read as {long_name} {mode}")
            if spelling == "--mlock" and values.get("load_mode") is LoadMode.NONE:
                mode = LoadMode.MLOCK.value
            elif spelling == "--no-mmap" and values.get("load_mode") is LoadMode.MMAP_MLOCK:
                mode = LoadMode.MLOCK.value
            values["load_mode"] = LoadMode(mode)
            priced.append(Given(SPELLINGS[long_name][0], spelling, None))
            i += 1
            continue
        if spelling not in SPELLINGS:
            what = "an option" if spelling.startswith("-") else "a value without an option"
            raise LlamaArgsError(f"error: invalid argument: {spelling[:80]} ({what} llama.cpp {program or 'llama-server'} "
                                 "does not take)")
        option, positive = SPELLINGS[spelling]
        wanted = program or Program.SERVER
        if wanted not in option.programs:
            takers = sorted(option.programs)
            raise LlamaArgsError(f"error: invalid argument: {spelling} ({wanted} does not take it; "
                                 f"{' and '.join(takers)} {'does' if len(takers) == 1 else 'do'})")
        value = None
        if option.name in ONCE_FLAGS and (i + 1 >= len(tokens) or tokens[i + 1].startswith("-")):
            notes.append(f"{spelling} without a value is an older llama.cpp's flag: read as {spelling} on")
            tokens.insert(i + 1, "on")
        if option.values:
            if i + option.values >= len(tokens):
                raise LlamaArgsError(f"error while handling argument \"{spelling}\": expected value for argument")
            value = " ".join(tokens[i + 1:i + 1 + option.values])
        given = Given(option, spelling, value)
        i += 1 + option.values
        if option.effect is Effect.IGNORED:
            ignored.append(given)
            continue
        if option.effect is Effect.UNPRICED:
            unpriced.append(given)
            continue
        priced.append(given)
        key = option.detail
        try:
            if key in _FLAGS:
                values[_FLAGS[key]] = positive
            elif key == "override_tensor":
                overrides.extend(_overrides(value or ""))
            elif key == "n_cpu_ffn":
                n = _int(value or "", 0, 4096)
                overrides.extend(TensorOverride(rf"blk\.{b}{DENSE_FFN}", "CPU") for b in range(n))
            else:
                name, parse = _VALUE_PARSERS[key]
                values[name] = parse(value or "")
                if key == "flash_attn":
                    values["flash_attn_given"] = True
        except RequestError as e:
            raise _fail(spelling, str(e)) from None
    for name in ("threads", "threads_batch"):
        if values.get(name) == -1 or values.get(name) == 0:  # llama.cpp: -1 (or 0) is "the default"
            values.pop(name)
    return LlamaCommand(program, LlamaSettings(**values, overrides=tuple(overrides)),  # type: ignore[arg-type]
                        tuple(priced), tuple(unpriced), tuple(ignored), tuple(notes))


_WINDOWS = re.compile(r"(^|\s)(\.\\|%\w+%\\|[A-Za-z]:\\)|\.exe(\s|$)")


def split_command(text: str) -> list[str]:
    """A pasted command line → words, as its shell splits them: a POSIX shell's rules (a trailing `\\` joins
    lines), or cmd.exe's where the command is a Windows one (`.\\llama-server.exe`, `C:\\…`; `^` joins lines),
    whose backslashes are path separators."""
    if _WINDOWS.search(text):
        joined = re.sub(r"\^\r?\n", " ", text)
        try:
            words = shlex.split(joined, posix=False)
        except ValueError as e:
            raise LlamaArgsError(f"the command does not split into words as cmd.exe would: {e}") from None
        return [w[1:-1] if len(w) > 1 and w[0] == w[-1] == '"' else w for w in words]
    joined = re.sub(r"\\\r?\n", " ", text)
    try:
        return shlex.split(joined)
    except ValueError as e:
        raise LlamaArgsError(f"the command does not split into words as a shell would: {e}") from None
