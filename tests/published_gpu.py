"""GPU loads people published with llama.cpp's own buffer lines (tests/data/published-gpu), read back for the tests.

Each fixture folder holds `run.log` (the build line, the device line, the type counts and model lines, every buffer
line, timestamps stripped) and `meta.json`: the source URL, the build, the command as it was run, the same load as
llama.cpp 0c1e570 reads it (`command_0c1e570`), the GPU backend and the GPUs' memory as the log printed it, the
model's shape (`gguf_factory.ArchDesc` fields) and, per buffer, where the build's rule differs from 0c1e570's (with
the llama.cpp PR that changed it).

Rule 1: a printed buffer has a role — GPU weights, host weights (`CPU_Mapped`), repacked host weights, KV on a GPU or
        the host, the output buffer, a GPU's compute buffer, the host's compute buffer — and is compared by role, so
        a build's older names (Metal's `Metal_Mapped`) compare with 0c1e570's.
Rule 2: the estimate is made the way `fit --command` makes it: the command through the llama-words reader, asked of
        a state holding the skeleton and the machine, then the full load (`estimate_fit`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gguf.constants import GGMLQuantizationType as T
from gguf_factory import ArchDesc, tensor_plan, write_gguf

from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.explorer.llama_question import ask
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.llama_words.reader import read_llama_args, split_command
from gguf_budget.core.machine.gpu import GpuInfo, GpuMemory, Vendor
from gguf_budget.core.machine.snapshot import hypothetical_machine, what_if
from gguf_budget.core.model.loader import load_model

DATA = Path(__file__).parent / "data" / "published-gpu"
MiB = 1024 * 1024
HOST_RAM = 64 * 1024 * MiB
VENDOR = {"cuda": Vendor.NVIDIA, "rocm": Vendor.AMD, "metal": Vendor.APPLE}
HOST_COMPUTE = frozenset({"CPU", "CUDA_Host", "ROCm_Host", "Vulkan_Host", "SYCL_Host"})
REPACK = frozenset({"CPU_AARCH64", "CPU_REPACK"})
ROLES = ("gpu weights", "host weights", "repack", "gpu KV", "host KV", "output", "gpu compute", "host compute")


@dataclass(frozen=True)
class Published:
    """One fixture: its folder name, its metadata and its log's text."""

    name: str
    meta: dict[str, Any]
    log: str

    def desc(self) -> ArchDesc:
        """The skeleton: `model`'s ArchDesc fields, with ggml type names (and `layer_mix`'s layers as text) from JSON."""
        m = dict(self.meta["model"])
        for key in ("weight_type", "output_type", "embd_type"):
            if key in m:
                m[key] = T[m[key]]
        m["mix"] = {role: T[t] for role, t in m.get("mix", {}).items()}
        m["layer_mix"] = {int(il): {role: T[t] for role, t in roles.items()}
                          for il, roles in m.get("layer_mix", {}).items()}
        return ArchDesc(**m)

    def type_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for _, _, ggml_type in tensor_plan(self.desc()):
            key = ggml_type.name.lower().replace("_k", "_K")
            counts[key] = counts.get(key, 0) + 1
        return counts


def fixtures() -> tuple[Published, ...]:
    return tuple(Published(d.name, json.loads((d / "meta.json").read_text()), (d / "run.log").read_text())
                 for d in sorted(DATA.iterdir()) if d.is_dir())


def role(kind: str, device: str) -> str:
    """Rule 1."""
    host = device.startswith("CPU") or device in HOST_COMPUTE
    if kind == "model":
        return "repack" if device in REPACK else "host weights" if host else "gpu weights"
    if kind == "compute":
        return "host compute" if host else "gpu compute"
    if kind == "KV":
        return "host KV" if host else "gpu KV"
    return kind


def printed(p: Published) -> dict[str, int]:
    """Role → bytes as the log printed them (one GPU in every fixture, so a role is one buffer)."""
    load = parse_llamacpp_log(p.log).loads[-1]
    return {role(b.kind.value, b.device): b.nbytes for b in load.buffers}


def predicted(p: Published, folder: Path) -> dict[str, int]:
    """Rule 2: the same roles from the estimate."""
    spec = load_model(write_gguf(folder / f"{p.name}.gguf", p.desc(), "header_only")[0])
    vendor = VENDOR[p.meta["backend"]]
    gpus = tuple(GpuInfo(index=i, name=g["name"], total=g["total_mib"] * MiB, free=g["free_mib"] * MiB, used=None,
                         vendor=vendor, memory=GpuMemory.UNIFIED if vendor is Vendor.APPLE else GpuMemory.VRAM,
                         reader="hypothetical")
                 for i, g in enumerate(p.meta["gpus"]))
    machine = what_if(hypothetical_machine(HOST_RAM), gpus=gpus)
    question = ask(read_llama_args(split_command(p.meta["command_0c1e570"])), ExplorerState(model=spec, machine=machine),
                   spec)
    e = estimate_fit(spec, machine, question.state.fit_request(question.state.ctx))
    assert e.memory is not None
    host, *devices = e.memory.devices
    out = {"host weights": host.mapped_weights, "repack": host.repack, "host KV": host.kv or 0,
           "output": host.output + sum(d.output for d in devices), "host compute": host.compute or 0}
    for d in devices:
        out |= {"gpu weights": d.loaded_weights + d.mapped_weights, "gpu KV": d.kv or 0, "gpu compute": d.compute or 0}
    return out
