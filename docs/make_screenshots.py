"""Regenerate the screenshots of the README and the manual (docs/) with the app's own `--screenshot` mode.

A model opens at this machine's usable RAM (available − the host reserve), so a picture taken without
`--budget` shows what the window shows here; the ones below that need another budget to show something
set it explicitly, and their captions say so.

- docs/screenshot.png: the bundled Llama-3.1-8B-Instruct Q4_K_M skeleton under a 6 GiB budget
  (`--budget 6G`: auto ctx, speed first: every layer pinned, ctx grown as far as they all stay pinned).
- docs/demo.png: the bundled demo model as `gguf-budget` opens it, at 1280×720 and this machine's usable RAM.
- docs/slow.png: the bundled Llama-3.1-70B-Instruct Q4_K_M skeleton under a 16 GiB budget (`--budget 16G`),
  at 1280×720: feasible, but each token streams most of the model (FEASIBLE — SLOW), and the full
  load beneath it. Speeds use this machine's measured RAM bandwidth and the assumed disk figure
  (a skeleton has no weights to read), each labelled so on screen.
- docs/mixtral-rtx4090.png: a Mixtral-8x7B-shaped Q4_K header (written here into a temporary folder) judged
  on the hypothetical "RTX 4090" preset (`--preset`), at 1280×720 and that machine's usable RAM.
- docs/url.png: the 8B opened by URL, at 1280×720 and this machine's usable RAM. The URL is served on
  loopback by this script: the catalogue skeleton grown to its complete size as a sparse file (zeros
  where the weights would be), so only the header crosses the network, as from a real server.
- docs/quants.png: the Quants dock for the 8B on the "RTX 4090" preset, at 1280×720 (`--view quants`).
- docs/sweep.png: the 8B skeleton under a 6 GiB budget (auto ctx), with the budget sweep dock raised.
- docs/laptop-1280x720.png and docs/desktop-1920x1080.png: the sweep view again, at a laptop's
  and a desktop's window size (`--size`): every control of the main view on screen at 1280×720.
- docs/compare.png: the same model in Q4_K_M (bundled) and in Q8_0 (a skeleton of the same
  published config written here into a temporary folder, with every weight matrix Q8_0)
  compared under a 9 GiB budget at ctx 8192.
- The five states the README's screenshot table shows, each at 1280×720 (docs/NAME.png) and at 1920×1080
  (docs/NAME-1920x1080.png): demo (the bundled demo), eight-b (the 8B on this machine, its usable RAM),
  slow (the 70B, tight: 16 GiB), mixtral-rtx4090 (Mixtral on the "RTX 4090" preset) and priced (the 8B's
  Q4_K_S, priced, not downloaded: `--priced Q4_K_S`, as a double-click on its Quants row).

Run: .venv/bin/python docs/make_screenshots.py   (offscreen; needs the project installed with `.[test]`)
     .venv/bin/python docs/make_screenshots.py --states   (only the five states, both sizes)
"""

from __future__ import annotations

import logging
import os
import shutil
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
from gguf_factory import MIXTRAL_8X7B, write_gguf  # noqa: E402
from http_models import Served  # noqa: E402
from make_catalogue import SHAPES  # noqa: E402
from pytest_httpserver import HTTPServer  # noqa: E402

from gguf_budget.core import load_model  # noqa: E402
from gguf_budget.core.model.catalogue import catalogue_path, find_entry  # noqa: E402
from gguf_budget.resources import demo_model_path  # noqa: E402

MODEL = "llama-3.1-8b-instruct"
BIG_MODEL = "llama-3.1-70b-instruct"


def q8_0_skeleton(folder: Path) -> Path:
    """The catalogue model's shape with every weight matrix in Q8_0 (norms stay F32)."""
    shape = replace(SHAPES[MODEL], name="Llama-3.1-8B-Instruct Q8_0 (skeleton, header only)",
                    weight_type=T.Q8_0, embd_type=None, output_type=None, mix={}, layer_mix={},
                    file_type=int(LlamaFileType.MOSTLY_Q8_0))
    return write_gguf(folder / "llama-3.1-8b-instruct-q8_0.skeleton.gguf", shape, "header_only")[0]


def screenshot(out: Path, *extra: str, name: str = MODEL, model: str | None = None, cwd: Path = ROOT) -> None:
    """`model` (a path relative to `cwd`, or a URL), else the catalogue entry `name`, shot with `extra` arguments.
    The status bar and the "Run it:" line name the path as given: a relative one shows no checkout or scratch folder."""
    if model is None:
        model = os.path.relpath(catalogue_path(find_entry(name)), ROOT)
    command = [sys.executable, "-m", "gguf_budget.gui.cli", model, "--screenshot", str(out), *extra]
    subprocess.run(command, check=True, cwd=cwd)
    print(f"wrote {out} ({out.stat().st_size:,} bytes)")


def served_by_url(folder: Path) -> tuple[HTTPServer, str]:
    """The 8B skeleton grown to its complete size with zeros (a sparse file: no disk spent), served with ranges
    on 127.0.0.1; the server and the URL."""
    skeleton = catalogue_path(find_entry(MODEL))
    path = folder / "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf"
    shutil.copyfile(skeleton, path)
    os.truncate(path, load_model(str(skeleton)).complete_file_bytes)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    server = HTTPServer(host="127.0.0.1", port=0)
    server.expect_request(f"/models/{path.name}").respond_with_handler(Served(path).handler)
    server.start()
    return server, server.url_for(f"/models/{path.name}")


SIZES = (("1280x720", ""), ("1920x1080", "-1920x1080"))


def states(docs: Path) -> None:
    """The README's five states, each at both sizes."""
    for size, suffix in SIZES:
        at = ("--size", size)
        screenshot(docs / f"demo{suffix}.png", *at, model=os.path.relpath(demo_model_path(), ROOT))
        screenshot(docs / f"eight-b{suffix}.png", *at)
        screenshot(docs / f"slow{suffix}.png", "--budget", "16G", *at, name=BIG_MODEL)
        screenshot(docs / f"priced{suffix}.png", "--priced", "Q4_K_S", *at)
        with tempfile.TemporaryDirectory() as scratch:
            mixtral = write_gguf(Path(scratch) / "mixtral-8x7b-instruct-v0.1.Q4_K_M.gguf", MIXTRAL_8X7B, "header_only")[0]
            screenshot(docs / f"mixtral-rtx4090{suffix}.png", "--preset", "RTX 4090", *at, model=mixtral.name,
                       cwd=mixtral.parent)


def main() -> None:
    docs = ROOT / "docs"
    states(docs)
    if sys.argv[1:] == ["--states"]:
        return
    laptop = ("--size", "1280x720")
    screenshot(docs / "screenshot.png", "--budget", "6G")
    screenshot(docs / "quants.png", "--preset", "RTX 4090", "--view", "quants", *laptop)
    with tempfile.TemporaryDirectory() as scratch:
        server, url = served_by_url(Path(scratch))
        try:
            screenshot(docs / "url.png", *laptop, model=url)
        finally:
            server.stop()
    screenshot(docs / "sweep.png", "--budget", "6G", "--view", "sweep")
    for size, name in (("1280x720", "laptop-1280x720.png"), ("1920x1080", "desktop-1920x1080.png")):
        screenshot(docs / name, "--budget", "6G", "--view", "sweep", "--size", size)
    with tempfile.TemporaryDirectory() as scratch:
        second = str(q8_0_skeleton(Path(scratch)))
        screenshot(docs / "compare.png", "--budget", "9G", "--ctx", "8192", "--view", "compare", "--compare", second)


if __name__ == "__main__":
    main()
