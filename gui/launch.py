"""`gguf-budget [FILE] [--budget SIZE] [--ctx N] [--screenshot PATH]`: the desktop window.

Rule 1: no FILE opens the bundled demo model; FILE may be any shard of a split model.
Rule 2: bad arguments (unknown option, a size that does not parse, a missing file) exit 2
        with one line on stderr, before Qt is even imported.
Rule 3: on Linux without a display (no DISPLAY, WAYLAND_DISPLAY or QT_QPA_PLATFORM) the
        window cannot open: that is said in one line (exit 2), not by Qt aborting.
Rule 4: `--screenshot PATH` renders the window offscreen once the model is planned and the
        hardware probed, writes a PNG and exits 0 — with fresh settings, so a screenshot
        never depends on what the user last did. A model that fails to load exits 2.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Mapping, Sequence

from gguf_budget.core.units import parse_size
from gguf_budget.resources import demo_model_path

from .cli import EXIT_BAD_INPUT, OneLineParser

DISPLAY_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _ctx(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a positive token count: {text!r}")
    return int(text)


def parse_launch_args(args: Sequence[str]) -> argparse.Namespace:
    """Parse the window's arguments (exits 2 with one line on bad input)."""
    p = OneLineParser(prog="gguf-budget", description="Open the GGUF Budget Explorer window.")
    p.add_argument("file", nargs="?", help="a .gguf file or any shard of a split model (default: the demo)")
    p.add_argument("--budget", type=_size, help="RAM budget, e.g. 512M, 1.5G, 2GiB (0 = unlimited)")
    p.add_argument("--ctx", type=_ctx, help="context in tokens (default: auto, the most that fits)")
    p.add_argument("--screenshot", metavar="PATH", help="render the window to a PNG offscreen and exit")
    options = p.parse_args(list(args))
    if options.file is not None and not Path(options.file).is_file():
        p.error(f"no such file: {options.file}")
    options.file = options.file or str(demo_model_path())
    return options


def no_display(environ: Mapping[str, str], platform: str) -> bool:
    """True where Qt would abort for want of a display (Linux with no X11/Wayland/platform set)."""
    return platform.startswith("linux") and not any(environ.get(k) for k in DISPLAY_VARIABLES)


def launch(args: Sequence[str]) -> int:
    options = parse_launch_args(args)
    if options.screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    elif no_display(os.environ, sys.platform):
        print("gguf-budget: no display to open the window on (set DISPLAY or WAYLAND_DISPLAY); "
              "--screenshot PATH and the subcommands work without one", file=sys.stderr)
        return EXIT_BAD_INPUT
    from .window_app import run_screenshot, run_window

    if options.screenshot:
        with tempfile.TemporaryDirectory(prefix="gguf-budget-shot-") as scratch:
            message = run_screenshot(options, Path(scratch) / "settings.ini")
        if message:
            print(f"gguf-budget: {message}", file=sys.stderr)
            return EXIT_BAD_INPUT
        return 0
    return run_window(options)
