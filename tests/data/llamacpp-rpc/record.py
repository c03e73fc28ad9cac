"""Record the multi-device llama.cpp runs of this folder (`tests/rpc_runs.py` lists them).

Starts two `ggml-rpc-server`s on 127.0.0.1 (`rpc_runs.PORTS`, 2 threads each: llama.cpp's RPC
backend, each server one more device), writes the models of `runnable_model.multi_device_descs()`
into MODELS when missing, runs each run's command from a folder holding `models/`, and keeps the
command (first line) and every line the log reader reads, plus llama.cpp's exact re-check of each
compute buffer (`compute buffer size is X MiB`, four decimals) and its pipeline-parallel line.

Run: .venv/bin/python tests/data/llamacpp-rpc/record.py [--only NAME …] [--bin DIR] [--models DIR]
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from gguf_factory import write_gguf  # noqa: E402  (tests/ is not a package)
from llamacpp_recording import recorded_log  # noqa: E402
from rpc_runs import PORTS, RUNS  # noqa: E402
from runnable_model import multi_device_descs  # noqa: E402

HERE = Path(__file__).resolve().parent
BIN = Path.home() / ".cache" / "gguf-budget-ci" / "llama.cpp-0c1e570" / "bin"
MODELS = Path("/tmp/gguf-budget-rpc-models")
KEEP_WORDS = ("compute buffer size is", "pipeline parallelism")


def record(argv: list[str], bin_dir: Path, models: Path) -> str:
    return recorded_log(argv, shlex.join(argv), bin_dir, models, KEEP_WORDS)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", help="run names (default: every run)")
    ap.add_argument("--bin", type=Path, default=BIN)
    ap.add_argument("--models", type=Path, default=MODELS)
    args = ap.parse_args()
    args.models.mkdir(parents=True, exist_ok=True)
    for name, desc in multi_device_descs().items():
        if not (args.models / f"{name}.gguf").exists():
            write_gguf(args.models / f"{name}.gguf", desc)
    servers = [subprocess.Popen([str(args.bin / "ggml-rpc-server"), "-H", "127.0.0.1", "-p", str(p), "-t", "2"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for p in PORTS]
    try:
        time.sleep(1)
        for run in RUNS:
            if args.only and run.name not in args.only:
                continue
            started = time.monotonic()
            (HERE / f"{run.name}.log").write_text(record(run.command(), args.bin, args.models))
            print(f"{run.name}: {time.monotonic() - started:.0f} s", flush=True)
    finally:
        for s in servers:
            s.terminate()
            s.wait()


if __name__ == "__main__":
    main()
