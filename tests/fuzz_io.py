"""Structure-aware fuzzing of four surfaces a file brings in: a GGUF header, a llama.cpp log, the window's
settings file, and a stored evidence record — each input drawn from a seed (`random.Random`), so any
finding replays from its number.

Header: a real header-only GGUF (dense or MoE) whose fields were located by walking it — counts,
lengths, type tags, dims, offsets, strings — gets one to four mutations (a field set to an
interesting or random value, bits flipped, a cut, a region doubled or dropped, bytes inserted), then
is loaded, planned and fitted as the window would.

Log: a window of a recorded llama.cpp log (tests/data/llamacpp-logs) with one to eight mutations (a
number made 400 or 6,000 digits, nan, inf, a superscript; a run of spaces, letters or needles up to
past the line cap; a line repeated, dropped or shuffled; a line quoting a forged buffer; bytes that
are not UTF-8), written to a file, read like `evidence LOG` reads it, compared with its model and
printed as JSON (which must stay strict JSON) and as text.

Settings: the window's own settings file with one to five mutations (lists nested as `@Variant` up to
30,000 deep, `@Variant` garbage, other typed values, keys of other programs, lines past the cap, a
file past 1 MiB, quotes and backslashes, bytes that are not UTF-8, NULs), opened as the window
opens it (`user_settings`, then every value and the geometry restored, saved back, opened again —
a second repair is a finding).

Record: a stored record and its log in an evidence store, the record's JSON mutated (wrong types,
huge numbers, NaN and Infinity, names that lead out of the store, deep nesting, garbage, a FIFO, a
link to /dev/zero, a file past its cap) and its log too (missing, a FIFO, empty, garbage, past the
cap), then read back as the window and CLI read evidence, and shown.

`run(surface, seed, context)` returns an `Outcome` (`fuzz_net_facts`): `ok`, `one_line`,
`traceback`, `hang`, `over_limit`.
"""

from __future__ import annotations

import json
import os
import random
import struct
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from fuzz_net_facts import Outcome, classify
from gguf_factory import write_gguf
from hostile_headers import BASE, INTERESTING_INTS, MOE_BASE
from recorded_models import LOGS, model_of, write_recorded_models

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, FitRequest, estimate_fit, hypothetical_machine
from gguf_budget.core.evidence.compare import compare
from gguf_budget.core.evidence.llamacpp_log import MAX_LINE_CHARS, parse_llamacpp_log
from gguf_budget.core.gguf.fingerprint import header_fingerprint
from gguf_budget.core.measure.command import MeasureSettings
from gguf_budget.core.measure.record import EvidenceRecord, Origin, record_to_json
from gguf_budget.core.measure.session import stored_evidence
from gguf_budget.core.measure.store import EvidenceStore
from gguf_budget.core.model.loader import load_model
from gguf_budget.core.plan.search import plan_memory
from gguf_budget.core.regular_file import FileKind, read_text
from gguf_budget.core.views.evidence_report import evidence_dict as comparison_dict, evidence_text as comparison_text
from gguf_budget.core.views.evidence_view import evidence_claim, evidence_dict, evidence_text, measured_view

SURFACES = ("header", "log", "settings", "record")
GIB = 1 << 30
MACHINE = hypothetical_machine(host_available=64 * GIB, gpu_count=2, gpu_total=24 * GIB)
HUGE, LARGE = "9" * 6000, "9" * 400
ODD_NUMBERS = (HUGE, LARGE, "nan", "-nan", "inf", "-1", "0", "1e308", "²", "٣", "1.2.3", "", "0x10", "18446744073709551616")


def strict_json(payload: object) -> None:
    """JSON as the CLI prints it must be strict JSON: NaN or Infinity is a finding."""
    json.dumps(payload, allow_nan=False)


