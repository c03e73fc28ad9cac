"""Lazy start: what a command line imports, read from `python -X importtime` (which modules, never how long).

`--version`, `help` and a bad argument import nothing heavy; a command imports what it uses: the
GGUF reader without numpy or the rest of gguf-py, the HTTP and Hugging Face clients only for a
remote model, psutil only when the machine is probed off Linux, pynvml only where NVIDIA's driver
library loads, Qt never. The times are `benchmarks/bench_cli.py`'s business.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys

import pytest

from gguf_budget.core.machine.probe import NVML_LIBRARY

HEAVY = frozenset({"httpx", "huggingface_hub", "numpy", "gguf", "PySide6", "pyqtgraph", "psutil", "yaml", "pynvml"})
MODEL = ["--catalog", "llama-3.1-8b-instruct"]


def _driver_library_loads() -> bool:
    try:
        ctypes.CDLL(NVML_LIBRARY)
    except OSError:
        return False
    return True


PROBE = ({"pynvml"} if _driver_library_loads() else set()) | (set() if sys.platform.startswith("linux") else {"psutil"})
"""What probing this machine imports (probe Rules 5 and 6): NVIDIA's binding only where its driver library loads,
psutil only off Linux (Linux's /proc/meminfo holds its figures)."""


def imported_modules(*argv: str, code: str | None = None) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """The modules a fresh interpreter imports to run `gguf-budget ARGV` (or `code`)."""
    program = ["-c", code] if code is not None else ["-m", "gguf_budget.gui.cli", *argv]
    done = subprocess.run([sys.executable, "-X", "importtime", *program], capture_output=True, text=True, timeout=120)
    names = {line.rsplit("|", 1)[1].strip()
             for line in done.stderr.splitlines() if line.startswith("import time:") and "|" in line}
    return names, done


def imported(*argv: str, code: str | None = None) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """The top-level packages a fresh interpreter imports to run `gguf-budget ARGV` (or `code`)."""
    names, done = imported_modules(*argv, code=code)
    return {name.split(".")[0] for name in names}, done


@pytest.mark.parametrize("argv", [
    ["--version"],
    ["help"],
    ["help", "plan"],
    ["plan", *MODEL, "--budget", "lots"],
    ["fit", *MODEL, "--gpu-layers", "-3"],
    ["no-such-file.gguf", "--budget", "lots"],
], ids=["version", "help", "help-plan", "bad-plan-argument", "bad-fit-argument", "bad-window-argument"])
def test_starting_and_refusing_import_nothing_heavy(argv):
    names, done = imported(*argv)
    assert done.returncode in (0, 2), done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert names & HEAVY == set()


@pytest.mark.parametrize("argv, allowed", [
    (["plan", *MODEL, "--budget", "6G", "--no-measure"], set()),
    (["inspect", *MODEL, "--json"], set()),
    (["sweep", *MODEL, "--no-measure"], set()),
    (["fit", *MODEL, "--no-measure"], PROBE),
], ids=["plan", "inspect", "sweep", "fit"])
def test_a_command_on_a_local_model_imports_only_what_it_uses(argv, allowed):
    names, done = imported(*argv)
    assert done.returncode in (0, 3), done.stderr[-2000:]
    assert names & HEAVY == allowed


FULL_LOAD = {"core.fit.types", "core.fit.server.session", "core.fit.server.holdings", "core.fit.buffers.sched", "core.fit.ctx.auto_ctx"}
"""The full load's records, llama-server's session replay, llama.cpp's scheduler and the auto ctx."""
LLAMA_WORDS = {"core.llama_words.options", "core.llama_words.reader"}
"""llama.cpp's option table and the reader of its command lines."""
RUN_IT = {"core.views.run_it", "core.quant.would_fit", "core.quant.ladder", "core.quant.mix"}
"""The "Run it" line and the quant ladder a refused full load's line may price."""


@pytest.mark.parametrize("argv, needed, not_needed", [
    (["plan", *MODEL, "--budget", "6G", "--no-measure"], "core.plan.ledger",
     FULL_LOAD | LLAMA_WORDS | RUN_IT | {"core.speed.backend_speed", "core.remote.cache", "core.speed.server_speed"}),
    (["fit", *MODEL, "--no-gpu", "--no-measure"], "core.fit.ctx.auto_ctx",
     {"core.llama_words.reader", "core.speed.backend_speed", "core.remote.cache"} | RUN_IT),
    (["quants", *MODEL, "--no-gpu", "--no-measure"], "core.quant.ladder",
     {"core.llama_words.reader", "core.speed.backend_speed", "core.remote.cache", "core.explorer.headline",
      "core.explorer.ctx_tiers", "core.views.plan_view", "core.views.run_it"}),
], ids=["plan", "fit", "quants"])
def test_a_command_imports_none_of_the_modules_its_answer_does_not_use(argv, needed, not_needed):
    """Each module named costs its import on every call (`benchmarks/bench_cli.py`): a plan prices no full load and
    reads no llama.cpp command; `fit` and `quants` read one only when given, and price GPU lines only for a GPU;
    the "Run it" line and the quant ladder are `--print-command`'s; `quants` prints no headline or context tiers."""
    names, done = imported_modules(*argv)
    assert done.returncode in (0, 3), done.stderr[-2000:]
    assert f"gguf_budget.{needed}" in names
    assert {f"gguf_budget.{m}" for m in not_needed} & names == set()


@pytest.mark.parametrize("argv, unused", [
    (["plan", *MODEL, "--no-measure"], {"ctypes", "pynvml", "psutil"}),
    (["plan", *MODEL, "--budget", "6G", "--ram-bw", "20G", "--disk-bw", "2G", "--cpu-gflops", "100"],
     {"ctypes", "pynvml", "psutil"}),
    (["fit", *MODEL, "--no-measure"], {"pynvml", "psutil"} - PROBE),
    (["fit", *MODEL, "--no-gpu", "--no-measure"], {"pynvml", "psutil"} - PROBE),
    (["quants", *MODEL, "--no-measure"], {"pynvml", "psutil"} - PROBE),
], ids=["plan-default-budget", "plan-streamed-ram", "fit", "fit-no-gpu", "quants"])
def test_a_command_probes_no_more_than_its_answer_reads(argv, unused):
    """`plan` reads only host RAM (its default budget, the free RAM a streamed plan pages into: probe Rule 7), so it
    reads no GPU; `fit` and `quants` read the GPUs, through pynvml only where NVIDIA's driver library loads (Rule 5),
    and host RAM from /proc/meminfo on Linux (Rule 6). A command that ran the probe's readers before imported
    ~35 ms of modules it did not use. Each runs as a person's second call does (the first keeps this machine's
    figures: `speed_args` Rule 1)."""
    imported_modules(*argv)
    names, done = imported_modules(*argv)
    assert done.returncode in (0, 3), done.stderr[-2000:]
    assert names & unused == set()


def test_the_header_reader_needs_only_gguf_constants_and_shares_them_with_gguf():
    """gguf-py's constants load without its package (numpy, yaml), as the one module a later `import gguf` uses."""
    code = ("import sys\n"
            "from gguf_budget.core.model.loader import load_model\n"
            "from gguf_budget.resources import demo_model_path\n"
            "spec = load_model(demo_model_path())\n"
            "assert spec.n_layer > 0\n"
            "assert 'gguf' not in sys.modules and 'numpy' not in sys.modules, sorted(sys.modules)\n"
            "from gguf_budget.core.gguf import constants\n"
            "import gguf\n"
            "assert gguf.GGMLQuantizationType is constants.GGMLQuantizationType\n"
            "assert sys.modules['gguf.constants'].Keys is constants.Keys\n"
            "assert gguf.GGUFWriter is not None\n")
    names, done = imported(code=code)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_core_package_gives_every_name_it_lists_from_its_module():
    """`gguf_budget.core` loads its names on first use; each is the object its module defines."""
    import importlib

    import gguf_budget.core as core

    assert set(core.__all__) == {"__version__", *core._HOME}
    for name in core.__all__:
        home = core._HOME.get(name, "version")
        assert getattr(core, name) is getattr(importlib.import_module(f"gguf_budget.core.{home}"), name)
    with pytest.raises(AttributeError):
        core.no_such_name  # noqa: B018


def test_the_window_starts_without_the_remote_clients():
    """The window's modules import the HTTP and Hugging Face clients only when a URL is opened."""
    names, done = imported(code="import gguf_budget.gui.qt.app")
    assert done.returncode == 0, done.stderr[-2000:]
    assert names & {"httpx", "huggingface_hub", "gguf"} == set()


def test_the_window_draws_its_first_plan_without_pyqtgraph(tmp_path):
    """The ledger chart is painted by the window itself and the sweep chart is built with the first sweep: the
    plotting library and numpy (~350 ms of every launch) are imported only when the sweep dock is shown; the HTTP
    client (~20 ms) only when a measurement asks a llama-server."""
    code = f"""
import sys
from PySide6.QtCore import QEventLoop, QSettings
from PySide6.QtWidgets import QApplication
from gguf_budget.core.machine.bandwidth import Bandwidths
from gguf_budget.gui.qt.app import application, compose
from gguf_budget.resources import demo_model_path
app = application()
settings = QSettings({str(tmp_path / "s.ini")!r}, QSettings.Format.IniFormat)
explorer = compose(settings, bandwidth_backend=lambda path: (Bandwidths(), ()), log_folder=__import__("pathlib").Path({str(tmp_path)!r}))
window = explorer.window
loop = QEventLoop()
window.modelLoaded.connect(loop.quit)
window.show()
window.open_path(str(demo_model_path()))
loop.exec()
while window.session.view.plan is None or window.plan_pending():
    QApplication.processEvents()
QApplication.processEvents()
assert window.body.plan.chart.isVisible()
print("drawn", "pyqtgraph" in sys.modules)
"""
    names, done = imported(code=code)
    assert done.returncode == 0 and "drawn" in done.stdout, done.stderr[-2000:]
    assert "PySide6" in names and names & {"pyqtgraph", "numpy", "http", "ssl", "email"} == set()


def test_a_command_run_as_the_program_keeps_the_collector_off_what_its_import_made():
    """cli Rule 8: the program's own run imports its command with the collector paused and freezes what the import
    made (tens of thousands of objects), so no collection runs during the import and the command's own collections
    walk none of it; a caller passing its arguments keeps its collector as it was."""
    code = ("import gc, sys\n"
            "from gguf_budget.gui.cli import main\n"
            "import gguf_budget.gui.cli.commands as commands\n"
            "loading = []\n"
            "load = commands.Command.load\n"
            "def counted(self):\n"
            "    gc.callbacks.append(lambda phase, info: loading.append(phase))\n"
            "    try:\n"
            "        return load(self)\n"
            "    finally:\n"
            "        gc.callbacks.clear()\n"
            "commands.Command.load = counted\n"
            f"main({['fit', *MODEL, '--no-measure', '--host-available', '8G']!r})\n"
            "print('gc', gc.get_freeze_count(), gc.isenabled(), len(loading), file=sys.stderr)\n"
            f"sys.argv = {['gguf-budget', 'fit', *MODEL, '--no-measure', '--host-available', '8G']!r}\n"
            "sys.modules.pop('gguf_budget.gui.cli.commands.fit_cmd')\n"
            "main()\n"
            "print('gc', gc.get_freeze_count(), gc.isenabled(), len(loading), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    hosted, program = (line.split()[1:] for line in done.stderr.splitlines() if line.startswith("gc "))
    assert hosted[:2] == ["0", "True"] and int(hosted[2]) > 0
    assert int(program[0]) > 10_000 and program[1] == "True" and program[2] == hosted[2]
