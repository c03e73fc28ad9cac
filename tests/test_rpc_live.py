"""Two real devices, live: llama.cpp's RPC backend with two `ggml-rpc-server`s on 127.0.0.1, every buffer predicted.

A live subset of tests/data/llamacpp-rpc (`rpc_runs.RUNS`): the same commands on the same model, with
servers this test starts on free ports (their names are in every buffer line); and an MLA model (deepseek2) in both
file formats the same way. In CI a missing
llama.cpp or ggml-rpc-server fails the test (`llama_support.missing`).
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from gguf_factory import write_gguf
from llama_support import llama_engine, missing
from rpc_runs import RUNS, RpcRun, predicted, printed
from runnable_model import multi_device_descs, runnable_mla_desc

from gguf_budget.core.measure.engine import EngineKind
from gguf_budget.core.model.loader import load_model

LIVE = ("tied12_2dev_all", "tied12_1dev_ngl6_fa-off")
TOLERANCE = 0.01
SLACK = 0.00501 * 1024 * 1024


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(100):
        if proc.poll() is not None:
            pytest.fail(f"ggml-rpc-server on port {port} exited ({proc.returncode})")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"ggml-rpc-server on port {port} never listened")


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[Path, tuple[int, int]]]:
    folder = Path(llama_engine(EngineKind.COMPLETION).executable).parent
    rpc = folder / "ggml-rpc-server"
    if not rpc.exists():
        missing("llama.cpp's ggml-rpc-server", f"none beside {folder} (.ci/build_llamacpp.sh builds it with GGML_RPC)")
    ports = (_free_port(), _free_port())
    procs = [subprocess.Popen([str(rpc), "-H", "127.0.0.1", "-p", str(p), "-t", "1"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for p in ports]
    try:
        for p, proc in zip(ports, procs, strict=True):
            _listening(p, proc)
        yield folder, ports
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)


@pytest.mark.parametrize("name", LIVE)
def test_a_live_two_device_run_prints_the_buffers_predicted(servers, tmp_path, name):
    run = next(r for r in RUNS if r.name == name)
    _run_and_compare(servers, tmp_path, run, multi_device_descs()[run.model])


MLA_RUNS = (RpcRun("mla_2dev_all", "mla", 2, 99), RpcRun("mla-legacy_2dev_ngl2_fa-off", "mla-legacy", 2, 2, ("-fa", "off")))


@pytest.mark.parametrize("run", MLA_RUNS, ids=[r.name for r in MLA_RUNS])
def test_an_mla_model_on_two_live_devices_prints_the_buffers_predicted(servers, tmp_path, run):
    """A deepseek2 in either file format (`runnable_model.runnable_mla_desc`): the latent K-only cache and the
    decompressed one, and each graph's compute buffer, on every device."""
    _run_and_compare(servers, tmp_path, run, runnable_mla_desc(absorbed=run.model == "mla"))


def _run_and_compare(servers, tmp_path, run: RpcRun, desc) -> None:
    folder, ports = servers
    (tmp_path / "models").mkdir()
    model = write_gguf(tmp_path / "models" / f"{run.model}.gguf", desc)[0]
    argv = run.command(ports)
    done = subprocess.run([str(folder / argv[0]), *argv[1:]], cwd=tmp_path, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, errors="replace", timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    want, got = printed(done.stdout + done.stderr), predicted(run, load_model(model), ports)
    assert any(kind == "compute" and device.startswith("RPC0") for kind, device in want)
    for key, measured in want.items():
        assert abs(got.get(key, 0) - measured) <= max(TOLERANCE * measured, SLACK), (key, got.get(key), measured)
