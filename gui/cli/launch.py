"""`gguf-budget [FILE] [--budget SIZE] [--ctx N] [--screenshot PATH [--view VIEW] [--compare FILE2] [--size WxH]
[--preset NAME]]`: the window.

Rule 1: no FILE opens the bundled demo model; FILE may be any shard of a split model, or a remote
        model (a URL, `hf://…` or `owner/repo:QUANT`, as File ▸ Open URL… takes; a local path wins).
Rule 2: bad arguments (unknown option, a size that does not parse, a missing file) exit 2
        with one line on stderr, before Qt is even imported.
Rule 3: on Linux without a display (no DISPLAY, WAYLAND_DISPLAY or QT_QPA_PLATFORM) the
        window cannot open: that is said in one line (exit 2), not by Qt aborting.
Rule 3b: before Qt starts on X11, the xcb platform plugin's system libraries are checked
        (`xcb_check`): a missing one is one line naming it and the package to install (exit 2),
        not Qt's abort and core dump.
Rule 4: `--screenshot PATH` renders the window offscreen once the model is planned and the
        hardware probed, writes a PNG and exits 0 — with fresh settings, so a screenshot
        never depends on what the user last did. A model that fails to load exits 2.
Rule 5: with `--screenshot`, `--view sweep` shows the budget sweep, `--view compare` the
        comparison with FILE2 (`--compare`) and `--view quants` the Quants dock, each once its
        numbers are drawn; `plan` (the default) shows the plan without any dock. They need `--screenshot`.
Rule 6: `--size WxH` (with `--screenshot`) renders at that window size, 1280x720 up to 7680x4320
        (default 1440x900), so the README's laptop and desktop shots are made by the app.
Rule 7: `--preset NAME` (with `--screenshot`) judges a hypothetical machine from the preset table,
        as the machine panel's Preset box does ("RTX 4090", "M4 Max 128GB", or GPUs comma-separated);
        a name not in the table exits 2 with one line.
Rule 8: the window's pure core (WINDOW_CORE and what it imports: ~140 modules, no Qt) is imported before
        Qt: PySide6's import hook reads the source of every module imported after it, to see whether it
        uses PySide (~0.25 ms a module, ~45 ms of a launch). Then Qt starts (its font database filling on
        a thread while the window's Qt modules import), then the window. Run as the program itself
        (`own_process`), all of it is imported with the garbage collector paused and then frozen
        (`settled`), as a command's module is.
"""

from __future__ import annotations

import argparse
import ctypes
import os
from contextlib import nullcontext
from importlib import import_module
import sys
import tempfile
from pathlib import Path
from typing import Mapping, Sequence

from gguf_budget.core.errors import ModelLoadError, RequestError
from gguf_budget.core.machine.presets import parse_presets
from gguf_budget.core.remote.refs import names_remote
from gguf_budget.core.regular_file import check_regular
from gguf_budget.core.ranges import BUDGET, CONTEXT, Range
from gguf_budget.resources import demo_model_path

from gguf_budget.gui.cli.args import EXIT_BAD_INPUT, OneLineParser, complain, join_negative_values, ranged
from gguf_budget.gui.cli.log_level import add_log_level_argument
from gguf_budget.gui.cli.settled import settled_imports
from gguf_budget.gui.cli.xcb_check import Loader, family_of, install_hint, missing_libraries, platform_is_xcb, read_os_release

DISPLAY_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
SCREENSHOT_VIEWS = ("plan", "sweep", "compare", "quants")
SHOT_WIDTHS = Range("a screenshot width", 1280, 7680, "pixels")
SHOT_HEIGHTS = Range("a screenshot height", 720, 4320, "pixels")
WINDOW_CORE = tuple(f"gguf_budget.core.{name}" for name in (
    "explorer.session", "explorer.persist", "explorer.ctx_tiers", "explorer.model_key", "explorer.window_size",
    "explorer.messages", "machine.probe", "model.loader", "quant.would_fit", "ini_screen",
    "views.run_it", "views.presets_view", "views.file_label", "llama_words.programs",
))
"""Rule 8: the core modules the window's own modules import (with theirs, nearly all the core it uses)."""


