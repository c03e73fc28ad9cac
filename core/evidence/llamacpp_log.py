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
        line that is not `prompt eval time`), the prefill speed (the `prompt eval time` line of the
        same report: the last one with tokens), and the peak RSS from an attached `/usr/bin/time -v`
        block (`Maximum resident set size (kbytes)`) or a `peak RSS: N [unit]` line.
Rule 7: every other line is ignored. A text with no model load and no buffer line is not a
        llama.cpp log: `LlamaCppLogError`, one line.
Rule 8: hostile text costs linear time and cannot raise: a line longer than MAX_LINE_CHARS is
        not one llama.cpp prints and is skipped; each rule is tried once per line — at the first
        place its needle occurs (`At.NEEDLE`), at the line's start (`At.START`), or searched
        from token starts only (`At.ANYWHERE`, its pattern opening with a look-behind) — and no
        pattern nests quantifiers that could split a run two ways. Numbers are at most
        MAX_DIGITS digits (a longer one makes its line unread: unknown, never a ValueError or
        OverflowError); a speed of `nan` or `inf` is unknown (null in JSON), never NaN.
Rule 9: a line that quotes text the log's author did not write — the command line (`+ argv`,
        `Command being timed`: a file name), the model's metadata (`llama_model_loader: - kv`,
        `print_info:`) — is matched first and read for its own fact only, so a file name or a
        model's `general.name` holding "buffer size = 1 MiB" or "Maximum resident set size"
        forges nothing. /usr/bin/time's lines and the peak-RSS line count only at a line's start.
