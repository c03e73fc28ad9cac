"""Regenerate the README's screenshots with the app's own `--screenshot` mode.

- docs/screenshot.png: the bundled Llama-3.1-8B-Instruct Q4_K_M skeleton under a 6 GiB budget
  (auto ctx, speed first: every layer pinned, ctx grown as far as they all stay pinned).
- docs/slow.png: the bundled Llama-3.1-70B-Instruct Q4_K_M skeleton under a 16 GiB budget:
  feasible, but each token streams most of the model (FEASIBLE — SLOW), and the full load
  beneath it. Speeds use this machine's measured RAM bandwidth and the assumed disk figure
  (a skeleton has no weights to read), each labelled so on screen.
- docs/sweep.png: the bundled Llama-3.1-8B-Instruct Q4_K_M skeleton under a 6 GiB budget
  (auto ctx), with the budget sweep dock raised.
- docs/laptop-1280x720.png and docs/desktop-1920x1080.png: the sweep view again, at a laptop's
  and a desktop's window size (`--size`): every control of the main view on screen at 1280×720.
- docs/compare.png: the same model in Q4_K_M (bundled) and in Q8_0 (a skeleton of the same
  published config written here into a temporary folder, with every weight matrix Q8_0)
  compared under a 9 GiB budget at ctx 8192.

Run: python docs/make_screenshots.py   (offscreen; needs the project installed)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "packaging"))

from gguf.constants import GGMLQuantizationType as T  # noqa: E402
from gguf.constants import LlamaFileType  # noqa: E402
from gguf_factory import write_gguf  # noqa: E402
from make_catalogue import SHAPES  # noqa: E402

from gguf_budget.core.model.catalogue import catalogue_path, find_entry  # noqa: E402

MODEL = "llama-3.1-8b-instruct"
BIG_MODEL = "llama-3.1-70b-instruct"


def q8_0_skeleton(folder: Path) -> Path:
    """The catalogue model's shape with every weight matrix in Q8_0 (norms stay F32)."""
    shape = replace(SHAPES[MODEL], name="Llama-3.1-8B-Instruct Q8_0 (skeleton, header only)",
                    weight_type=T.Q8_0, embd_type=None, output_type=None, mix={}, layer_mix={},
                    file_type=int(LlamaFileType.MOSTLY_Q8_0))
    return write_gguf(folder / "llama-3.1-8b-instruct-q8_0.skeleton.gguf", shape, "header_only")[0]


def screenshot(out: Path, *extra: str, name: str = MODEL) -> None:
    model = os.path.relpath(catalogue_path(find_entry(name)), ROOT)  # the status bar names it: no checkout path
    command = [sys.executable, "-m", "gguf_budget.gui.cli", model, "--screenshot", str(out), *extra]
    subprocess.run(command, check=True, cwd=ROOT)
    print(f"wrote {out} ({out.stat().st_size:,} bytes)")


def main() -> None:
    docs = ROOT / "docs"
    screenshot(docs / "screenshot.png", "--budget", "6G")
    screenshot(docs / "slow.png", "--budget", "16G", name=BIG_MODEL)
    screenshot(docs / "sweep.png", "--budget", "6G", "--view", "sweep")
    for size, name in (("1280x720", "laptop-1280x720.png"), ("1920x1080", "desktop-1920x1080.png")):
        screenshot(docs / name, "--budget", "6G", "--view", "sweep", "--size", size)
    with tempfile.TemporaryDirectory() as scratch:
        second = str(q8_0_skeleton(Path(scratch)))
        screenshot(docs / "compare.png", "--budget", "9G", "--ctx", "8192", "--view", "compare", "--compare", second)


if __name__ == "__main__":
    main()
