""".ci/build_llamacpp.sh: the llama.cpp CI measures with is the revision the engine rules follow, built once.

A second run finds the binaries and llama-cpp-python's venv in the cache and prints the binaries'
folder without building or downloading anything (what keeps CI short after the first run).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from gguf_budget.core.llama_cpp import LLAMA_CPP_REVISION, LLAMA_CPP_SOURCE

SCRIPT = Path(__file__).resolve().parent.parent / ".ci" / "build_llamacpp.sh"


def test_the_script_builds_the_revision_the_rules_follow():
    text = SCRIPT.read_text()
    assert re.search(rf'^REVISION="{LLAMA_CPP_REVISION}"$', text, re.M)
    version = re.search(r'LLAMA_CPP_PYTHON_VERSION:-([\d.]+)\}', text)
    assert version and f"llama-cpp-python {version[1]}" in LLAMA_CPP_SOURCE
    assert "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16" in text


def test_the_script_builds_every_tool_the_evidence_is_recorded_with():
    """llama-fit-params is llama.cpp's own dry-run projection (the `fitparams_*` logs); ggml-rpc-server makes extra
    devices on 127.0.0.1 (the RPC backend is built in: -DGGML_RPC=ON); the others run."""
    text = SCRIPT.read_text()
    targets = re.search(r"^TARGETS=\((.*)\)$", text, re.M)
    assert targets and targets[1].split() == ["llama-cli", "llama-completion", "llama-server", "llama-fit-params",
                                              "ggml-rpc-server"]
    assert "-DGGML_RPC=ON" in text


def test_a_cached_build_is_reused_without_building(tmp_path: Path):
    bin_dir = tmp_path / f"llama.cpp-{LLAMA_CPP_REVISION}" / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir.parent / "py" / "bin" / "python"  # llama-cpp-python's venv: "import llama_cpp" succeeds
    python.parent.mkdir(parents=True)
    tools = ("llama-cli", "llama-completion", "llama-server", "llama-fit-params", "ggml-rpc-server")
    for exe in (*(bin_dir / tool for tool in tools), python):
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    env = {**os.environ, "GGUF_BUDGET_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str(bin_dir)]
    assert "already built" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"llama.cpp-{LLAMA_CPP_REVISION}"]
