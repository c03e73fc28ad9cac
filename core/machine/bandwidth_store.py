"""This machine's measured speed figures, measured once and kept: every command and the window read the same.

Rule 1: one small JSON record, `RECORD_NAME` in the app's data folder (`core.paths.data_dir()`):
        every RAM and compute measurement with its date, the load average while it ran and the
        cores it had (the newest MAX_MEASUREMENTS of each, and always the one in use), and one
        disk bandwidth per file system (the `st_dev` of the model files it was measured on).
Rule 2: the record belongs to the machine it was made on (`host_key`: a hash of the system's
        machine id, its host name, CPU architecture and count — containers built from one image
        share a machine id, not a host name): a record of another machine (a data folder shared
        over the network, a copied home) is not read. A record that is not a regular file, is
        larger than `FileKind.RECORD`'s cap, is not JSON or is of another format is no record (the figures are measured again); an entry whose fields are not of
        their type and physical band (`core.record_fields`, RATE_BANDS) is absent, and entries
        past MAX_ENTRIES are not read.
Rule 3: a measurement is busy when the load average while it ran was above its cores, or its
        figure is under FAR_BELOW × the best quiet one of its kind: a busy neighbour only ever
        makes a probe slower. The figure kept is the best quiet measurement; a busy one is kept
        in the list, flagged, and used only while no quiet one exists (said as provisional).
Rule 4: a figure missing from the record is measured when first needed and stored; nothing is
        measured again until asked (`hw --measure`, the window's "Measure again"), which adds a
        RAM and a compute measurement and forgets the disks (each is measured again on its next
        model file). `measure=False` runs no probe: the stored figures, else the assumed ones.
        A call that finds every figure it asks for stored loads no probe either (`bandwidth_probe`
        and psutil, ~15 ms of every command). `forget_record` goes back to nothing kept
        (`hw --reset-calibration`).
Rule 5: the record is written whole to a temporary file beside it, then renamed over it, so a
        reader never sees half a record (`core.safe_write.replace_atomically`); no number that is
        not finite is ever written (`allow_nan=False`).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from gguf_budget.core import paths, record_fields
from gguf_budget.core.errors import BudgetError, DamagedMachineRecord
from gguf_budget.core.regular_file import FileKind, is_missing, read_json
from gguf_budget.core.safe_write import replace_atomically
from gguf_budget.core.machine.bandwidth import Bandwidth, Bandwidths, BandwidthSource, ComputeRate
from gguf_budget.core.machine.load import MAX_CORES, MAX_LOAD, load_average, usable_cpus
from gguf_budget.core.vocab import TextEnum

RECORD_NAME = "machine-speed.json"
FORMAT = 2
TIERS = ("ram", "disk", "compute")
MAX_MEASUREMENTS = 16
FAR_BELOW = 0.7
"""A measurement under this share of the best quiet one of its kind ran beside something else (Rule 3)."""
RATE_BANDS = {"ram": (10**6, 10**14), "disk": (10**5, 10**13), "compute": (10**6, 10**17)}
"""Rule 2: bytes or FLOPs per second a probe of each kind can have measured (1 MB/s to 100 TB/s RAM)."""
MAX_ENTRIES = 8 * MAX_MEASUREMENTS
"""Rule 2: entries past this many are not read (a written record holds at most 2 × MAX_MEASUREMENTS + 2)."""
MAX_DETAIL = 500
MACHINE_ID_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")


def _system_machine_id() -> str:
    """The operating system's own id of this installation, '' where none can be read."""
    for name in MACHINE_ID_FILES:
        try:
            with open(name, "rb") as f:
                found = f.read(256).decode("ascii", errors="replace").strip()
        except OSError:
            continue
        if found:
            return found
    return ""


def host_key() -> str:
    """Rule 2: which machine a record or a run is of (hashed: the system's id is not shown or kept)."""
    raw = f"gguf-budget:{_system_machine_id()}:{platform.node()}:{platform.machine()}:{os.cpu_count() or 0}"
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


class Use(TextEnum):
    """Rule 3: what a measurement says about the machine; the value is the word texts and JSON show."""

    USED = "used"
    QUIET = "quiet, below the best"
    PROVISIONAL = "used until a quiet measurement (busy)"
    BUSY_LOAD = "busy: load above the cores"
    BUSY_SLOW = "busy: far below this machine's best"