@dataclass
class Context:
    """What a worker makes once: base files, the recorded models, a Qt application for the settings surface."""

    folder: Path
    headers: list[tuple[bytes, list[tuple[int, int, str]]]] = field(default_factory=list)
    logs: list[tuple[str, list[str]]] = field(default_factory=list)
    models: dict[str, object] = field(default_factory=dict)
    settings_text: str = ""
    record_model: str = ""
    good_log: str = ""

    @classmethod
    def make(cls, folder: Path, surfaces: tuple[str, ...] = SURFACES) -> Context:
        c = cls(folder)
        if "header" in surfaces:
            for i, desc in enumerate((BASE, MOE_BASE, replace(BASE, name="tied", tied=True, n_layer=2))):
                data = write_gguf(folder / f"base{i}.gguf", desc, "header_only")[0].read_bytes()
                c.headers.append((data, gguf_fields(data)))
        if "log" in surfaces or "record" in surfaces:
            c.models = {k: load_model(p) for k, p in write_recorded_models(folder / "models").items()}
            for path in sorted(LOGS.glob("*.log")):
                c.logs.append((path.name, path.read_text(encoding="utf-8", errors="replace").splitlines()))
            c.good_log = (LOGS / "smollm2-135m-instruct-q4_1_ctx2048_f16.log").read_text()
            c.record_model = str(folder / "models" / "smollm2-135m-instruct-q4_1.gguf")
        if "settings" in surfaces:
            c.settings_text = _app_settings_text(folder)
        return c


# --- header ---------------------------------------------------------------------------------------

_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def gguf_fields(data: bytes) -> list[tuple[int, int, str]]:
    """(offset, size, kind) of every count, length, type tag, dim and offset of a valid GGUF v3 header."""
    found: list[tuple[int, int, str]] = [(4, 4, "version"), (8, 8, "count"), (16, 8, "count")]
    n_tensors, n_kv = struct.unpack_from("<QQ", data, 8)
    at = 24

    def string(kind: str) -> None:
        nonlocal at
        found.append((at, 8, "length"))
        n = struct.unpack_from("<Q", data, at)[0]
        found.append((at + 8, n, kind))
        at += 8 + n

    def value(vtype: int) -> None:
        nonlocal at
        if vtype == 8:
            string("string")
        elif vtype == 9:
            found.append((at, 4, "type"))
            etype, n = struct.unpack_from("<IQ", data, at)
            found.append((at + 4, 8, "count"))
            at += 12
            for _ in range(n):
                value(etype)
        else:
            found.append((at, _SIZES[vtype], "scalar"))
            at += _SIZES[vtype]

    for _ in range(n_kv):
        string("key")
        found.append((at, 4, "type"))
        vtype = struct.unpack_from("<I", data, at)[0]
        at += 4
        value(vtype)
    for _ in range(n_tensors):
        string("name")
        found.append((at, 4, "count"))
        n_dims = struct.unpack_from("<I", data, at)[0]
        at += 4
        for _ in range(n_dims):
            found.append((at, 8, "dim"))
            at += 8
        found.append((at, 4, "type"))
        found.append((at + 4, 8, "offset"))
        at += 12
    return found


def _field_value(rng: random.Random, size: int) -> bytes:
    pick = rng.random()
    if pick < 0.6:
        n = rng.choice(INTERESTING_INTS)
    elif pick < 0.8:
        n = rng.getrandbits(8 * size)
    else:
        n = rng.randrange(0, 64)
    return (n % (1 << (8 * size))).to_bytes(size, "little")


def mutate_header(rng: random.Random, data: bytes, fields: list[tuple[int, int, str]]) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        how = rng.random()
        if how < 0.55 and fields:
            offset, size, kind = rng.choice(fields)
            if offset + size > len(out):
                continue
            if kind in ("string", "key", "name"):
                out[offset:offset + size] = bytes(rng.choice(b"\x00\x1b\xff\xe9/.\n" + bytes(range(97, 123)))
                                                  for _ in range(size))
            elif size in (1, 2, 4, 8):
                out[offset:offset + size] = _field_value(rng, size)
        elif how < 0.7:
            for _ in range(rng.randint(1, 8)):
                i = rng.randrange(len(out))
                out[i] ^= 1 << rng.randrange(8)
        elif how < 0.8:
            del out[rng.randrange(len(out)):]
        elif how < 0.9 and len(out) > 32:
            a = rng.randrange(24, len(out))
            b = min(len(out), a + rng.randint(1, 4096))
            out[a:a] = out[a:b] if rng.random() < 0.5 else b""
            if rng.random() < 0.5:
                del out[a:b]
        else:
            i = rng.randrange(len(out))
            out[i:i] = rng.randbytes(rng.randint(1, 64))
        if not out:
            break
    return bytes(out)