def parse_launch_args(args: Sequence[str]) -> argparse.Namespace:
    """Parse the window's arguments (exits 2 with one line on bad input)."""
    p = OneLineParser(prog="gguf-budget", description="Open the GGUF Budget Explorer window.")
    p.add_argument("file", nargs="?", help="a .gguf file or any shard of a split model, or a URL, hf://… or "
                                           "owner/repo:QUANT (default: the demo)")
    p.add_argument("--budget", type=ranged(BUDGET),
                   help=f"RAM budget, e.g. 512M, 1.5G, 2GiB, {BUDGET.text} (0 = unlimited)")
    p.add_argument("--ctx", type=ranged(CONTEXT), help=f"context, {CONTEXT.text} (default: auto, the most that fits)")
    p.add_argument("--screenshot", metavar="PATH", help="render the window to a PNG offscreen and exit")
    p.add_argument("--size", type=window_size, metavar="WxH",
                   help="with --screenshot: the window size, 1280x720 to 7680x4320 (default: 1440x900)")
    p.add_argument("--view", choices=SCREENSHOT_VIEWS, help="with --screenshot: the view to show (default: plan)")
    p.add_argument("--compare", metavar="FILE2", help="with --screenshot --view compare: the second model")
    p.add_argument("--preset", type=_preset, metavar="NAME",
                   help="with --screenshot: judge a hypothetical machine from the presets, e.g. 'RTX 4090'")
    p.add_argument("--priced", metavar="TYPE",
                   help="with --screenshot: plan FILE's TYPE quantization (e.g. Q4_K_S), priced, not downloaded, as a "
                        "double-click on its Quants row does")
    add_log_level_argument(p)
    options = p.parse_args(join_negative_values(args))
    for path in (options.file, options.compare):
        if path is not None and not (path is options.file and names_remote(path)):
            _check_model_file(p, path)
    if (options.view or options.compare or options.size or options.preset or options.priced) and not options.screenshot:
        p.error("--view, --compare, --size, --preset and --priced need --screenshot")
    if (options.view == "compare") != (options.compare is not None):
        p.error("--view compare and --compare FILE2 go together")
    options.view = options.view or "plan"
    options.file = options.file or str(demo_model_path())
    return options


def window_size(text: str) -> tuple[int, int]:
    """'1280x720' → (1280, 720), each side within SHOT_SIZES (Rule 6); an argparse error otherwise."""
    width, _, height = text.lower().partition("x")
    if not (width.strip().isdigit() and height.strip().isdigit()):
        raise argparse.ArgumentTypeError(f"a window size is WxH, e.g. 1280x720, got {text!r}")
    try:
        return SHOT_WIDTHS.check(int(width)), SHOT_HEIGHTS.check(int(height))
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _preset(text: str) -> str:
    """A preset name the table knows (Rule 7), as typed; an argparse error otherwise."""
    try:
        parse_presets(text)
    except RequestError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def _check_model_file(parser: OneLineParser, path: str) -> None:
    """Only a regular file can be a model: a FIFO would block the loader (one line, exit 2)."""
    try:
        check_regular(path)
    except ModelLoadError as e:
        parser.error(str(e))


def no_display(environ: Mapping[str, str], platform: str) -> bool:
    """True where Qt would abort for want of a display (Linux with no X11/Wayland/platform set)."""
    return platform.startswith("linux") and not any(environ.get(k) for k in DISPLAY_VARIABLES)


def launch(args: Sequence[str], load_library: Loader = ctypes.CDLL, own_process: bool = False) -> int:
    """Parse, check what Qt needs (Rules 2–3b), then open the window or take the screenshot.

    `load_library` is the loader the xcb check asks (ctypes.CDLL unless a test gives one); `own_process`: this
    is the program itself (`cli` Rule 8), so the imports pause the garbage collector (Rule 8).
    """
    options = parse_launch_args(args)
    if options.screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    elif no_display(os.environ, sys.platform):
        complain("gguf-budget: no display to open the window on (set DISPLAY or WAYLAND_DISPLAY); "
                 "--screenshot PATH and the subcommands work without one")
        return EXIT_BAD_INPUT
    if platform_is_xcb(os.environ, sys.platform):
        missing = missing_libraries(load_library)
        if missing:
            complain(f"gguf-budget: {install_hint(missing, family_of(read_os_release()))}")
            return EXIT_BAD_INPUT
    with settled_imports() if own_process else nullcontext():
        for name in WINDOW_CORE:  # Rule 8: before Qt
            import_module(name)
        from gguf_budget.gui.qt.qt_start import application

        application()  # its font database fills on a thread while the window's Qt modules import
        from gguf_budget.gui.qt.app import run_window
    if options.screenshot:
        from gguf_budget.gui.qt.screenshot import run_screenshot

        with tempfile.TemporaryDirectory(prefix="gguf-budget-shot-") as scratch:
            message = run_screenshot(options, Path(scratch) / "settings.ini")
        if message:
            complain(f"gguf-budget: {message}")
            return EXIT_BAD_INPUT
        return 0
    return run_window(options)
