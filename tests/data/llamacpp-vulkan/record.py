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
import sys
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from llamacpp_recording import recorded_log  # noqa: E402  (tests/ is not a package)
from vulkan_runs import ENV, RUNS, VulkanRun  # noqa: E402

HERE = Path(__file__).resolve().parent
BIN = Path.home() / ".cache" / "gguf-budget-ci" / "llama.cpp-0c1e570-vulkan" / "bin"
MODELS = Path("/work/models")
KEEP_WORDS = ("compute buffer size is", "pipeline parallelism", "ggml_vulkan: ", "Flash Attention")


def record(run: VulkanRun, bin_dir: Path, models: Path) -> str:
    """The run's kept log lines (`llamacpp_recording` Rule 2), on the lavapipe device."""
    return recorded_log(run.argv(), run.command(), bin_dir, models, KEEP_WORDS, {**os.environ, **ENV})


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
