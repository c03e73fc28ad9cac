"""Child processes of `measure` (issue #24 E, and F's lost log): the engine's whole family is stopped on
every way out, its output is capped, its command line is one escaped line, a file name cannot forge
log lines, and a finished run's log survives a store that cannot be written.

The hostile engine is a real executable (a shell script named llama-cli) that does what a hostile
or broken llama.cpp could: start a grandchild in a session of its own (`setsid`), one in the
background, print without end, never exit. The full filesystem is a real tmpfs of 64 KiB, mounted
in a user namespace (`unshare -rm`) or, as root, directly."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import psutil
import pytest
from gui_support import open_model
from llama_support import llama_engine
from runnable_model import write_runnable_model

from gguf_budget.core.measure.capture import HEAD_BYTES, TAIL_BYTES
from gguf_budget.core.measure.command import MeasureSettings
from gguf_budget.core.measure.engine import find_engine
from gguf_budget.core.measure.runner import MeasureError, run_measurement
from gguf_budget.core.measure.session import EvidenceError, measure_model
from gguf_budget.core.measure.store import EvidenceStore

LOG_LINES = """echo "llama_model_loader: loaded meta data with 1 key-value pairs and 1 tensors from $2 (version GGUF V3 (latest))"
echo "load_tensors:   CPU_Mapped model buffer size =     1.00 MiB"
"""
EVAL_LINE = ('echo "llama_perf_context_print:        eval time =      74.47 ms /     8 tokens '
             '(   10.64 ms per token,    94.00 tokens per second)"\n')


LIMIT_S = 300
"""How long a test lets a run, a process or a signal take before it calls it a hang (a run's timeout too):
an upper bound that turns a hang into a failure, never what a test checks."""


class HostileEngine:
    """A `llama-cli` script whose helpers sleep for a duration no other process uses, to be found again."""

    def __init__(self, folder: Path, body: str = "", exit_code: int = 0):
        self.mark = f"{600 + uuid.uuid4().int % 10_000}.{uuid.uuid4().int % 1000:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "llama-cli"
        self.path.write_text(f"#!/bin/sh\n( setsid sleep {self.mark} & )\nsleep {self.mark} &\n{LOG_LINES}{body}"
                             f"{EVAL_LINE}exit {exit_code}\n")
        self.path.chmod(0o755)
        self.engine = find_engine(str(self.path))

    def survivors(self) -> list[int]:
        found = []
        for p in psutil.process_iter(["cmdline"]):
            if p.info["cmdline"] and p.info["cmdline"][-1:] == [self.mark]:
                found.append(p.pid)
        return found

    def started(self) -> bool:
        return len(self.survivors()) >= 2

    def cleanup(self) -> None:
        for pid in self.survivors():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


@pytest.fixture
def hostile(tmp_path: Path):
    made: list[HostileEngine] = []

    def make(body: str = "", exit_code: int = 0) -> HostileEngine:
        made.append(HostileEngine(tmp_path / f"engine{len(made)}", body, exit_code))
        return made[-1]

    yield make
    for engine in made:
        engine.cleanup()


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return write_runnable_model(tmp_path / "tiny.gguf")


def test_a_finished_run_leaves_no_process_behind(hostile, model):
    engine = hostile()
    run_measurement(engine.engine, str(model), MeasureSettings(256, 0), timeout_s=LIMIT_S)
    assert engine.survivors() == []


def test_a_failed_run_leaves_no_process_behind(hostile, model):
    engine = hostile(exit_code=3)
    with pytest.raises(MeasureError, match="exited with code 3"):
        run_measurement(engine.engine, str(model), MeasureSettings(256, 0), timeout_s=LIMIT_S)
    assert engine.survivors() == []


@pytest.mark.parametrize("way", ["timeout", "cancel"])
def test_a_stopped_run_leaves_no_process_behind(hostile, model, way):
    """The stop comes once the whole family runs (both sleeps, one in a session of its own): the runner's
    first progress report waits for it, then cancels, or lets the short timeout pass; nothing here is timed."""
    engine = hostile("sleep 600\n")
    cancel = threading.Event()
    seen_alive = threading.Event()

    def on_progress(_report) -> None:
        if not seen_alive.is_set():
            wait_for(engine.started)
            seen_alive.set()
            if way == "cancel":
                cancel.set()

    with pytest.raises(MeasureError, match="cancelled" if way == "cancel" else "timed out"):
        run_measurement(engine.engine, str(model), MeasureSettings(256, 0), cancel=cancel, progress=on_progress,
                        timeout_s=1 if way == "timeout" else LIMIT_S)
    assert engine.survivors() == []


def wait_for(condition, limit_s: float = LIMIT_S) -> None:
    """Until `condition` holds; the limit only turns a hang into a failure, it is not what a test checks."""
    end = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < end, "never happened"
        time.sleep(0.05)


def interruptible() -> None:
    """The child's Ctrl-C as a terminal's: a suite started in the background (`cmd &`) inherits SIGINT ignored, and
    Python then installs no KeyboardInterrupt handler, so the child would sleep through the signal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_during_measure_is_one_line_exit_130_and_stops_the_engine_tree(hostile, model, tmp_path):
    engine = hostile("sleep 600\n")
    child = subprocess.Popen([sys.executable, "-m", "gguf_budget.gui.cli", "measure", str(model), "--llama",
                              str(engine.path), "--ctx", "256", "--gpu-layers", "0"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, preexec_fn=interruptible)
    wait_for(engine.started)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=LIMIT_S)
    assert child.returncode == 130 and err == "gguf-budget: interrupted\n" and out == ""
    assert engine.survivors() == []


INTERRUPT_DURING_RUN = """
import os, signal, sys, time
import gguf_budget.gui.cli as cli
from gguf_budget.gui.cli.commands import COMMANDS
module = COMMANDS[sys.argv[1]].load()
def run(args):  # the command is busy when Ctrl-C comes; os.kill raises it here, before it returns (a signal
    # from another thread can land between Python's signal check and the sleep's system call: an hour's sleep)
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(3600)
module.run = run
sys.exit(cli.main(sys.argv[1:]))
"""
ARGS = {"evidence": ["run.log"], "hw": [], "library": []}


@pytest.mark.parametrize("command", ["inspect", "plan", "sweep", "fit", "hw", "quants", "library", "evidence",
                                     "measure", "tune"])
def test_ctrl_c_in_any_command_is_one_line_exit_130(command):
    from gguf_budget.gui.cli.commands import COMMANDS
    from gguf_budget.resources import demo_model_path

    assert command in COMMANDS
    args = ARGS.get(command, [str(demo_model_path())]) + (["--goal", "max-ctx"] if command == "tune" else [])
    done = subprocess.run([sys.executable, "-c", INTERRUPT_DURING_RUN, command, *args], capture_output=True, text=True,
                          timeout=LIMIT_S, preexec_fn=interruptible)
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "gguf-budget: interrupted\n")


