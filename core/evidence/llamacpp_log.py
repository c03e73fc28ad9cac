"""Read a llama.cpp run's own report of its memory from the text of its log. Pure: text in, records out.

Works on the verbose output of llama-cli, llama-server, llama-completion, llama-fit-params and
llama-cpp-python (`verbose=True`), with or without llama.cpp's `0.00.123.456 I ` prefix, across
the line formats of the last 18 months (llama.cpp b3600 … 0c1e570, the revision of `ENGINE_REVISION`):

Rule 1: a new model load starts at `llama_model_loader: loaded meta data with N key-value pairs
        and M tensors from PATH`; every line after it belongs to that load until the next one.
Rule 2: buffers: `NAME model|KV|RS|output|compute|LoRA buffer size = X MiB` in every function's
        spelling (`load_tensors`, `llm_load_tensors`, `llama_kv_cache[_unified|_init]`,
        `llama_context`, `llama_new_context_with_model`, `llama_init_from_model`, `sched_reserve`,
        `llama_memory_recurrent`), and the older `llm_load_tensors: NAME buffer size = X MiB`
        (a model buffer). The debug line `compute buffer size is …` is a re-check, not a buffer.
Rule 3: caches: `size = X MiB (N cells, L layers, S seqs), K (type): …, V (type): …` and the
        older `KV self size = X MiB, K (type): …`; a preceding `creating SWA|non-SWA KV cache`
        names which cache of a sliding-window model it is; `using full-size SWA cache` = swa_full.
Rule 4: settings: n_ctx, n_ctx_seq (n_ctx_per_seq), n_batch, n_ubatch, n_seq_max, n_outputs_max,
        flash_attn from the context constructor; cache types from the cache lines; the load
        mode from `(load_mode = …)` / `(mmap = true|false)`; GPU layers from `offloaded N/M`.
Rule 5: a load is a dry run (no memory allocated: llama-fit-params, the `--fit` pass) when the
        loader says `no_alloc = 1` or `load_mode = none` with every model buffer at 0.00 MiB.
Rule 6: whole-log facts: the build (`build: 4404 (0827b2c1)`, `build = …`, `build 1 (0c1e570)`),
        the CPU features `system_info` reports as `= 1` (llama-cpp-python prints the same list
        bare, as the line `CPU : SSE3 = 1 | …`: `llama_print_system_info`), the decode speed (the last `eval time`
        line that is not `prompt eval time`), and the peak RSS from an attached `/usr/bin/time -v`
        block (`Maximum resident set size (kbytes)`) or a `peak RSS: N [unit]` line.
Rule 7: every other line is ignored. A text with no model load and no buffer line is not a
        llama.cpp log: `LlamaCppLogError`, one line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from collections.abc import Callable

from gguf_budget.core.gguf.constants import Keys

from gguf_budget.core.errors import BudgetError
from gguf_budget.core.evidence.log_records import (
    BreakdownRow, BufferKind, BufferLine, BuildInfo, CacheLine, CachePart, ContextSettings, EvalSpeed,
    LlamaCppLog, LoadRecord, ModelFacts, PrintedSize,
)

NOT_A_LOG = ("not a llama.cpp log: no model load and no buffer lines found "
             "(run llama.cpp with -v, or llama-cpp-python with verbose=True, and keep stderr)")
RSS_UNITS = {"": 1, "b": 1, "bytes": 1, "kb": 1024, "kib": 1024, "k": 1024, "mb": 1024**2, "mib": 1024**2,
             "m": 1024**2, "gb": 1024**3, "gib": 1024**3, "g": 1024**3}
SETTING_ALIASES = {"n_ctx_per_seq": "n_ctx_seq"}
INT_SETTINGS = ("n_ctx", "n_ctx_seq", "n_batch", "n_ubatch", "n_seq_max", "n_outputs_max")
META_INTS = {"n_layer": "n_layer", "n_vocab": "n_vocab", "n_embd": "n_embd", "n_ctx_train": "n_ctx_train"}
_NUM = r"(\d+(?:\.\d+)?)"


class LlamaCppLogError(BudgetError):
    """The text is not a llama.cpp log we can read."""


@dataclass
class _Load:
    """A load being read; frozen into a `LoadRecord` when the next one starts."""

    path: str | None = None
    n_tensors: int | None = None
    n_kv_pairs: int | None = None
    meta: dict[str, str] = field(default_factory=dict)
    type_counts: list[tuple[str, int]] = field(default_factory=list)
    no_alloc: bool = False
    load_mode: str | None = None
    offloaded: tuple[int, int] | None = None
    buffers: list[BufferLine] = field(default_factory=list)
    caches: list[CacheLine] = field(default_factory=list)
    settings: dict[str, int | str] = field(default_factory=dict)
    swa_full: bool = False
    next_window: str | None = None
    old_cells: int | None = None
    breakdown: list[BreakdownRow] = field(default_factory=list)
    repacked: list[str] = field(default_factory=list)

    def freeze(self) -> LoadRecord:
        models = [b for b in self.buffers if b.kind is BufferKind.MODEL]
        all_zero = bool(models) and all(float(b.mib) == 0 for b in models)
        first_cache = self.caches[0] if self.caches else None
        ints = {k: int(v) for k, v in self.settings.items() if k in INT_SETTINGS}
        settings = ContextSettings(
            **ints, flash_attn=str(self.settings["flash_attn"]) if "flash_attn" in self.settings else None,
            swa_full=self.swa_full, type_k=first_cache.part_type("K") if first_cache else None,
            type_v=first_cache.part_type("V") if first_cache else None,
        )
        return LoadRecord(
            model=self._facts(), dry_run=self.no_alloc or (self.load_mode in (None, "none") and all_zero),
            load_mode=self.load_mode, offloaded=self.offloaded, buffers=tuple(self.buffers),
            caches=tuple(self.caches), settings=settings, breakdown=tuple(self.breakdown),
            repacked=tuple(self.repacked),
        )

    def _facts(self) -> ModelFacts:
        ints = {field_: int(self.meta[key]) for key, field_ in META_INTS.items() if self.meta.get(key, "").isdigit()}
        size = self.meta.get("file size") or self.meta.get("model size")
        return ModelFacts(
            path=self.path, n_tensors=self.n_tensors, n_kv_pairs=self.n_kv_pairs,
            architecture=self.meta.get("arch"), name=self.meta.get(Keys.General.NAME),
            n_layer=ints.get("n_layer"), n_vocab=ints.get("n_vocab"), n_embd=ints.get("n_embd"),
            n_ctx_train=ints.get("n_ctx_train"), file_size=_printed_size(size),
            type_counts=tuple(self.type_counts),
        )


def _printed_size(text: str | None) -> PrintedSize | None:
    """'92.10 MiB (5.74 BPW)' → 92.10 MiB; '4.58 GiB (…)' → 4.58 GiB, the unit kept (its precision)."""
    m = re.match(rf"{_NUM} (MiB|GiB)", text or "")
    return PrintedSize(m.group(1), m.group(2)) if m else None


@dataclass
class _Reader:
    """Mutable state while reading one log, line by line (Rules 1–7)."""

    loads: list[_Load] = field(default_factory=list)
    build: BuildInfo | None = None
    features: set[str] = field(default_factory=set)
    n_threads: int | None = None
    eval: EvalSpeed | None = None
    peak_rss: int | None = None
    peak_rss_source: str | None = None
    command: str | None = None

    @property
    def load(self) -> _Load:
        if not self.loads:  # buffer lines without a loader line (a trimmed log): one anonymous load
            self.loads.append(_Load())
        return self.loads[-1]

    def new_load(self, m: re.Match[str]) -> None:
        self.loads.append(_Load(path=m["path"], n_tensors=int(m["tensors"]), n_kv_pairs=int(m["kvs"])))

    def type_count(self, m: re.Match[str]) -> None:
        self.load.type_counts.append((m["type"], int(m["n"])))

    def meta(self, m: re.Match[str]) -> None:
        if not self.loads:
            return
        key, value = m["key"].strip(), m["value"].strip()
        if key == "no_alloc":
            self.load.no_alloc = value == "1"
        self.load.meta.setdefault(key, value)

    def buffer(self, m: re.Match[str]) -> None:
        kind = BufferKind(m["kind"]) if m["kind"] else BufferKind.MODEL
        self.load.buffers.append(BufferLine(kind, m["device"], m["mib"], unnamed_kind=not m["kind"]))

    def window(self, m: re.Match[str]) -> None:
        self.load.next_window = m["which"]

    def swa_full(self, m: re.Match[str]) -> None:
        self.load.swa_full = True

    def old_kv_init(self, m: re.Match[str]) -> None:
        self.load.old_cells = int(m["cells"])

    def cache(self, m: re.Match[str]) -> None:
        ld = self.load
        parts = tuple(CachePart(*p) for p in _CACHE_PART.findall(m["parts"]))
        ld.caches.append(CacheLine(m["mib"], int(m["cells"]), int(m["layers"]), m["seqs"], parts, ld.next_window))
        ld.next_window = None

    def old_cache(self, m: re.Match[str]) -> None:
        parts = tuple(CachePart(*p) for p in _CACHE_PART.findall(m["parts"]))
        self.load.caches.append(CacheLine(m["mib"], self.load.old_cells, None, None, parts, self_size_line=True))

    def setting(self, m: re.Match[str]) -> None:
        key = SETTING_ALIASES.get(m["key"], m["key"])
        value = m["value"]
        self.load.settings.setdefault(key, int(value) if key in INT_SETTINGS and value.isdigit() else value)

    def load_mode(self, m: re.Match[str]) -> None:
        self.load.load_mode = m["mode"]

    def offloaded(self, m: re.Match[str]) -> None:
        self.load.offloaded = (int(m["n"]), int(m["of"]))

    def breakdown(self, m: re.Match[str]) -> None:
        row = _breakdown_row(m["name"].strip(), m["cells"])
        if row is not None:
            self.load.breakdown.append(row)

    def repacked(self, m: re.Match[str]) -> None:
        self.load.repacked.append(m["tensor"])

    def build_line(self, m: re.Match[str]) -> None:
        self.build = self.build or BuildInfo(int(m["number"]), m["commit"])

    def system_info(self, m: re.Match[str]) -> None:
        self.n_threads = int(m["threads"]) if m["threads"] else self.n_threads
        self.features |= set(re.findall(r"\b([A-Z][A-Z0-9_]*) = 1\b", m["rest"]))

    def eval_line(self, m: re.Match[str]) -> None:
        if not m["prompt"] and float(m["ms"]) > 0:
            self.eval = EvalSpeed(float(m["ms"]), int(m["n"]), float(m["tps"]))

    def time_rss(self, m: re.Match[str]) -> None:
        self.peak_rss, self.peak_rss_source = int(m["kb"]) * 1024, "/usr/bin/time -v"

    def peak_line(self, m: re.Match[str]) -> None:
        unit = (m["unit"] or "").lower()
        if unit in RSS_UNITS:
            self.peak_rss, self.peak_rss_source = round(float(m["value"]) * RSS_UNITS[unit]), "peak RSS line"

    def command_line(self, m: re.Match[str]) -> None:
        self.command = self.command or m["cmd"].strip()

    def freeze(self) -> LlamaCppLog:
        return LlamaCppLog(
            build=self.build, cpu_features=frozenset(self.features), n_threads=self.n_threads,
            loads=tuple(ld.freeze() for ld in self.loads), eval=self.eval, peak_rss=self.peak_rss,
            peak_rss_source=self.peak_rss_source, command=self.command,
        )


def _breakdown_row(name: str, cells: str) -> BreakdownRow | None:
    """`24077 = 945 + (19187 = 17904 + 384 + 898) + 3945` (a device) or `254 = 166 + 0 + 88`."""
    nums = [int(x) for x in re.findall(r"-?\d+", cells)]
    device, _, desc = name.partition(" (")
    description = desc.removesuffix(")") or None
    if len(nums) == 7:
        total, free, self_mib, model, context, compute, unaccounted = nums
        return BreakdownRow(device, description, total, free, self_mib, model, context, compute, unaccounted)
    if len(nums) == 4:
        self_mib, model, context, compute = nums
        return BreakdownRow(device, description, None, None, self_mib, model, context, compute, None)
    return None


_CACHE_PART = re.compile(r"(\w+) \((\w+)\): +([\d.]+) MiB")
# Checked in order; the first whose cheap `needle` is in the line and whose pattern matches wins.
RULES: tuple[tuple[str, str, Callable[[_Reader, re.Match[str]], None]], ...] = (
    ("loaded meta data", r"loaded meta data with (?P<kvs>\d+) key-value pairs and (?P<tensors>\d+) tensors "
                         r"from (?P<path>.+?) \(version", _Reader.new_load),
    ("- type ", r"llama_model_loader: - type +(?P<type>\w+): +(?P<n>\d+) tensors", _Reader.type_count),
    ("buffer size = ", r"(?P<device>\S+) +(?P<kind>model|KV|RS|output|compute|LoRA) buffer size = +"
                       rf"(?P<mib>{_NUM}) MiB", _Reader.buffer),
    ("buffer size = ", rf"llm_load_tensors: +(?P<device>\S+) (?P<kind>)buffer size = +(?P<mib>{_NUM}) MiB",
     _Reader.buffer),
    ("KV cache, size = ", r"creating +(?P<which>non-SWA|SWA) KV cache, size = \d+ cells", _Reader.window),
    ("using full-size SWA cache", r"using full-size SWA cache", _Reader.swa_full),
    (": size = ", rf": size = +(?P<mib>{_NUM}) MiB \( *(?P<cells>\d+) cells, +(?P<layers>\d+) layers, "
                  r"+(?P<seqs>[\d/]+ seqs[^)]*)\), (?P<parts>.*)$", _Reader.cache),
    ("KV self size", rf"KV self size += +(?P<mib>{_NUM}) MiB, (?P<parts>.*)$", _Reader.old_cache),
    ("kv_size = ", r"llama_kv_cache_init: kv_size = (?P<cells>\d+),", _Reader.old_kv_init),
    (" = ", r"(?:llama_context|llama_new_context_with_model|llama_init_from_model): +"
            r"(?P<key>n_ctx|n_ctx_seq|n_ctx_per_seq|n_batch|n_ubatch|n_seq_max|n_outputs_max|flash_attn) += +"
            r"(?P<value>\S+)\s*$", _Reader.setting),
    ("this can take a while", r"this can take a while\.\.\. \((?:load_mode|mmap) = (?P<mode>[\w+]+)",
     _Reader.load_mode),
    ("layers to GPU", r"offloaded (?P<n>\d+)/(?P<of>\d+) layers to GPU", _Reader.offloaded),
    ("memory_breakdown_print", r"memory_breakdown_print: \| +- (?P<name>.+?) +\|(?P<cells>[-\d =+()]+)\|",
     _Reader.breakdown),
    ("repack tensor", r"repack: repack tensor (?P<tensor>\S+) with", _Reader.repacked),
    ("build", r"\bbuild(?::| =)? (?P<number>\d+) \((?P<commit>[0-9a-f]{6,40})\)", _Reader.build_line),
    ("system_info", r"system_info: (?:n_threads = (?P<threads>\d+))?(?P<rest>.*)$", _Reader.system_info),
    ("CPU : ", r"^\s*(?P<threads>)(?P<rest>CPU : .*)$", _Reader.system_info),
    ("eval time", rf"(?P<prompt>prompt )?eval time = +(?P<ms>{_NUM}) ms / +(?P<n>\d+) (?:runs|tokens) +"
                  r"\( *[\d.]+ ms per token, +(?P<tps>[\d.]+|inf|-?nan) tokens per second\)", _Reader.eval_line),
    ("Maximum resident set size", r"Maximum resident set size \(kbytes\): (?P<kb>\d+)", _Reader.time_rss),
    ("system_fingerprint", r'"system_fingerprint":"b(?P<number>\d+)-(?P<commit>[0-9a-f]{6,40})"',
     _Reader.build_line),
    ("eak", rf"(?i:peak[ _]rss)(?:[ _]bytes)?\s*[:=]\s*(?P<value>{_NUM})\s*(?P<unit>[A-Za-z]*)", _Reader.peak_line),
    ("Command being timed", r'Command being timed: "(?P<cmd>.*)"', _Reader.command_line),
    (" = ", r"\b(?:print_info|llm_load_print_meta): (?P<key>[\w. ]+?) += (?P<value>.*)$", _Reader.meta),
)
_COMPILED = tuple((needle, re.compile(pattern), handler) for needle, pattern, handler in RULES)


def reads_line(line: str) -> bool:
    """Whether some rule reads `line` (Rule 7: the others are ignored, so a log keeps its meaning without them)."""
    return any(needle in line and pattern.search(line) for needle, pattern, _ in _COMPILED)


def parse_llamacpp_log(text: str) -> LlamaCppLog:
    """Read `text` (a whole log) into records (Rules 1–7); raises `LlamaCppLogError` if it is not one."""
    reader = _Reader()
    for line in text.splitlines():
        for needle, pattern, handler in _COMPILED:
            if needle in line:
                m = pattern.search(line)
                if m:
                    handler(reader, m)
                    break
    if not reader.loads:
        raise LlamaCppLogError(NOT_A_LOG)
    return reader.freeze()
