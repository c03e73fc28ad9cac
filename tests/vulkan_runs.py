"""The real Vulkan llama.cpp runs of tests/data/llamacpp-vulkan: each run's command and what the fit predicts for it.

llama.cpp's Vulkan backend (`.ci/build_llamacpp_vulkan.sh`) on Mesa's software driver (lavapipe,
`llvmpipe`): a CPU-type Vulkan device that llama.cpp uses only when `GGML_VK_VISIBLE_DEVICES` names
it, and then a GPU to its scheduler — `Vulkan0` weights, KV and compute buffers, a `Vulkan_Host`
compute buffer on the host, and op offload of a prompt's large batches. The runs are the two real
models of /work/models (their header-only skeletons: `recorded_models`) with 2 threads and a 4096
context.

Rule 1: a run's command is the whole question: it goes through the path `fit --command` takes
        (`llama_words.reader` → `explorer.llama_question.ask` → the state's full-load request),
        over a machine of one GPU with room for everything and lavapipe's largest tensor; `-dev Vulkan0` in the command names
        the backend (`backends` Rule 6). Only the CPU's features and the run's tokens come from
        the log (`evidence.compare.as_run`).
Rule 2: every printed buffer is compared: the model, KV, output and compute lines, compute from
        llama.cpp's four-decimal re-check (`rpc_runs.printed`).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from rpc_runs import predicted_buffers

from gguf_budget.core.evidence.compare import as_run
from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.explorer.llama_question import ask
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.llama_words.reader import read_llama_args, split_command
from gguf_budget.core.machine.gpu import GpuInfo
from gguf_budget.core.machine.snapshot import HardwareSnapshot, hypothetical_machine, what_if
from gguf_budget.core.model.spec import ModelSpec

GiB = 1024**3
LAVAPIPE_MAX_BUFFER = 128 * 1024**2
"""lavapipe's `maxStorageBufferRange` (vulkaninfo: 134217728, the Vulkan minimum): gemma3's 170 MiB output matrix
and its 512-row logits stay on the CPU."""
ENV = {"GGML_VK_VISIBLE_DEVICES": "0"}
FILES = {"smollm2": "smollm2-135m-instruct-q4_1.gguf", "gemma3": "gemma3-270m-q4_k_m.gguf"}
PROMPT = "The capital of France is"


@dataclass(frozen=True)
class VulkanRun:
    """One recorded run: the program, the model, -ngl, and the other flags as llama.cpp takes them."""

    name: str
    model: str
    ngl: int
    flags: tuple[str, ...] = ()
    program: str = "llama-completion"

    def argv(self) -> list[str]:
        own = ["-no-cnv"] if self.program == "llama-completion" else ["-st"]
        return [self.program, "-m", f"models/{FILES[self.model]}", "-c", "4096", "-t", "2", "-p", PROMPT, "-n", "4",
                *own, "--no-warmup", "-fit", "off", "-v", "-dev", "Vulkan0", "-ngl", str(self.ngl), *self.flags]

    def command(self) -> str:
        """The command as a shell runs it (the log's first line, after `+ `)."""
        return " ".join([*(f"{k}={v}" for k, v in ENV.items()), shlex.join(self.argv())])


def machine() -> HardwareSnapshot:
    """Rule 1: one GPU (lavapipe reports the host's RAM; 20 GiB is room for every run) on a 64 GiB host."""
    gpu = GpuInfo(index=0, name="llvmpipe (LLVM 15.0.6, 256 bits)", total=20 * GiB, free=20 * GiB, used=0,
                  reader="hypothetical", max_buffer=LAVAPIPE_MAX_BUFFER)
    return what_if(hypothetical_machine(64 * GiB), gpus=(gpu,))


def predicted(text: str, spec: ModelSpec) -> dict[tuple[str, str], int]:
    """Rule 1: the log's own command (its first line) asked as a person asks it, every buffer of the full load."""
    command = read_llama_args(split_command(text.splitlines()[0].removeprefix("+ ")))
    question = ask(command, ExplorerState(model=spec, machine=machine()), spec)
    request = as_run(question.state.fit_request(question.state.ctx), parse_llamacpp_log(text))
    e = estimate_fit(spec, machine(), request)
    assert e.memory is not None
    return predicted_buffers(e.memory)


RUNS = (
    VulkanRun("smollm2_ngl0", "smollm2", 0),
    VulkanRun("smollm2_ngl16_fa-off", "smollm2", 16, ("-fa", "off")),
    VulkanRun("gemma3_all", "gemma3", 99),
    VulkanRun("gemma3_ngl0", "gemma3", 0),
    VulkanRun("smollm2_all_np4", "smollm2", 99, ("-np", "4")),
    VulkanRun("smollm2_all", "smollm2", 99),
    VulkanRun("gemma3_ngl10_fa-off", "gemma3", 10, ("-fa", "off")),
    VulkanRun("smollm2_all_ot-ffn-cpu", "smollm2", 99, ("-ot", r"blk\.[0-9]\.ffn_.*=CPU")),
    VulkanRun("gemma3_all_np4", "gemma3", 99, ("-np", "4")),
    VulkanRun("smollm2_ngl0_no-op-offload", "smollm2", 0, ("--no-op-offload",)),
    VulkanRun("gemma3_all_fa-off", "gemma3", 99, ("-fa", "off")),
    VulkanRun("smollm2_ngl16", "smollm2", 16),
)
