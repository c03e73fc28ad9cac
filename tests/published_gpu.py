"""GPU loads people published with llama.cpp's own buffer lines (tests/data/published-gpu), read back for the tests.

Each fixture folder holds `run.log` (the build line, the device line, the type counts and model lines, every buffer
line, timestamps stripped) and `meta.json`: the source URL, the build, the command as it was run, the same load as
llama.cpp 0c1e570 reads it (`command_0c1e570`), the GPU backend (and the GPUs' maker where the backend is not their
usual one: Vulkan), the GPUs' memory as the log printed it, the model's shape (`gguf_factory.ArchDesc` fields, a
catalogue entry, or a catalogue shape at a published quantization) and, per buffer, where the build's rule differs
from 0c1e570's (with the llama.cpp PR that changed it).

Rule 1: a printed buffer has a role — GPU weights, host weights (`CPU_Mapped`), repacked host weights, KV on a GPU or
        the host, the output buffer, a GPU's compute buffer, the host's compute buffer — and is compared by role, so
        a build's older names (Metal's `Metal_Mapped`) compare with 0c1e570's.
Rule 2: the estimate is made the way `fit --command` makes it: the command through the llama-words reader, asked of
        a state holding the skeleton and the machine, then the full load (`estimate_fit`).
Rule 3: a build older than 0c1e570 allocated other graph inputs in the host compute buffer (`meta["host_inputs"]`):
        no row-index inputs of `ggml_set_rows` (PR 14285: 8 bytes per token for K, and per V element of a token
        without flash attention), no float embeddings input (PR 18550: n_embd × 4 bytes per token), and an f32
        flash-attention mask where 0c1e570's is f16 (PR 23764: 2 more bytes per cell and token). `host_under_build`
        re-prices 0c1e570's host buffer by those inputs, read off the log's context, micro-batch and caches.
Rule 4: a llama-server build older than 0c1e570 reserved logits for every token of the micro-batch, where
        0c1e570's server reserves one row per sequence (PR 23861, `n_outputs_max`); `meta["outputs_reserved"]`
        = "ubatch" re-prices the GPU's compute buffer (and the host's, Rule 3) with the build's rows.
"""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from gguf.constants import GGMLQuantizationType as T
from gguf_factory import ArchDesc, tensor_plan, write_gguf

from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.explorer.llama_question import ask
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit.buffers.backends import GpuBackend
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.llama_words.reader import read_llama_args, split_command
from gguf_budget.core.machine.gpu import GpuInfo, GpuMemory, Vendor
from gguf_budget.core.machine.snapshot import hypothetical_machine, what_if
from gguf_budget.core.model.catalogue import find_entry
from gguf_budget.core.model.loader import load_model
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.quant.file_types import find_file_type

DATA = Path(__file__).parent / "data" / "published-gpu"
MAKE_CATALOGUE = Path(__file__).parent.parent / "packaging" / "make_catalogue.py"
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
        """The skeleton: the catalogue's shape of `meta["catalogue"]` (packaging/make_catalogue.py, llama-quantize's
        types) with the file's tensor order (`first`), else `model`'s ArchDesc fields, with ggml type names (and
        `layer_mix`'s layers as text) from JSON."""
        if "catalogue" in self.meta:
            return replace(_catalogue_shape(self.meta["catalogue"]), first=tuple(self.meta.get("first", ())))
        if "shape" in self.meta:
            return _quantized_shape(dict(self.meta["shape"]))
        m = dict(self.meta["model"])
        for key in ("weight_type", "output_type", "embd_type"):
            if key in m:
                m[key] = T[m[key]]
        m["mix"] = {role: T[t] for role, t in m.get("mix", {}).items()}
        m["layer_mix"] = {int(il): {role: T[t] for role, t in roles.items()}
                          for il, roles in m.get("layer_mix", {}).items()}
        return ArchDesc(**m)

    def spec(self, folder: Path) -> ModelSpec:
        return load_model(write_gguf(folder / f"{self.name}.gguf", self.desc(), "header_only")[0])

    def type_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for name in (ggml_type.name for _, _, ggml_type in tensor_plan(self.desc())):
            key = name.lower().replace("_k", "_K")
            counts[key] = counts.get(key, 0) + 1
        return counts