@dataclass(frozen=True, kw_only=True)
class Measurement:
    """One RAM or compute probe: its figure, when, and how busy the machine was (Rule 1)."""

    tier: str
    rate: int
    detail: str
    measured_at: float
    load: float | None
    cores: int

    @property
    def loaded(self) -> bool:
        """Rule 3's first half: the load average was above the cores."""
        return self.load is not None and self.load > self.cores


def judged(measurements: tuple[Measurement, ...], tier: str) -> tuple[tuple[Measurement, Use], ...]:
    """Rule 3 for one kind, newest first: each measurement with what it says, exactly one USED or PROVISIONAL."""
    mine = sorted((m for m in measurements if m.tier == tier), key=lambda m: -m.measured_at)
    quiet = [m for m in mine if not m.loaded]
    best = max((m.rate for m in quiet), default=0)
    quiet = [m for m in quiet if m.rate >= FAR_BELOW * best]
    used = max(quiet, key=lambda m: m.rate, default=None)
    provisional = None if used is not None else max(mine, key=lambda m: m.rate, default=None)

    def word(m: Measurement) -> Use:
        if m is used:
            return Use.USED
        if m is provisional:
            return Use.PROVISIONAL
        if m.loaded:
            return Use.BUSY_LOAD
        return Use.QUIET if m in quiet else Use.BUSY_SLOW

    return tuple((m, word(m)) for m in mine)


@dataclass(frozen=True)
class MachineRecord:
    """What was measured here: RAM and compute measurements, and the disks by file system."""

    host: str
    measurements: tuple[Measurement, ...] = field(default_factory=tuple)
    disks: tuple[tuple[str, Bandwidth], ...] = field(default_factory=tuple)

    def kept(self, tier: str) -> Measurement | None:
        """Rule 3: the measurement a kind's figure is."""
        return next((m for m, q in judged(self.measurements, tier) if q in (Use.USED, Use.PROVISIONAL)), None)

    @property
    def ram(self) -> Bandwidth | None:
        m = self.kept("ram")
        return None if m is None else Bandwidth(m.rate, BandwidthSource.MEASURED, _said(m), m.measured_at)

    @property
    def compute(self) -> ComputeRate | None:
        m = self.kept("compute")
        return None if m is None else ComputeRate(m.rate, BandwidthSource.MEASURED, _said(m), m.measured_at)

    def disk(self, device: str | None) -> Bandwidth | None:
        return None if device is None else dict(self.disks).get(device)

    def adding(self, measurement: Measurement) -> MachineRecord:
        """Rule 1: the record with `measurement`, the oldest of its kind dropped past MAX_MEASUREMENTS (never the kept)."""
        every = replace(self, measurements=(measurement, *self.measurements))
        out: list[Measurement] = []
        for tier in ("ram", "compute"):
            kept = every.kept(tier)
            mine = sorted((m for m in every.measurements if m.tier == tier), key=lambda m: -m.measured_at)
            out += [m for i, m in enumerate(mine) if i < MAX_MEASUREMENTS or m == kept]
        return replace(self, measurements=tuple(out))


def _said(m: Measurement) -> str:
    """A kept figure's detail; a provisional one says so."""
    return m.detail if not m.loaded else f"{m.detail}; measured while busy, measure again when quiet"


def record_path(folder: str | Path | None = None) -> Path:
    return Path(folder if folder is not None else paths.data_dir()) / RECORD_NAME


def _disk_json(figure: Bandwidth) -> dict[str, Any]:
    return {"bytes_per_s": figure.bytes_per_s, "detail": figure.detail, "measured_at": figure.measured_at}


def _measurement_json(m: Measurement) -> dict[str, Any]:
    return {"tier": m.tier, "rate": m.rate, "detail": m.detail, "measured_at": m.measured_at, "load": m.load,
            "cores": m.cores}


def record_to_json(record: MachineRecord) -> dict[str, Any]:
    return {"format": FORMAT, "machine": record.host,
            "measurements": [_measurement_json(m) for m in record.measurements],
            "disks": {device: _disk_json(b) for device, b in record.disks}}