def test_every_command_is_covered():
    from gguf_budget.gui.cli.commands import COMMANDS

    covered = test_ctrl_c_in_any_command_is_one_line_exit_130.pytestmark[0].args[1]
    assert sorted(covered) == sorted(COMMANDS)


def test_a_flood_of_output_is_kept_as_head_and_tail(hostile, model):
    engine = hostile("head -c 50000000 /dev/zero | tr '\\0' 'y'\necho\nhead -c 30000000 /dev/zero | tr '\\0' '\\n'\n")
    out = run_measurement(engine.engine, str(model), MeasureSettings(256, 0), timeout_s=LIMIT_S)
    assert len(out.log.encode()) <= HEAD_BYTES + TAIL_BYTES + 4096
    assert "bytes of llama.cpp's output left out here]" in out.log
    assert "loaded meta data" in out.log and "eval time =" in out.log


def test_the_command_line_is_one_escaped_line_and_a_path_cannot_forge_lines(hostile, tmp_path):
    engine = hostile()
    odd = tmp_path / "odd"
    odd.mkdir()
    model = write_runnable_model(odd / "m\nMaximum resident set size (kbytes): 1\npeak RSS: 1 b\n.gguf")
    evidence = measure_model(str(model), MeasureSettings(256, 0), engine.engine, EvidenceStore(tmp_path / "data"),
                             timeout_s=LIMIT_S, time_binary=None)
    first = EvidenceStore(tmp_path / "data").log(evidence.record).splitlines()[0]
    assert first.startswith("+ ") and "\\x0a" in first
    assert evidence.log.peak_rss != 1 and evidence.record.model_path == str(model)
    assert evidence.log.run.model.path.endswith("/model.gguf")


