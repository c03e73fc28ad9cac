"""Record the Vulkan llama.cpp runs of this folder (`tests/vulkan_runs.py` lists them).

Runs each run's command with llama.cpp built with its Vulkan backend (`.ci/build_llamacpp_vulkan.sh`)
on Mesa's software driver, the lavapipe device made visible (`GGML_VK_VISIBLE_DEVICES=0`), from a
folder holding `models/` (the real models), and keeps the command (first line) and every line the log
reader reads, plus llama.cpp's exact re-check of each compute buffer (`compute buffer size is X MiB`,
four decimals) and the lines naming the Vulkan device.

Run: .venv/bin/python tests/data/llamacpp-vulkan/record.py [--only NAME …] [--bin DIR] [--models DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log, reads_line

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from vulkan_runs import ENV, RUNS, VulkanRun  # noqa: E402  (tests/ is not a package)

HERE = Path(__file__).resolve().parent
BIN = Path.home() / ".cache" / "gguf-budget-ci" / "llama.cpp-0c1e570-vulkan" / "bin"
MODELS = Path("/work/models")
KEEP_WORDS = ("compute buffer size is", "pipeline parallelism", "ggml_vulkan: ", "Flash Attention")


def _kept(line: str) -> bool:
    return line.startswith(("+ ", "rc=")) or any(w in line for w in KEEP_WORDS) or reads_line(line)


def record(run: VulkanRun, bin_dir: Path, models: Path) -> str:
    """The run's kept log lines; raises when they do not read back as the whole log."""
    argv = run.argv()
    with tempfile.TemporaryDirectory(prefix="llamacpp-vulkan-") as tmp:
        folder = Path(tmp)
        (folder / "models").symlink_to(models)
        done = subprocess.run([str(bin_dir / argv[0]), *argv[1:]], cwd=folder, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, errors="replace", timeout=600,
                              env={**os.environ, **ENV})
    text = "\n".join([f"+ {run.command()}", (done.stdout + done.stderr).rstrip("\n"), f"rc={done.returncode}"])
    kept = "".join(line + "\n" for line in text.splitlines() if _kept(line))
    if parse_llamacpp_log(kept) != parse_llamacpp_log(text):
        raise RuntimeError(f"{run.name}: the kept lines do not read back as the whole log")
    return kept


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", help="run names (default: every run)")
    ap.add_argument("--bin", type=Path, default=BIN)
    ap.add_argument("--models", type=Path, default=MODELS)
    args = ap.parse_args()
    for run in RUNS:
        if args.only and run.name not in args.only:
            continue
        started = time.monotonic()
        (HERE / f"{run.name}.log").write_text(record(run, args.bin, args.models))
        print(f"{run.name}: {time.monotonic() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