def _measurement(data: Any) -> Measurement:
    """Rule 2 for one entry; DamagedMachineRecord when any field is not of its type and band."""
    if not isinstance(data, dict) or data.get("tier") not in ("ram", "compute"):
        raise DamagedMachineRecord("not a measurement")
    low, high = RATE_BANDS[data["tier"]]
    e = DamagedMachineRecord
    return Measurement(tier=data["tier"], rate=record_fields.whole(data, "rate", low, high, e),
                       detail=record_fields.text(data, "detail", MAX_DETAIL, e),
                       measured_at=record_fields.number(data, "measured_at", 0, record_fields.LATEST_DATE, e),
                       load=record_fields.optional_number(data, "load", 0, MAX_LOAD, e),
                       cores=record_fields.whole(data, "cores", 1, MAX_CORES, e))


def _disk(data: Any) -> Bandwidth:
    if not isinstance(data, dict):
        raise DamagedMachineRecord("not a disk figure")
    e = DamagedMachineRecord
    low, high = RATE_BANDS["disk"]
    return Bandwidth(record_fields.whole(data, "bytes_per_s", low, high, e), BandwidthSource.MEASURED,
                     record_fields.text(data, "detail", MAX_DETAIL, e),
                     record_fields.number(data, "measured_at", 0, record_fields.LATEST_DATE, e))


def _device_disk(item: tuple[Any, Any]) -> tuple[str, Bandwidth]:
    """One file system's disk figure: its `st_dev` (digits) and the figure."""
    device, figure = item
    if not isinstance(device, str) or not device.isdigit() or len(device) > 40:
        raise DamagedMachineRecord("a disk's device must be its st_dev")
    return device, _disk(figure)


def _entries(items: Any, read: Callable[[Any], Any]) -> list[Any]:
    """Rule 2: the entries that read; one that does not is absent."""
    out = []
    for item in items:
        try:
            out.append(read(item))
        except DamagedMachineRecord:
            continue
    return out


def record_from_json(data: Any) -> MachineRecord:
    """Rule 2: a record back from its JSON; DamagedMachineRecord when the whole is not one."""
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("machine"), str):
        raise DamagedMachineRecord("not a machine-speed record")
    measurements, disks = data.get("measurements", []), data.get("disks", {})
    if not isinstance(measurements, list) or not isinstance(disks, dict):
        raise DamagedMachineRecord("measurements must be a list and disks an object")
    by_device = _entries(list(disks.items())[:MAX_ENTRIES], _device_disk)
    record = MachineRecord(host=data["machine"], disks=tuple(sorted(by_device)))
    for m in sorted(_entries(measurements[:MAX_ENTRIES], _measurement), key=lambda m: m.measured_at):
        record = record.adding(m)
    return record


def read_record(folder: str | Path | None = None) -> MachineRecord | None:
    """Rules 1–2: this machine's record, or None (none yet, another machine's, damaged)."""
    path = record_path(folder)
    try:
        if is_missing(str(path)):
            return None
        record = record_from_json(read_json(path, FileKind.RECORD))
    except (BudgetError, OSError, ValueError, RecursionError):
        return None
    return record if record.host == host_key() else None


def write_record(record: MachineRecord, folder: str | Path | None = None) -> str | None:
    """Rule 5; None when written, else why not in words (a read-only data folder keeps the figures for this run)."""
    path = record_path(folder)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_atomically(path, json.dumps(record_to_json(record), indent=2, allow_nan=False).encode())
    except OSError as e:
        return f"the measured figures could not be kept in {path.parent}: {e.strerror or e}"
    return None


def forget_record(folder: str | Path | None = None) -> str | None:
    """Rule 4: nothing measured is kept any more; None when done, else why not in words."""
    path = record_path(folder)
    try:
        path.unlink(missing_ok=True)
    except OSError as e:
        return f"{path} could not be removed: {e.strerror or e}"
    return None


def device_of(model_path: str | Path | None) -> str | None:
    """The file system a model file lies on (Rule 1's disk key); None when it cannot be told."""
    if model_path is None:
        return None
    try:
        return str(os.stat(model_path).st_dev)
    except OSError:
        return None