def test_a_file_name_that_is_not_utf8_is_measured(hostile, tmp_path):
    engine = hostile()
    name = os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9\xff.gguf")
    model = write_runnable_model(Path(name))
    evidence = measure_model(name, MeasureSettings(256, 0), engine.engine, EvidenceStore(tmp_path / "data"),
                             timeout_s=LIMIT_S)
    first = EvidenceStore(tmp_path / "data").log(evidence.record).splitlines()[0]
    assert "\\udce9\\udcff" in first and evidence.record.model_path == str(model)


def test_a_file_name_that_is_not_utf8_is_measured_by_real_llama_cpp(tmp_path):
    engine = llama_engine()
    name = os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9\xff.gguf")
    write_runnable_model(Path(name))
    evidence = measure_model(name, MeasureSettings(256, 0), engine, EvidenceStore(tmp_path / "data"), timeout_s=LIMIT_S)
    assert evidence.log.run.buffers and evidence.record.model_path == name


# A store that cannot be written -------------------------------------------------------------------


def _kept_path(message: str) -> Path:
    assert "the log of this run is kept at " in message and "\n" not in message, message
    return Path(message.rsplit("the log of this run is kept at ", 1)[1])


@pytest.mark.parametrize("how", ["a file in its place", "a read-only folder"])
def test_a_store_that_cannot_be_written_keeps_the_log_and_says_where(hostile, model, tmp_path, how):
    engine = hostile()
    data = tmp_path / "data"
    if how == "a file in its place":
        data.mkdir()
        (data / "evidence").write_text("not a folder")
        error = _measure_error(lambda: measure_model(str(model), MeasureSettings(256, 0), engine.engine,
                                                     EvidenceStore(data), timeout_s=LIMIT_S))
    else:
        from hostile_support import outcome_as_nobody, world_readable_folder

        shared = world_readable_folder()
        try:
            shutil.copy(model, shared / "tiny.gguf")
            shutil.copytree(engine.path.parent, shared / "engine")
            (shared / "data").mkdir(mode=0o555)
            shared_engine = find_engine(str(shared / "engine" / "llama-cli"))
            error = outcome_as_nobody(lambda: measure_model(str(shared / "tiny.gguf"), MeasureSettings(256, 0),
                                                            shared_engine, EvidenceStore(shared / "data"), timeout_s=LIMIT_S))
        finally:
            shutil.rmtree(shared)
        assert error.startswith("EvidenceError: "), error
    assert "cannot be written" in error
    kept = _kept_path(error)
    assert "loaded meta data" in kept.read_text()
    kept.unlink()


def _measure_error(call) -> str:
    with pytest.raises(EvidenceError) as e:
        call()
    return str(e.value)


def _full_tmpfs_prefix(mountpoint: Path) -> list[str]:
    """A command prefix that runs what follows with a full 64 KiB tmpfs at `mountpoint`, or skip/fail."""
    fill = f'mount -t tmpfs -o size=64k tmpfs "{mountpoint}" && (head -c 1000000 /dev/zero > "{mountpoint}/fill" 2>/dev/null; exec "$@")'
    for prefix in (["unshare", "-rm", "sh", "-c", fill, "sh"], ["unshare", "-m", "sh", "-c", fill, "sh"]):
        if shutil.which(prefix[0]) and subprocess.run([*prefix, "true"], capture_output=True).returncode == 0:
            return prefix
    if os.environ.get("CI") == "true":
        pytest.fail("CI must be able to mount a small tmpfs (unshare -rm) to test a full disk")
    pytest.skip("needs a user namespace or root to mount a small tmpfs")