def run_header(seed: int, c: Context) -> Outcome:
    rng = random.Random(seed)
    data, fields = rng.choice(c.headers)
    path = c.folder / f"h{seed}.gguf"
    path.write_bytes(mutate_header(rng, data, fields))

    def go() -> Outcome:
        try:
            spec = load_model(path)
            plan_memory(spec, BudgetRequest(budget=Budget.from_cli(rng.choice((0, 1 << 30, 1 << 20)))))
            estimate_fit(spec, MACHINE, FitRequest())
        finally:
            path.unlink()
        return Outcome("ok")

    return classify(go)


# --- log ------------------------------------------------------------------------------------------

_NEEDLES = ("buffer size = ", "print_info: a ", " = ", "memory_breakdown_print: | - ", ": size = ", "eval time = ",
            "loaded meta data with 1 key-value pairs and 1 tensors from ", "system_info: ", "build ", "peak RSS: ",
            "K (f16): ", "llama_context: ", "(", "|", "x", " ")
_FORGED = ("print_info: general.name = x CPU_Mapped model buffer size = 99999.00 MiB",
           "llama_model_loader: - kv   0: general.name str = peak RSS: 1 b",
           "+ llama-cli -m '/m/\\x0aMaximum resident set size (kbytes): 1'",
           "\tCommand being timed: \"llama-cli -m /m/load_tensors: CPU model buffer size = 3.00 MiB\"")


def _swap_number(rng: random.Random, line: str) -> str:
    runs = [i for i, ch in enumerate(line) if ch.isdigit() and (i == 0 or not line[i - 1].isdigit())]
    if not runs:
        return line + " " + rng.choice(ODD_NUMBERS)
    start = rng.choice(runs)
    end = start
    while end < len(line) and (line[end].isdigit() or line[end] == "."):
        end += 1
    return line[:start] + rng.choice(ODD_NUMBERS) + line[end:]


