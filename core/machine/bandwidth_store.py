"""This machine's measured speed figures, measured once and kept: every command and the window read the same.

Rule 1: one small JSON record, `RECORD_NAME` in the app's data folder (`core.paths.data_dir()`):
        the RAM bandwidth and the compute rate with their dates, and one disk bandwidth per
        file system (the `st_dev` of the model files it was measured on).
Rule 2: the record belongs to the machine it was made on (`host_key`: host name and CPU count):
        a record of another machine (a data folder shared over the network, a copied home) is
        not read. A record that is not a regular file, is larger than MAX_RECORD_BYTES, is not
        JSON or holds a figure that is not one is no record: the figures are measured again
        (`core.regular_file.read_json`, the cap of `FileKind.RECORD`).
Rule 3: a figure missing from the record is measured when first needed and stored; nothing is
        measured again until asked (`hw --measure`, the window's "Measure again"), which replaces
        RAM and compute and forgets the disks (each is measured again on its next model file).
        `measure=False` runs no probe: the stored figures, else the assumed ones.
Rule 4: the record is written whole to a temporary file beside it, then renamed over it, so a
        reader never sees half a record (`core.safe_write.replace_atomically`).
"""

from __future__ import annotations

import json
import os
import platform
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from gguf_budget.core import paths
from gguf_budget.core.errors import BudgetError, DamagedMachineRecord
from gguf_budget.core.regular_file import FileKind, is_missing, read_json
from gguf_budget.core.safe_write import replace_atomically
from gguf_budget.core.machine.bandwidth import Bandwidth, Bandwidths, BandwidthSource, ComputeRate

RECORD_NAME = "machine-speed.json"
FORMAT = 1
TIERS = ("ram", "disk", "compute")


def host_key() -> str:
    """Rule 2: which machine a record is of."""
    return f"{platform.node()}/{os.cpu_count() or 0} CPUs"


@dataclass(frozen=True)
class MachineRecord:
    """What was measured here: RAM, compute, and the disks by file system."""

    host: str
    ram: Bandwidth | None = None
    compute: ComputeRate | None = None
    disks: tuple[tuple[str, Bandwidth], ...] = field(default_factory=tuple)

    def disk(self, device: str | None) -> Bandwidth | None:
        return None if device is None else dict(self.disks).get(device)


def record_path(folder: str | Path | None = None) -> Path:
    return Path(folder if folder is not None else paths.data_dir()) / RECORD_NAME


def _bandwidth(data: Any) -> Bandwidth:
    return Bandwidth(data["bytes_per_s"], BandwidthSource.MEASURED, str(data["detail"]), float(data["measured_at"]))


def _compute(data: Any) -> ComputeRate:
    return ComputeRate(data["flops_per_s"], BandwidthSource.MEASURED, str(data["detail"]), float(data["measured_at"]))


def _figure_json(figure: Bandwidth | ComputeRate) -> dict[str, Any]:
    rate = figure.bytes_per_s if isinstance(figure, Bandwidth) else figure.flops_per_s
    key = "bytes_per_s" if isinstance(figure, Bandwidth) else "flops_per_s"
    return {key: rate, "detail": figure.detail, "measured_at": figure.measured_at}


def record_to_json(record: MachineRecord) -> dict[str, Any]:
    return {
        "format": FORMAT, "host": record.host,
        "ram": None if record.ram is None else _figure_json(record.ram),
        "compute": None if record.compute is None else _figure_json(record.compute),
        "disks": {device: _figure_json(b) for device, b in record.disks},
    }


def record_from_json(data: Any) -> MachineRecord:
    """A record back from its JSON; DamagedMachineRecord, a RequestError, KeyError or TypeError when not one (Rule 2)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("host"), str):
        raise DamagedMachineRecord("not a machine-speed record")
    disks = data.get("disks", {})
    if not isinstance(disks, dict):
        raise DamagedMachineRecord("disks must be an object")
    return MachineRecord(
        host=data["host"],
        ram=None if data.get("ram") is None else _bandwidth(data["ram"]),
        compute=None if data.get("compute") is None else _compute(data["compute"]),
        disks=tuple(sorted((str(k), _bandwidth(v)) for k, v in disks.items())),
    )


def read_record(folder: str | Path | None = None) -> MachineRecord | None:
    """Rules 1–2: this machine's record, or None (none yet, another machine's, damaged)."""
    path = record_path(folder)
    try:
        if is_missing(str(path)):
            return None
        record = record_from_json(read_json(path, FileKind.RECORD))
    except (BudgetError, OSError, ValueError, KeyError, TypeError):
        return None
    return record if record.host == host_key() else None


def write_record(record: MachineRecord, folder: str | Path | None = None) -> str | None:
    """Rule 4; None when written, else why not in words (a read-only data folder keeps the figures for this run)."""
    path = record_path(folder)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_atomically(path, json.dumps(record_to_json(record), indent=2).encode())
    except OSError as e:
        return f"the measured figures could not be kept in {path.parent}: {e.strerror or e}"
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
    """The measurements (the real ones by default; tests pass their own at the boundary)."""

    ram: Callable[[], Bandwidth | str]
    compute: Callable[[], ComputeRate | str]
    disk: Callable[[str | Path], Bandwidth | str]

    @classmethod
    def real(cls) -> Probes:
        from gguf_budget.core.machine.bandwidth_probe import measure_compute, measure_disk, measure_ram

        return cls(measure_ram, measure_compute, measure_disk)


def _measure_missing(record: MachineRecord, model_path: str | Path | None, tiers: tuple[str, ...],
                     probes: Probes) -> tuple[MachineRecord, list[str]]:
    notes: list[str] = []
    if "ram" in tiers and record.ram is None:
        ram = probes.ram()
        record = replace(record, ram=ram) if isinstance(ram, Bandwidth) else record
        notes += [] if isinstance(ram, Bandwidth) else [f"RAM not measured: {ram}"]
    if "compute" in tiers and record.compute is None:
        compute = probes.compute()
        record = replace(record, compute=compute) if isinstance(compute, ComputeRate) else record
        notes += [] if isinstance(compute, ComputeRate) else [f"compute not measured: {compute}"]
    device = device_of(model_path)
    if "disk" in tiers and record.disk(device) is None:
        disk = probes.disk(model_path) if model_path is not None and device is not None else "no model file to read"
        if isinstance(disk, Bandwidth) and device is not None:
            record = replace(record, disks=tuple(sorted({**dict(record.disks), device: disk}.items())))
        else:
            notes.append(f"DISK not measured: {disk}")
    return record, notes


def machine_bandwidths(model_path: str | Path | None, tiers: tuple[str, ...] = TIERS, *, measure: bool = True,
                       again: bool = False, folder: str | Path | None = None,
                       probes: Probes | None = None) -> tuple[Bandwidths, tuple[str, ...]]:
    """Rules 1–4: (this machine's figures for `tiers`, the stored ones or measured now; why some are assumed)."""
    stored = None if again else read_record(folder)
    record = stored or MachineRecord(host_key())
    notes: list[str] = []
    if measure:
        record, notes = _measure_missing(record, model_path, tiers, probes or Probes.real())
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