@dataclass(frozen=True)
class Probes:
    """The measurements and the load beside them (the real ones by default; tests pass their own at the boundary)."""

    ram: Callable[[], Bandwidth | str]
    compute: Callable[[], ComputeRate | str]
    disk: Callable[[str | Path], Bandwidth | str]
    load: Callable[[], float | None] = load_average
    cores: Callable[[], int] = usable_cpus

    @classmethod
    def real(cls) -> Probes:
        from gguf_budget.core.machine.bandwidth_probe import measure_compute, measure_disk, measure_ram

        return cls(measure_ram, measure_compute, measure_disk, load_average, usable_cpus)

    def measured(self, tier: str) -> Measurement | str:
        """One RAM or compute probe with the highest load average seen before and after it (Rule 3)."""
        before = self.load()
        figure = self.ram() if tier == "ram" else self.compute()
        if isinstance(figure, str):
            return figure
        after = self.load()
        loads = [x for x in (before, after) if x is not None]
        rate = figure.bytes_per_s if isinstance(figure, Bandwidth) else figure.flops_per_s
        low, high = RATE_BANDS[tier]
        if not low <= rate <= high:
            return f"the probe read {rate:,} a second, outside what a machine can do"
        return Measurement(tier=tier, rate=rate, detail=figure.detail[:MAX_DETAIL],
                           measured_at=figure.measured_at or 0.0, load=max(loads) if loads else None,
                           cores=min(max(self.cores(), 1), MAX_CORES))


def _measure_missing(record: MachineRecord, model_path: str | Path | None, tiers: tuple[str, ...],
                     probes: Probes | None, again: bool) -> tuple[MachineRecord, list[str]]:
    """What `tiers` lack, measured now; the real probes (psutil, ~15 ms to import) are made only when one runs."""
    notes: list[str] = []
    for tier in ("ram", "compute"):
        if tier in tiers and (again or record.kept(tier) is None):
            probes = probes or Probes.real()
            found = probes.measured(tier)
            if isinstance(found, str):
                notes.append(f"{'RAM' if tier == 'ram' else tier} not measured: {found}")
                continue
            record = record.adding(found)
            notes += _busy_note(record, found)
    device = device_of(model_path)
    if "disk" in tiers and record.disk(device) is None:
        disk: Bandwidth | str = "no model file to read"
        if model_path is not None and device is not None:
            disk = (probes or Probes.real()).disk(model_path)
        low, high = RATE_BANDS["disk"]
        if isinstance(disk, Bandwidth) and device is not None and low <= disk.bytes_per_s <= high:
            record = replace(record, disks=tuple(sorted({**dict(record.disks), device: disk}.items())))
        else:
            notes.append(f"DISK not measured: {disk if isinstance(disk, str) else 'a figure outside what a disk can do'}")
    return record, notes


def _busy_note(record: MachineRecord, found: Measurement) -> list[str]:
    """Rule 3 said: why a new measurement does not replace the figure in use (a note only when one is in use)."""
    word = dict(judged(record.measurements, found.tier)).get(found)
    what = "RAM bandwidth" if found.tier == "ram" else "compute rate"
    load = f"load average {found.load:.1f} on {found.cores} cores" if found.load is not None else "load unknown"
    if word in (Use.BUSY_LOAD, Use.BUSY_SLOW):
        return [f"the {what} just measured ({load}) is flagged busy ({word.value}) and not kept as this machine's"]
    return []  # a provisional figure says so in its own detail (`_said`)


def machine_bandwidths(model_path: str | Path | None, tiers: tuple[str, ...] = TIERS, *, measure: bool = True,
                       again: bool = False, folder: str | Path | None = None,
                       probes: Probes | None = None) -> tuple[Bandwidths, tuple[str, ...]]:
    """Rules 1–4: (this machine's figures for `tiers`, the stored ones or measured now; why some are assumed)."""
    stored = read_record(folder)
    record = stored or MachineRecord(host_key())
    if again:
        record = replace(record, disks=())
    notes: list[str] = []
    if measure:
        record, notes = _measure_missing(record, model_path, tiers, probes, again)
        if record != stored:
            failed = write_record(record, folder)
            notes += [failed] if failed else []
    out = Bandwidths()
    if "ram" in tiers and record.ram is not None:
        out = replace(out, ram=record.ram)
    if "compute" in tiers and record.compute is not None:
        out = replace(out, compute=record.compute)
    disk = record.disk(device_of(model_path))
    if "disk" in tiers and disk is not None:
        out = replace(out, disk=disk)
    return out, tuple(notes)