Rule 11: llama-server's extras: its slots and KV sharing (`initializing, n_slots = N, …,
        kv_unified = 'true'`), its prompt-cache limit (`size limit: N MiB`, `no limit`, `disabled`),
        the most its cache held (`cache state: N prompts, X MiB`), the most every slot's context
        checkpoints held at once (`created context checkpoint K of M (…, size = X MiB)` per slot
        id: K of that size live; `erasing` lines are the oldest going), the projector's weights
        and compute buffer (`load_hparams: model size`, `reserve_compute_meta: … compute buffer
        size`), and the draft model: the load after `loading draft model` is kept apart
        (`LlamaCppLog.draft`), never taken for the run.
Rule 10: the program: the one `Command being timed` names (llama-cli, llama-server,
        llama-completion), else llama-cpp-python when the features came bare, else the one its
        timing lines show (`BINARY_MARKERS`; a llama-server slot can be llama-cli's); the prompt's
        tokens from `prompt eval time = … / N tokens`; llama-server's checkpoint limits from
        `context checkpoints enabled, max = N, min spacing = M`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from collections.abc import Callable

from gguf_budget.core.vocab import TextEnum
from gguf_budget.core.gguf.constants import Keys

from gguf_budget.core.errors import LlamaCppLogError
from gguf_budget.core.evidence.log_records import (
    BreakdownRow, BufferKind, BufferLine, BuildInfo, CacheLine, CachePart, ContextSettings, EvalSpeed,
    LlamaCppLog, LoadRecord, ModelFacts, PrintedSize, ServerFacts, mib_bytes,
)

PROGRAMS = ("llama-cli", "llama-server", "llama-completion")
# Rule 10: which program printed its timings: llama-server's slots (llama-cli runs the server in-process),
# llama-completion's common_perf_print, llama-cpp-python's direct llama_perf_context_print.
BINARY_MARKERS = (("print_timing", "llama-server"), ("common_perf_print", "llama-completion"),
                  ("llama_perf_context_print", "llama-cpp-python"))
NOT_A_LOG = ("not a llama.cpp log: no model load and no buffer lines found "
             "(run llama.cpp with -v, or llama-cpp-python with verbose=True, and keep stderr)")
RSS_UNITS = {"": 1, "b": 1, "bytes": 1, "kb": 1024, "kib": 1024, "k": 1024, "mb": 1024**2, "mib": 1024**2,
             "m": 1024**2, "gb": 1024**3, "gib": 1024**3, "g": 1024**3}
SETTING_ALIASES = {"n_ctx_per_seq": "n_ctx_seq"}
INT_SETTINGS = ("n_ctx", "n_ctx_seq", "n_batch", "n_ubatch", "n_seq_max", "n_outputs_max")
META_INTS = {"n_layer": "n_layer", "n_vocab": "n_vocab", "n_embd": "n_embd", "n_ctx_train": "n_ctx_train"}
MAX_LINE_CHARS = 8192
"""Rule 8: a model path (at most 4096 bytes on Linux) and its line fit; a longer line is not llama.cpp's."""
MAX_DIGITS = 18
_INT = rf"\d{{1,{MAX_DIGITS}}}(?![\d.])"
_NUM = rf"(\d{{1,{MAX_DIGITS}}}(?:\.\d{{1,{MAX_DIGITS}}})?)(?![\d.])"
_DIGITS = re.compile(rf"[0-9]{{1,{MAX_DIGITS}}}")


def _int(text: str) -> int | None:
    """A plain decimal of at most MAX_DIGITS digits, else None (Rule 8: `str.isdigit` also takes '²')."""
    return int(text) if _DIGITS.fullmatch(text) else None


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
        ints = {k: v for k, v in self.settings.items() if k in INT_SETTINGS and isinstance(v, int)}
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
        read = {field_: _int(self.meta.get(key, "")) for key, field_ in META_INTS.items()}
        ints = {field_: n for field_, n in read.items() if n is not None}
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
    prompt_eval: EvalSpeed | None = None
    peak_rss: int | None = None
    peak_rss_source: str | None = None
    command: str | None = None
    program: str | None = None
    binary: str | None = None
    features_bare: bool = False
    checkpoints: tuple[int, int] | None = None
    draft_at: int | None = None
    slots: int | None = None
    kv_unified: bool | None = None
    cache_ram_mib: int | None = None
    cache_held: int = 0
    slot_checkpoints: dict[int, list[int]] = field(default_factory=dict)
    checkpoints_held: int = 0
    projector_weights: int = 0
    projector_compute: int = 0

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
        ld.caches.append(CacheLine(mib=m["mib"], cells=int(m["cells"]), layers=int(m["layers"]), seqs=m["seqs"],
                                   parts=parts, window=ld.next_window))
        ld.next_window = None

    def old_cache(self, m: re.Match[str]) -> None:
        parts = tuple(CachePart(*p) for p in _CACHE_PART.findall(m["parts"]))
        self.load.caches.append(CacheLine(mib=m["mib"], cells=self.load.old_cells, layers=None, seqs=None, parts=parts,
                                          self_size_line=True))

    def setting(self, m: re.Match[str]) -> None:
        key = SETTING_ALIASES.get(m["key"], m["key"])
        value = m["value"]
        number = _int(value) if key in INT_SETTINGS else None
        self.load.settings.setdefault(key, value if number is None else number)

    def load_mode(self, m: re.Match[str]) -> None:
        self.load.load_mode = m["mode"]

    def offloaded(self, m: re.Match[str]) -> None:
        self.load.offloaded = (int(m["n"]), int(m["of"]))

    def breakdown(self, m: re.Match[str]) -> None:
        row = _breakdown_row(m["name"].strip(), m["cells"].strip())
        if row is not None:
            self.load.breakdown.append(row)

    def repacked(self, m: re.Match[str]) -> None:
        self.load.repacked.append(m["tensor"])

    def build_line(self, m: re.Match[str]) -> None:
        self.build = self.build or BuildInfo(int(m["number"]), m["commit"])

    def system_info(self, m: re.Match[str]) -> None:
        self.n_threads = int(m["threads"]) if m["threads"] else self.n_threads
        self.features |= set(_FEATURE.findall(m["rest"]))

    def bare_features(self, m: re.Match[str]) -> None:
        self.features_bare = True
        self.system_info(m)

    def draft_line(self, m: re.Match[str]) -> None:
        self.draft_at = len(self.loads)

    def slots_line(self, m: re.Match[str]) -> None:
        self.slots, self.kv_unified = int(m["n"]), m["unified"] == "true"

    def cache_limit(self, m: re.Match[str]) -> None:
        self.cache_ram_mib = 0 if m["off"] else -1 if m["none"] else _int(m["mib"] or "")

    def cache_state(self, m: re.Match[str]) -> None:
        self.cache_held = max(self.cache_held, mib_bytes(m["mib"]))

    def checkpoint_made(self, m: re.Match[str]) -> None:
        slot, k = int(m["slot"]), int(m["k"])
        kept = self.slot_checkpoints.get(slot, [])
        self.slot_checkpoints[slot] = (kept[len(kept) - k + 1:] if k > 1 else []) + [mib_bytes(m["mib"])]
        self.checkpoints_held = max(self.checkpoints_held, sum(sum(v) for v in self.slot_checkpoints.values()))

    def projector_size_line(self, m: re.Match[str]) -> None:
        self.projector_weights = mib_bytes(m["mib"])

    def projector_compute_line(self, m: re.Match[str]) -> None:
        self.projector_compute = max(self.projector_compute, mib_bytes(m["mib"]))

    def checkpoints_line(self, m: re.Match[str]) -> None:
        self.binary = self.binary or "llama-server"
        self.checkpoints = (int(m["max"]), int(m["step"])) if m["max"] else (0, 0)

    def eval_line(self, m: re.Match[str]) -> None:
        self.binary = self.binary or next((name for marker, name in BINARY_MARKERS if marker in m.string), None)
        if float(m["ms"]) <= 0 or not int(m["n"]):
            return
        tps = m["tps_number"]
        speed = EvalSpeed(float(m["ms"]), int(m["n"]), float(tps)) if tps else None  # Rule 8: nan, inf
        if m["prompt"]:
            self.prompt_eval = speed
        else:
            self.eval = speed

    def time_rss(self, m: re.Match[str]) -> None:
        self.peak_rss, self.peak_rss_source = int(m["kb"]) * 1024, "/usr/bin/time -v"

    def peak_line(self, m: re.Match[str]) -> None:
        unit = (m["unit"] or "").lower()
        if unit in RSS_UNITS:
            self.peak_rss, self.peak_rss_source = round(float(m["value"]) * RSS_UNITS[unit]), "peak RSS line"

    def ignore(self, m: re.Match[str]) -> None:
        """Rule 9: a line that quotes text from elsewhere is read for nothing."""

    def command_line(self, m: re.Match[str]) -> None:
        self.command = self.command or m["cmd"].strip()
        program = self.command.split(" ", 1)[0].rsplit("/", 1)[-1]
        self.program = program if program in PROGRAMS else self.program

    def freeze(self) -> LlamaCppLog:
        loads = [ld.freeze() for ld in self.loads]
        draft = loads.pop(self.draft_at) if self.draft_at is not None and self.draft_at < len(loads) else None
        server = ServerFacts(slots=self.slots, kv_unified=self.kv_unified, cache_ram_mib=self.cache_ram_mib,
                             cache_held=self.cache_held, checkpoints_held=self.checkpoints_held,
                             projector=self.projector_weights + self.projector_compute)
        return LlamaCppLog(
            build=self.build, cpu_features=frozenset(self.features), n_threads=self.n_threads,
            loads=tuple(loads), eval=self.eval, peak_rss=self.peak_rss,
            peak_rss_source=self.peak_rss_source, command=self.command, prompt_eval=self.prompt_eval,
            binary=self._binary(), checkpoints=self.checkpoints, server=server, draft=draft,
        )

    def _binary(self) -> str | None:
        """Rule 10: the program the command names, else llama-cpp-python for bare features, else the timings'."""
        if self.program is not None:
            return self.program
        return "llama-cpp-python" if self.features_bare else self.binary


def _breakdown_row(name: str, cells: str) -> BreakdownRow | None:
    """`24077 = 945 + (19187 = 17904 + 384 + 898) + 3945` (a device) or `254 = 166 + 0 + 88`."""
    found = re.findall(r"-?\d+", cells)
    if any(len(x.lstrip("-")) > MAX_DIGITS for x in found):
        return None
    nums = [int(x) for x in found]
    device, _, desc = name.partition(" (")
    description = desc.removesuffix(")") or None
    if len(nums) == 7:
        total, free, self_mib, model, context, compute, unaccounted = nums
        return BreakdownRow(name=device, description=description, total=total, free=free, self_mib=self_mib,
                            model=model, context=context, compute=compute, unaccounted=unaccounted)
    if len(nums) == 4:
        self_mib, model, context, compute = nums
        return BreakdownRow(name=device, description=description, total=None, free=None, self_mib=self_mib, model=model,
                            context=context, compute=compute, unaccounted=None)
    return None


class At(TextEnum):
    """Where a rule's pattern is tried (Rule 8): each is one attempt, or starts at token boundaries only."""

    NEEDLE = "at the first place the needle occurs (the pattern opens with the needle)"
    START = "at the start of the line"
    ANYWHERE = "searched; the pattern opens with a look-behind, so it starts only where a token does"


_CACHE_PART = re.compile(rf"(?<!\w)(\w+) \((\w+)\): +{_NUM} MiB")
_FEATURE = re.compile(r"(?<!\w)([A-Z][A-Z0-9_]*) = 1\b")
_META = r"{function}: +(?P<key>[\w.]+(?: +[\w.]+)*) += (?P<value>.*)$"
# Checked in order; the first whose cheap `needle` is in the line and whose pattern matches wins.
RULES: tuple[tuple[str, At, str, Callable[[_Reader, re.Match[str]], None]], ...] = (
    # Rule 9: lines that quote text from elsewhere — the command (a file name), the model's metadata —
    # come first and are read for nothing else.
    ("+ ", At.START, r"\+ ", _Reader.ignore),
    ("Command being timed: ", At.START, r'[ \t]*Command being timed: "(?P<cmd>.*)"', _Reader.command_line),
    ("llama_model_loader: - kv", At.NEEDLE, r"llama_model_loader: - kv", _Reader.ignore),
    ("print_info: ", At.NEEDLE, _META.format(function="print_info"), _Reader.meta),
    ("llm_load_print_meta: ", At.NEEDLE, _META.format(function="llm_load_print_meta"), _Reader.meta),
    ("loaded meta data with ", At.NEEDLE, rf"loaded meta data with (?P<kvs>{_INT}) key-value pairs and "
                                          rf"(?P<tensors>{_INT}) tensors from (?P<path>.+?) \(version", _Reader.new_load),
    ("llama_model_loader: - type ", At.NEEDLE, rf"llama_model_loader: - type +(?P<type>\w+): +(?P<n>{_INT}) tensors",
     _Reader.type_count),
    ("buffer size = ", At.ANYWHERE, r"(?<!\S)(?P<device>\S+) +(?P<kind>model|KV|RS|output|compute|LoRA) buffer size = +"
                                    rf"(?P<mib>{_NUM}) MiB", _Reader.buffer),
    ("llm_load_tensors: ", At.NEEDLE, rf"llm_load_tensors: +(?P<device>\S+) (?P<kind>)buffer size = +(?P<mib>{_NUM}) MiB",
     _Reader.buffer),
    ("creating ", At.NEEDLE, rf"creating +(?P<which>non-SWA|SWA) KV cache, size = {_INT} cells", _Reader.window),
    ("using full-size SWA cache", At.NEEDLE, r"using full-size SWA cache", _Reader.swa_full),
    (": size = ", At.NEEDLE, rf": size = +(?P<mib>{_NUM}) MiB \( *(?P<cells>{_INT}) cells, +(?P<layers>{_INT}) layers, "
                             r"+(?P<seqs>[\d/]+ seqs[^)]*)\), (?P<parts>.*)$", _Reader.cache),
    ("KV self size", At.NEEDLE, rf"KV self size += +(?P<mib>{_NUM}) MiB, (?P<parts>.*)$", _Reader.old_cache),
    ("llama_kv_cache_init: kv_size = ", At.NEEDLE, rf"llama_kv_cache_init: kv_size = (?P<cells>{_INT}),",
     _Reader.old_kv_init),
    (" = ", At.ANYWHERE, r"(?<![\w.])(?:llama_context|llama_new_context_with_model|llama_init_from_model): +"
                         r"(?P<key>n_ctx|n_ctx_seq|n_ctx_per_seq|n_batch|n_ubatch|n_seq_max|n_outputs_max|flash_attn) += +"
                         r"(?P<value>\S+)\s*$", _Reader.setting),
    ("this can take a while", At.NEEDLE, r"this can take a while\.\.\. \((?:load_mode|mmap) = (?P<mode>[\w+]+)",
     _Reader.load_mode),
    ("offloaded ", At.NEEDLE, rf"offloaded (?P<n>{_INT})/(?P<of>{_INT}) layers to GPU", _Reader.offloaded),
    ("memory_breakdown_print: |", At.NEEDLE, r"memory_breakdown_print: \| +- (?P<name>[^|]*)\|(?P<cells>[-\d =+()]*)\|",
     _Reader.breakdown),
    ("repack: repack tensor ", At.NEEDLE, r"repack: repack tensor (?P<tensor>\S+) with", _Reader.repacked),
    ("build", At.ANYWHERE, rf"(?<!\w)build(?::| =)? (?P<number>{_INT}) \((?P<commit>[0-9a-f]{{6,40}})\)",
     _Reader.build_line),
    ("system_info: ", At.NEEDLE, rf"system_info: (?:n_threads = (?P<threads>{_INT}))?(?P<rest>.*)$", _Reader.system_info),
    ("CPU : ", At.START, r"[ \t]*(?P<threads>)(?P<rest>CPU : .*)$", _Reader.bare_features),
    ("loading draft model", At.NEEDLE, r"loading draft model", _Reader.draft_line),
    ("initializing, n_slots = ", At.NEEDLE, rf"initializing, n_slots = (?P<n>{_INT}), n_ctx_slot = {_INT}, "
                                            r"kv_unified = '(?P<unified>true|false)'", _Reader.slots_line),
    ("prompt cache is ", At.NEEDLE, rf"prompt cache is (?:(?P<off>disabled)|enabled, size limit: (?:(?P<none>no limit)|"
                                    rf"(?P<mib>{_INT}) MiB))", _Reader.cache_limit),
    (" - cache state: ", At.NEEDLE, rf" - cache state: {_INT} prompts, (?P<mib>{_NUM}) MiB", _Reader.cache_state),
    ("created context checkpoint ", At.ANYWHERE, rf"(?<!\w)id +(?P<slot>{_INT}) \| task {_INT} \| created context "
                                                 rf"checkpoint (?P<k>{_INT}) of {_INT} \([^()]*size = (?P<mib>{_NUM}) MiB\)",
     _Reader.checkpoint_made),
    ("load_hparams: model size:", At.NEEDLE, rf"load_hparams: model size: +(?P<mib>{_NUM}) MiB", _Reader.projector_size_line),
    ("reserve_compute_meta: ", At.NEEDLE, rf"reserve_compute_meta: +\S+ compute buffer size = +(?P<mib>{_NUM}) MiB",
     _Reader.projector_compute_line),
    ("context checkpoints ", At.NEEDLE, rf"context checkpoints (?:enabled|disabled)(?:, max = (?P<max>{_INT}), "
                                        rf"min spacing = (?P<step>{_INT}))?", _Reader.checkpoints_line),
    ("eval time = ", At.ANYWHERE, rf"(?<!\w)(?P<prompt>prompt )?eval time = +(?P<ms>{_NUM}) ms / +(?P<n>{_INT}) "
                                  r"(?:runs|tokens) +\( *[\d.]+ ms per token, +"
                                  rf"(?:(?P<tps_number>{_NUM})|inf|-?nan) tokens per second\)", _Reader.eval_line),
    ("Maximum resident set size (kbytes): ", At.START, rf"[ \t]*Maximum resident set size \(kbytes\): (?P<kb>{_INT})",
     _Reader.time_rss),
    ('"system_fingerprint":"b', At.NEEDLE, rf'"system_fingerprint":"b(?P<number>{_INT})-(?P<commit>[0-9a-f]{{6,40}})"',
     _Reader.build_line),
    ("eak", At.START, rf"[ \t]*(?i:peak[ _]rss)(?:[ _]bytes)?[ \t]*[:=][ \t]*(?P<value>{_NUM})[ \t]*(?P<unit>[A-Za-z]*)",
     _Reader.peak_line),
)
_COMPILED = tuple((needle, at, re.compile(pattern), handler) for needle, at, pattern, handler in RULES)


def _first_match(line: str) -> tuple[re.Match[str], Callable[[_Reader, re.Match[str]], None]] | None:
    """Rule 8: the first rule that reads `line`, with its match — one attempt per rule (at the needle, at the
    line's start, or a search whose starts are token starts)."""
    if len(line) > MAX_LINE_CHARS:
        return None
    for needle, at, pattern, handler in _COMPILED:
        if needle not in line:
            continue
        m = (pattern.match(line, line.find(needle)) if at is At.NEEDLE else pattern.match(line) if at is At.START
             else pattern.search(line))
        if m:
            return m, handler
    return None


def reads_line(line: str) -> bool:
    """Whether some rule reads `line` (Rule 7: the others are ignored, so a log keeps its meaning without them)."""
    found = _first_match(line)
    return found is not None and found[1] is not _Reader.ignore


def parse_llamacpp_log(text: str) -> LlamaCppLog:
    """Read `text` (a whole log) into records (Rules 1–7); raises `LlamaCppLogError` if it is not one."""
    reader = _Reader()
    for line in text.splitlines():
        found = _first_match(line)
        if found is not None:
            found[1](reader, found[0])
    if not reader.loads:
        raise LlamaCppLogError(NOT_A_LOG)
    return reader.freeze()
