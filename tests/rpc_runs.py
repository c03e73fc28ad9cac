"""The real multi-device llama.cpp runs of tests/data/llamacpp-rpc: each run's command and the request it makes.

llama.cpp's RPC backend turns a `ggml-rpc-server` on 127.0.0.1 into a device of its own (a GPU to
llama.cpp's scheduler: its own weights, KV and compute buffers); two servers make a two-GPU machine.
Each run is llama-completion on one of `runnable_model.multi_device_descs()` with 2 threads, a 4096
context, `-fit off` (one load, as asked) and `-v` (the buffer lines).

Rule 1: the servers listen on 127.0.0.1:PORTS[0] and PORTS[1]; a run names the first `devices` of them.
Rule 2: `request` is what the fit is asked for the same run (the same flags, llama-completion's
        defaults), and `machine` the two RPC devices as GPUs (`GpuBackend.RPC`), so the test compares
        every printed buffer with `estimate_fit`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.model.kv import KVType
from gguf_budget.core.model.spec import ModelSpec

from gguf_budget.core.fit.buffers.backends import GpuBackend
from gguf_budget.core.fit.runtime_types import EngineSettings, Runtime, RuntimeMemory, SplitMode, TensorOverride
from gguf_budget.core.fit.server.types import ServerSettings
from gguf_budget.core.fit.types import FitRequest, Reserves
from gguf_budget.core.machine.gpu import GpuInfo
from gguf_budget.core.machine.snapshot import HardwareSnapshot, hypothetical_machine, what_if

PORTS = (50611, 50612)
CTX = 4096
GiB = 1024**3
MiB = 1024**2
EXACT = re.compile(r"~llama_context: +(?P<name>\S+) compute buffer size is +(?P<mib>\d+\.\d+) MiB")


@dataclass(frozen=True)
class RpcRun:
    """One recorded run: the model, how many RPC devices, -ngl, and the other flags as llama.cpp takes them."""

    name: str
    model: str
    devices: int
    ngl: int
    flags: tuple[str, ...] = ()

    def command(self, ports: tuple[int, ...] = PORTS) -> list[str]:
        rpc = ",".join(f"127.0.0.1:{p}" for p in ports[:self.devices])
        return ["llama-completion", "-m", f"models/{self.model}.gguf", "-c", str(CTX), "-t", "2", "-p",
                "The capital of France is", "-n", "4", "-no-cnv", "-fit", "off", "-v", "--rpc", rpc,
                "-ngl", str(self.ngl), *self.flags]

    def _flag(self, name: str) -> str | None:
        return self.flags[self.flags.index(name) + 1] if name in self.flags else None

    def request(self) -> FitRequest:
        """Rule 2."""
        ts = self._flag("-ts")
        ot = self._flag("-ot")
        overrides = tuple(TensorOverride(*o.rsplit("=", 1)) for o in ot.split(",")) if ot else ()
        engine = EngineSettings(
            runtime=Runtime.LLAMA_COMPLETION, flash_attn=self._flag("-fa") != "off",
            kv_offload="-nkvo" not in self.flags, overrides=overrides, gpu_backend=GpuBackend.RPC,
            split_mode=SplitMode(self._flag("-sm") or "layer"), main_gpu=int(self._flag("-mg") or 0), mmap=True,
            cpu_features=frozenset(), ubatch=int(self._flag("-ub") or 512))
        return FitRequest(ctx=CTX, gpu_layers=self.ngl, engine=engine, reserves=Reserves(gpu=0),
                          kv_type=KVType(self._flag("-ctk") or "f16"),
                          server=ServerSettings(n_parallel=int(self._flag("-np") or 1)),
                          tensor_split=tuple(float(x) for x in re.split(r"[,/]", ts)) if ts else None)

    def machine(self, ports: tuple[int, ...] = PORTS) -> HardwareSnapshot:
        """Rule 2: equal free memory on each server (llama.cpp splits by it when no -ts is given)."""
        base = hypothetical_machine(64 * GiB)
        gpus = tuple(GpuInfo(index=i, name=f"127.0.0.1:{ports[i]}", total=20 * GiB, free=20 * GiB, used=0,
                             reader="hypothetical") for i in range(self.devices))
        return what_if(base, gpus=gpus)


RUNS = (
    RpcRun("mid8_1dev_all", "mid8", 1, 99),
    RpcRun("mid8_1dev_all_fa-off", "mid8", 1, 99, ("-fa", "off")),
    RpcRun("mid8_1dev_ngl4", "mid8", 1, 4),
    RpcRun("mid8_1dev_ngl0", "mid8", 1, 0),
    RpcRun("mid8_2dev_all", "mid8", 2, 99),
    RpcRun("mid8_2dev_all_fa-off", "mid8", 2, 99, ("-fa", "off")),
    RpcRun("mid8_2dev_ngl5", "mid8", 2, 5),
    RpcRun("mid8_2dev_all_ts3-1", "mid8", 2, 99, ("-ts", "3,1")),
    RpcRun("mid8_2dev_all_ot-ffn-cpu", "mid8", 2, 99, ("-ot", r"blk\.[0-3]\.ffn_.*=CPU")),
    RpcRun("mid8_2dev_all_np4", "mid8", 2, 99, ("-np", "4")),
    RpcRun("tied12_1dev_all", "tied12", 1, 99),
    RpcRun("tied12_1dev_ngl6_fa-off", "tied12", 1, 6, ("-fa", "off")),
    RpcRun("tied12_2dev_all", "tied12", 2, 99),
    RpcRun("tied12_2dev_ngl7_ts1-2_fa-off", "tied12", 2, 7, ("-ts", "1,2", "-fa", "off")),
    RpcRun("tied12_2dev_all_nkvo", "tied12", 2, 99, ("-nkvo",)),
    RpcRun("tied12_1dev_all_np4", "tied12", 1, 99, ("-np", "4")),
    RpcRun("mid8_2dev_all_sm-none-mg1", "mid8", 2, 99, ("-sm", "none", "-mg", "1")),
    RpcRun("mid8_2dev_all_q8", "mid8", 2, 99, ("-ctk", "q8_0", "-ctv", "q8_0")),
    RpcRun("tied12_2dev_all_nkvo_q8", "tied12", 2, 99, ("-nkvo", "-ctk", "q8_0", "-ctv", "q8_0")),
    RpcRun("mid8_2dev_all_ub256", "mid8", 2, 99, ("-ub", "256")),
    RpcRun("tied12_2dev_ngl0", "tied12", 2, 0),
)


def printed(text: str) -> dict[tuple[str, str], int]:
    """(kind, buffer name) → bytes, as llama.cpp printed them in a run's log; compute from its exact re-check line."""
    load = parse_llamacpp_log(text).loads[-1]
    out: dict[tuple[str, str], int] = {}
    for b in load.buffers:  # a sliding-window model prints two KV lines per device: its full and its window cache
        out[(b.kind.value, b.device)] = out.get((b.kind.value, b.device), 0) + b.nbytes
    for m in EXACT.finditer(text):
        out[("compute", m["name"])] = round(float(m["mib"]) * MiB)
    return {k: v for k, v in out.items() if k[0] != "compute" or v > 0}


def predicted(run: RpcRun, spec: ModelSpec, ports: tuple[int, ...] = PORTS) -> dict[tuple[str, str], int]:
    """The same buffers from the estimate: the host's mapped weights are `CPU_Mapped`, each device's own by name."""
    e = estimate_fit(spec, run.machine(ports), run.request())
    assert e.memory is not None
    return predicted_buffers(e.memory)


def predicted_buffers(memory: RuntimeMemory) -> dict[tuple[str, str], int]:
    """(kind, buffer name) → bytes of an estimate, keyed as `printed` keys a log."""
    host, *gpus = memory.devices
    out = {("model", "CPU_Mapped"): host.mapped_weights, ("model", "CPU_REPACK"): host.repack,
           ("KV", "CPU"): host.kv or 0, ("output", host.output_buffer): host.output, ("compute", host.buffer): host.compute or 0}
    for d in gpus:
        out |= {("model", d.buffer): d.loaded_weights, ("KV", d.buffer): d.kv or 0, ("compute", d.buffer): d.compute or 0}
    return out