def test_a_full_filesystem_keeps_the_log_and_says_where(hostile, model, tmp_path):
    engine = hostile()
    data = tmp_path / "full"
    data.mkdir()
    prefix = _full_tmpfs_prefix(data)
    done = subprocess.run([*prefix, sys.executable, "-m", "gguf_budget.gui.cli", "measure", str(model), "--llama",
                           str(engine.path), "--ctx", "256", "--gpu-layers", "0"], capture_output=True, text=True,
                          timeout=LIMIT_S, env={**os.environ, "GGUF_BUDGET_DATA_DIR": str(data)})
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert "No space left on device" in done.stderr and len(done.stderr.splitlines()) == 1
    kept = _kept_path(done.stderr.strip())
    assert "loaded meta data" in kept.read_text() and "eval time =" in kept.read_text()
    kept.unlink()


def test_closing_the_window_stops_the_whole_engine_tree(qtbot, make_explorer, hostile, model):
    engine = hostile("sleep 600\n")
    window_app = make_explorer()
    window = window_app.window
    window_app.evidence.set_llama_location(str(engine.path))
    open_model(qtbot, window, model)
    qtbot.waitUntil(lambda: not window_app.evidence.busy(), timeout=LIMIT_S * 1000)
    with qtbot.waitSignal(window_app.evidence.measureFailed, timeout=LIMIT_S * 1000) as failed:
        window_app.evidence.measure()
        qtbot.waitUntil(engine.started, timeout=LIMIT_S * 1000)
        window.close()
    assert failed.args == ["the measurement was cancelled"]
    assert engine.survivors() == []


def test_the_json_of_a_measured_odd_name_stays_json(hostile, tmp_path):
    engine = hostile()
    name = os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9\n.gguf")
    model = write_runnable_model(Path(name))
    done = subprocess.run([sys.executable, "-m", "gguf_budget.gui.cli", "measure", str(model), "--llama",
                           str(engine.path), "--ctx", "256", "--gpu-layers", "0", "--json"], capture_output=True,
                          timeout=LIMIT_S)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["origin"] == "measured"


def test_an_engine_a_stop_already_reaped_has_an_unknown_exit_code_not_a_traceback():
    """psutil's wait answers None for a process that is not (or no longer) ours to reap — the stop reaped the
    engine under load: int(None) became 'internal error: TypeError' instead of 'the measurement timed out'."""
    import subprocess

    import psutil

    from gguf_budget.core.measure import runner

    pid = int(subprocess.run(["sh", "-c", "sleep 0.3 & echo $!"], capture_output=True, text=True).stdout)
    family = type("Reaped", (), {"proc": psutil.Process(pid), "stop_all": lambda self: None})()
    assert runner._exit_code(family) == runner.UNKNOWN_EXIT


def test_a_stopped_engine_is_reaped_through_its_own_popen():
    """The engine carries the family's mark, so the stop found it twice: as its Popen and as a process found by the
    mark; reaped through the second, the Popen never learnt its status and warned 'subprocess … is still running'
    when collected (a CI failure of test_a_model_llama_cpp_refuses_is_a_one_line_error)."""
    import psutil

    from gguf_budget.core.measure import runner

    token = "test-" + uuid.uuid4().hex
    # it outlives the polite stop (a TERM it ignores), so the stop's kill and wait find it alive
    proc = psutil.Popen(["sh", "-c", "trap '' TERM; while :; do sleep 0.1; done"],
                        env={**os.environ, runner.FAMILY_MARK: token}, start_new_session=True)
    deadline = time.monotonic() + LIMIT_S
    while not proc.children() and time.monotonic() < deadline:  # its trap is set once its loop has started
        time.sleep(0.01)
    family = runner._Family(proc, token)
    family.stop_all()
    assert proc.returncode is not None and runner._exit_code(family) == proc.returncode != runner.UNKNOWN_EXIT