def _make_catalogue() -> Any:
    spec = importlib.util.spec_from_file_location("make_catalogue", MAKE_CATALOGUE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _catalogue_shape(name: str) -> ArchDesc:
    """The catalogue's skeleton description of `name`, as packaging/make_catalogue.py writes it."""
    return _make_catalogue().skeleton(find_entry(name))


def _quantized_shape(shape: dict[str, Any]) -> ArchDesc:
    """A catalogue model's config.json shape (`name`, with `ArchDesc` fields that differ in the published file, such
    as an older release's context length) at the published `quant`, typed as llama-quantize types it (the
    catalogue's step 2, packaging/make_catalogue.py); `retype` names the tensors (by the end of their name) that an
    older llama-quantize typed otherwise, with the type it gave them."""
    module = _make_catalogue()
    quant = find_file_type(shape.pop("quant"))
    retype = {suffix: T[t] for suffix, t in shape.pop("retype", {}).items()}
    source = replace(module.SHAPES[shape.pop("name")], file_type=32, **shape)
    types = {name: next((t for suffix, t in retype.items() if name.endswith(suffix)), t)
             for name, t in module._types(source, quant.name.value).items()}
    return replace(source, file_type=int(quant.llama_ftype), tensor_types=types)


def fixtures() -> tuple[Published, ...]:
    return tuple(Published(d.name, json.loads((d / "meta.json").read_text()), (d / "run.log").read_text())
                 for d in sorted(DATA.iterdir()) if d.is_dir())


def role(kind: str, device: str) -> str:
    """Rule 1; a GPU's role after the first GPU's names its index (`gpu compute 1` is CUDA1's compute buffer)."""
    host = device.startswith("CPU") or device in HOST_COMPUTE
    index = re.match(r"[A-Za-z]+(\d*)", device)
    gpu = f" {index[1]}" if not host and index and index[1] not in ("", "0") else ""
    if kind == "model":
        return "repack" if device in REPACK else "host weights" if host else "gpu weights" + gpu
    if kind == "compute":
        return "host compute" if host else "gpu compute" + gpu
    if kind == "KV":
        return "host KV" if host else "gpu KV" + gpu
    return kind


def base_role(name: str) -> str:
    """The role without a GPU's index."""
    return re.sub(r" \d+$", "", name)


def printed(p: Published) -> dict[str, int]:
    """Role → bytes as the log printed them (a sliding-window model prints two KV buffers per device: summed)."""
    out: dict[str, int] = {}
    for b in parse_llamacpp_log(p.log).loads[-1].buffers:
        out[role(b.kind.value, b.device)] = out.get(role(b.kind.value, b.device), 0) + b.nbytes
    return out


def predicted(p: Published, folder: Path, command: str | None = None) -> dict[str, int]:
    """Rule 2: the same roles from the estimate (of `command` where given, else `command_0c1e570`)."""
    spec = p.spec(folder)
    vendor = Vendor(p.meta["vendor"]) if "vendor" in p.meta else VENDOR[p.meta["backend"]]
    gpus = tuple(GpuInfo(index=i, name=g["name"], total=g["total_mib"] * MiB, free=g["free_mib"] * MiB, used=None,
                         vendor=vendor, memory=GpuMemory.UNIFIED if vendor is Vendor.APPLE else GpuMemory.VRAM,
                         reader="hypothetical")
                 for i, g in enumerate(p.meta["gpus"]))
    machine = replace(what_if(hypothetical_machine(HOST_RAM), gpus=gpus), cpu_features=_cpu_features(p))
    question = ask(read_llama_args(split_command(command or p.meta["command_0c1e570"])),
                   ExplorerState(model=spec, machine=machine), spec)
    request = question.state.fit_request(question.state.ctx)
    request = replace(request, engine=replace(request.engine, gpu_backend=GpuBackend(p.meta["backend"])))
    e = estimate_fit(spec, machine, request)
    assert e.memory is not None
    host, *devices = e.memory.devices
    out = {"host weights": host.mapped_weights + host.loaded_weights, "repack": host.repack, "host KV": host.kv or 0,
           "output": host.output + sum(d.output for d in devices), "host compute": host.compute or 0}
    for i, d in enumerate(devices):
        gpu = f" {i}" if i else ""
        out |= {"gpu weights" + gpu: d.loaded_weights + d.mapped_weights, "gpu KV" + gpu: d.kv or 0,
                "gpu compute" + gpu: d.compute or 0}
    if p.meta.get("outputs_reserved") == "ubatch":  # Rule 4
        e = estimate_fit(spec, machine, replace(request, engine=replace(request.engine, outputs=request.engine.ubatch)))
        assert e.memory is not None
        host, *devices = e.memory.devices
        out["gpu compute, build's outputs"] = sum(d.compute or 0 for d in devices)
    if "host_inputs" in p.meta:
        out["host compute, build's inputs"] = host_under_build(p, host.compute or 0, spec.n_embd or 0)
    return out


def _cpu_features(p: Published) -> frozenset[str]:
    """The CPU's features as the log's `system_info` line names them (`CPU : NEON = 1 | …`), none when it has none."""
    line = next((l for l in p.log.splitlines() if l.startswith("system_info: ")), "")
    cpu = line.split("CPU :", 1)[1] if "CPU :" in line else ""
    return frozenset(re.findall(r"([A-Z][A-Z0-9_]*) = 1", cpu))


def _logged(p: Published, pattern: str) -> list[int]:
    return [int(m) for m in re.findall(pattern, p.log)]


def host_under_build(p: Published, host_compute: int, n_embd: int) -> int:
    """Rule 3: 0c1e570's host compute buffer re-priced with the inputs of the fixture's build."""
    inputs = p.meta["host_inputs"]
    tokens = _logged(p, r"n_ubatch += (\d+)")[0]
    fa = bool(re.search(r"flash_attn += (1|enabled)|Flash Attention was auto, set to enabled", p.log))
    caches = _logged(p, r"n_ctx += (\d+)")[:1] + _logged(p, r"(?<!non-)SWA KV cache, size = (\d+) cells")
    out = host_compute
    if inputs.get("pr18550"):
        out -= 4 * n_embd * tokens
    if inputs.get("pr14285_v_row"):
        out -= sum(8 * tokens * (1 + (1 if fa else inputs["pr14285_v_row"])) for _ in caches)
    if inputs.get("pr23764") and fa:
        out += sum(2 * cells * tokens for cells in caches)
    return out
