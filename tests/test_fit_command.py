"""The command that runs a fit: llama-server flags that parse back to the same placement, shell quoting,
and what Ollama can and cannot say of it."""

from __future__ import annotations

import shlex

import pytest
from command_parse import gpu_weights_with_cpu_moe, parse_llama_server, server_settings
from gguf_factory import ArchDesc

from gguf_budget.core import load_model
from gguf_budget.core.fit.command import run_command
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.types import FitRequest
from gguf_budget.core.machine.gpu import GpuInfo
from gguf_budget.core.machine.snapshot import HardwareSnapshot, hypothetical_machine

GiB = 1024**3
TWO_GPUS = HardwareSnapshot(captured_at=0.0, host_total=64 * GiB, host_available=64 * GiB, cgroup_limit=None, gpus=(GpuInfo(
    index=0, name="a", total=24 * GiB, free=24 * GiB, used=0,
),
                                                           GpuInfo(index=1, name="b", total=12 * GiB, free=12 * GiB,
                                                                   used=0)), gpu_error=None, source="hypothetical")


@pytest.mark.parametrize(
    ("request_", "flags"),
    [
        (FitRequest(ctx=1000), ["-c", "1000", "-ngl", "5"]),
        (FitRequest(ctx=1000, gpu_layers=2, tensor_split=(1.0, 1.0)), ["-c", "1000", "-ngl", "2", "-ts", "1,1"]),
        (FitRequest(ctx=1000, kv_type="q8_0"), ["-c", "1000", "-ngl", "5", "-ctk", "q8_0", "-ctv", "q8_0", "-fa", "on"]),
        (FitRequest(ctx=1000, kv_type="f32"), ["-c", "1000", "-ngl", "5", "-ctk", "f32", "-ctv", "f32"]),
    ],
)
def test_the_flags_say_what_the_fit_placed_and_parse_back_to_it(gguf_file, request_, flags):
    path = gguf_file(ArchDesc(n_layer=4), name="my model's file.gguf")
    spec = load_model(path)
    e = estimate_fit(spec, TWO_GPUS, request_)
    server = ["-np", "1", "--cache-ram", str(e.server.cache_ram_mib)]
    assert list(e.command.argv) == ["llama-server", "-m", str(path), *flags, *server]
    back = parse_llama_server(e.command.shell)
    assert back.model == str(path)  # quoted for the shell: the space and the quote survive
    again = estimate_fit(spec, TWO_GPUS, FitRequest(ctx=back.ctx, gpu_layers=back.gpu_layers, kv_type=back.cache_k,
                                                    tensor_split=back.tensor_split, server=server_settings(back)))
    assert [d.slots for d in again.devices[1:]] == [d.slots for d in e.devices[1:]]
    assert again.devices == e.devices


def test_the_moe_offload_command_parses_back_to_its_placement(model):
    spec = model(ArchDesc(arch="qwen2moe", n_layer=4, n_vocab=8192, n_expert=4, n_expert_used=2))
    machine = hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=3 * GiB // 2 + 500_000)
    m = estimate_fit(spec, machine, FitRequest(ctx=256)).moe_offload
    back = parse_llama_server(m.command.shell)
    assert (back.gpu_layers, back.n_cpu_moe) == (m.gpu_layers, m.n_cpu_moe) and m.n_cpu_moe > 0
    gpu = m.devices[1]
    assert gpu_weights_with_cpu_moe(spec, gpu.slots, back.n_cpu_moe) == gpu.weights


def test_paths_are_quoted_for_the_shell():
    path = "/models/it's a \"test\" $HOME; rm -rf ~.gguf"
    c = run_command("layers", path, 4096, 33, "f16")
    assert shlex.split(c.shell) == list(c.argv) and c.argv[2] == path
    assert c.shell.startswith("llama-server -m '/models/it'\"'\"'s a")


def test_ollama_equivalents():
    c = run_command("layers", "/m/Qwen3 30B.gguf", 32768, 30, "q8_0", (3.0, 1.0))
    assert c.ollama_modelfile == 'FROM "/m/Qwen3 30B.gguf"\nPARAMETER num_ctx 32768\nPARAMETER num_gpu 30\n'
    assert c.ollama_env == (("OLLAMA_FLASH_ATTENTION", "1"), ("OLLAMA_KV_CACHE_TYPE", "q8_0"))
    assert c.ollama_create.endswith("ollama create qwen3-30b -f Modelfile")
    assert any("no tensor split" in n and "-ts 3,1" in n for n in c.ollama_notes)
    moe = run_command("n_cpu_moe", "/m/x.gguf", 4096, 49, "f16", n_cpu_moe=12)
    assert any("--n-cpu-moe 12" in n for n in moe.ollama_notes) and moe.ollama_env == ()
    assert any("bf16 has no equivalent" in n for n in run_command("layers", "/m/x.gguf", 4096, 1, "bf16").ollama_notes)