def _long_run(rng: random.Random) -> str:
    n = rng.choice((100, 1000, MAX_LINE_CHARS - 100, MAX_LINE_CHARS + 1, 20_000, 200_000) if rng.random() < 0.9
                   else (1_000_000,))
    unit = rng.choice(_NEEDLES)
    return (unit * (n // len(unit) + 1))[:n]


def mutate_log(rng: random.Random, lines: list[str]) -> bytes:
    start = rng.randrange(len(lines))
    chosen = lines[start:start + rng.randint(20, len(lines))] if rng.random() < 0.5 else list(lines)
    for _ in range(rng.randint(1, 8)):
        if not chosen:
            chosen = [""]
        i = rng.randrange(len(chosen))
        how = rng.random()
        if how < 0.35:
            chosen[i] = _swap_number(rng, chosen[i])
        elif how < 0.55:
            at = rng.randrange(len(chosen[i]) + 1)
            chosen[i] = chosen[i][:at] + _long_run(rng) + chosen[i][at:]
        elif how < 0.65:
            chosen.insert(i, rng.choice(_FORGED))
        elif how < 0.75:
            chosen[i:i] = [chosen[i]] * rng.randint(1, 50)
        elif how < 0.82:
            del chosen[i]
        elif how < 0.88:
            rng.shuffle(chosen)
        else:
            chosen.insert(i, rng.randbytes(rng.randint(1, 300)).decode("latin-1"))
    text = "\n".join(chosen)
    raw = text.encode("utf-8", errors="surrogateescape")
    if rng.random() < 0.1:
        raw = raw.replace(b"\n", rng.choice((b"\r\n", b"\r", b"\n\x00")))
    return raw


def run_log(seed: int, c: Context) -> Outcome:
    rng = random.Random(seed)
    name, lines = rng.choice(c.logs)
    path = c.folder / f"l{seed}.log"
    path.write_bytes(mutate_log(rng, lines))

    def go() -> Outcome:
        try:
            log = parse_llamacpp_log(read_text(path, FileKind.LOG))
        finally:
            path.unlink()
        comparison = compare(log, c.models[model_of(name)])  # type: ignore[arg-type]
        strict_json(comparison_dict(comparison, name, "m.gguf"))
        comparison_text(comparison, name, "m.gguf")
        return Outcome("ok")

    return classify(go)


# --- settings -------------------------------------------------------------------------------------

def _app_settings_text(folder: Path) -> str:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication, QWidget

    from gguf_budget.core.explorer.session import ModelChoice, ModelMemory
    from gguf_budget.core.plan.budget import Budget
    from gguf_budget.gui.qt.settings import ExplorerSettings, save_geometry, save_settings

    _qt_app = QApplication.instance() or QApplication([])  # noqa: F841 - lives as long as the worker
    path = folder / "app.conf"
    store = QSettings(str(path), QSettings.Format.IniFormat)
    save_settings(store, ExplorerSettings(head_mode="stream", ram_bw=20 << 30,
                                          recent=("/m/a.gguf", '/m/b, "c".gguf', "/m/é.gguf")),
                  ModelMemory({"a" * 64: ModelChoice(Budget.of(3 << 30), 8192, 32768)}))
    save_geometry(store, QWidget())
    store.setValue("measure/llama_path", "/opt/llama")
    store.setValue("dialogs/model", "/m")
    store.sync()
    return path.read_text(encoding="utf-8")


def _nested_list(depth: int) -> str:
    return "@Variant(" + r"\0\0\0\t\0\0\0\x1" * depth + r"\0\0\0\x2\0\0\0\x1" + ")"


_SETTING_VALUES: tuple[Callable[[random.Random], str], ...] = (
    lambda r: _nested_list(r.choice((1, 10, 1000, 20_000, 30_000))),
    lambda r: "@Variant(" + "".join(f"\\x{b:x}" for b in r.randbytes(r.randint(0, 40))) + ")",
    lambda r: r.choice(("@Rect(1 2 3 4)", "@Size(9 9)", "@Point(1 1)", "@ByteArray(", "@DateTime(\\0)", "@Invalid()",
                        "@@escaped", "@")),
    lambda r: "@ByteArray(" + "".join(f"\\x{b:x}" for b in r.randbytes(r.randint(0, 5000))) + ")",
    lambda r: r.choice(ODD_NUMBERS),
    lambda r: '"' * r.randint(1, 9) + "\\" * r.randint(0, 9) + ",,," + "x" * r.randint(0, 300_000),
    lambda r: ", ".join(f"/m/{i}.gguf" for i in range(r.randint(0, 3000))),
    lambda r: r.randbytes(r.randint(1, 100)).decode("latin-1"),
)
_KEYS = ("a" * 64 + ".budget", "a" * 64 + ".ctx", "x.ctx_cap", "recent", "head_mode", "kv_type", "n_buffers", "geometry", "llama_path",
         "model", "unknown_key", "x y", "%41", "")
_GROUPS = ("explorer", "window", "measure", "dialogs", "General", "other", "explorer/sub", "models", "")


def mutate_settings(rng: random.Random, text: str) -> bytes:
    lines = text.splitlines()
    for _ in range(rng.randint(1, 5)):
        how = rng.random()
        i = rng.randrange(len(lines) + 1)
        if how < 0.45:
            lines.insert(i, f"{rng.choice(_KEYS)}={rng.choice(_SETTING_VALUES)(rng)}")
        elif how < 0.6:
            lines.insert(i, f"[{rng.choice(_GROUPS)}]")
        elif how < 0.7 and lines:
            j = rng.randrange(len(lines))
            key = lines[j].partition("=")[0]
            lines[j] = f"{key}={rng.choice(_SETTING_VALUES)(rng)}"
        elif how < 0.75:
            lines.extend(f"junk{k}=x" for k in range(120_000))
        elif how < 0.85 and lines:
            del lines[rng.randrange(len(lines))]
        else:
            lines.insert(i, rng.randbytes(rng.randint(1, 200)).decode("latin-1"))
    raw = "\n".join(lines).encode("utf-8", errors="surrogateescape")
    if rng.random() < 0.1:
        raw = raw.replace(b"\n", rng.choice((b"\r\n", b"\r", b"\x00\n")))
    return raw


def run_settings(seed: int, c: Context) -> Outcome:
    from PySide6.QtWidgets import QWidget

    from gguf_budget.gui.qt.settings import (
        REFUSED_SUFFIX, load_memory, load_settings, restore_geometry, save_settings, user_settings,
    )

    rng = random.Random(seed)
    folder = c.folder / f"s{seed}"
    folder.mkdir()
    path = folder / "gguf-budget.conf"
    path.write_bytes(mutate_settings(rng, c.settings_text))

    def go() -> Outcome:
        store = user_settings(path)
        loaded, memory = load_settings(store), load_memory(store)
        restore_geometry(store, QWidget())
        save_settings(store, loaded, memory)
        store.sync()
        del store
        aside = path.with_name(path.name + REFUSED_SUFFIX)
        before = aside.stat().st_mtime_ns if aside.exists() else None
        again = user_settings(path)
        load_settings(again), load_memory(again)
        after = aside.stat().st_mtime_ns if aside.exists() else None
        if before != after:
            return Outcome("traceback", "the file was repaired a second time")
        return Outcome("ok")

    try:
        return classify(go)
    finally:
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()


# --- record ---------------------------------------------------------------------------------------

_JUNK_VALUES: tuple[object, ...] = (None, True, -1, 0, 10**400, 1e308, "", "x" * 5000, [], {}, [[[[]]]], "../../etc",
                                    "/etc/passwd", "..", ".", "a\x00b", "\udcff\udcfe", "20250101-000000-imported.log",
                                    {"ctx": 10**30, "gpu_layers": -5, "kv_type": "f16\n"}, ["-m", 3], ["a"] * 10_000)
_RECORD_KEYS = ("model_key", "model_path", "origin", "recorded_at", "log_name", "source", "command", "settings",
                "peak_rss_polled", "seconds", "extra")
_RAW = ("NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1" * 5000)


def _record_bytes(rng: random.Random, record: dict[str, object]) -> bytes:
    how = rng.random()
    data = dict(record)
    for _ in range(rng.randint(1, 4)):
        key = rng.choice(_RECORD_KEYS)
        if rng.random() < 0.15:
            data.pop(key, None)
        else:
            data[key] = rng.choice(_JUNK_VALUES)
    text = json.dumps(data, ensure_ascii=rng.random() < 0.5)
    if how < 0.15:
        key = rng.choice(("recorded_at", "seconds", "peak_rss_polled"))
        text = json.dumps({**record}).replace(f'"{key}": ', f'"{key}": {rng.choice(_RAW)}, "_": ', 1)
    elif how < 0.22:
        text = "[" * rng.choice((100, 10_000, 200_000))
    elif how < 0.3:
        text = text[:rng.randrange(len(text) + 1)]
    raw = text.encode("utf-8", errors="surrogateescape")
    if rng.random() < 0.05:
        raw = b"\xef\xbb\xbf" + raw if rng.random() < 0.5 else raw.decode("utf-8", "replace").encode("utf-16")
    return raw


def _place(rng: random.Random, path: Path, raw: bytes, cap: int) -> None:
    """The file as bytes, or as something else where a file should be."""
    how = rng.random()
    if how < 0.05:
        os.mkfifo(path)
    elif how < 0.1:
        path.symlink_to("/dev/zero")
    elif how < 0.13:
        with open(path, "wb") as f:
            f.truncate(cap + 1)
    elif how < 0.16:
        path.mkdir()
    else:
        path.write_bytes(raw)


def run_record(seed: int, c: Context) -> Outcome:
    rng = random.Random(seed)
    root = c.folder / f"r{seed}"
    key = header_fingerprint(c.record_model)
    folder = root / "evidence" / key
    folder.mkdir(parents=True)
    for i in range(rng.randint(1, 3)):
        stem = f"20250101-00000{i}-{rng.choice(('imported', 'measured'))}"
        good = EvidenceRecord(model_key=key, model_path=c.record_model, origin=Origin.IMPORTED,
                              recorded_at=1_700_000_000.0 + i, log_name=f"{stem}.log", source="fuzz",
                              command=("llama-cli", "-m", "m.gguf"), settings=MeasureSettings(2048, 0),
                              peak_rss_polled=123_456_789, seconds=1.5)
        record = record_to_json(good)
        raw = _record_bytes(rng, record) if rng.random() < 0.8 else json.dumps(record).encode()
        _place(rng, folder / f"{stem}.json", raw, FileKind.RECORD.cap)
        log_raw = mutate_log(rng, c.good_log.splitlines()) if rng.random() < 0.4 else c.good_log.encode()
        if rng.random() < 0.9:
            _place(rng, folder / f"{stem}.log", log_raw, FileKind.LOG.cap)

    def go() -> Outcome:
        store = EvidenceStore(root)
        for evidence in stored_evidence(c.record_model, store):
            strict_json(evidence_dict(evidence, str(store.log_path(evidence.record))))
            evidence_text(evidence, "log")
            evidence_claim(evidence)
            measured_view(evidence)
        return Outcome("ok")

    try:
        return classify(go)
    finally:
        import shutil

        shutil.rmtree(root)


RUNS: dict[str, Callable[[int, Context], Outcome]] = {
    "header": run_header, "log": run_log, "settings": run_settings, "record": run_record,
}
