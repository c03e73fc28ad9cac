"""Run a llama.cpp once and watch it: the log it prints, and the peak RSS of its process.

The impure half of "measure now"; `command.py` decides what to run, this module runs it.

Rule 1: the engine's stdout and stderr go to one pipe that a thread reads to its end
        (`capture.OutputCapture`: nothing can stall the engine, and a flood keeps only its head
        and tail, with a marker line between); what arrives is read for progress, and the whole
        is the log kept. Its first line is the command, as `+ argv` (escaped by `safe_text`, so
        a file name that is not UTF-8 or holds a newline is one visible line), like the recorded
        logs. A model whose name could forge log lines is given to llama.cpp as a link of a
        plain name (`model_link`).
Rule 2: on Linux the engine runs under `/usr/bin/time -v` when that exists, so its kernel-
        counted peak RSS ("Maximum resident set size") is appended to the log; psutil polls
        the engine process every POLL_S as well (`peak_rss_polled`), on every platform.
Rule 3: a run ends with the engine's exit, or is stopped (terminate, then kill after
        STOP_GRACE_S) when `cancel` is set or `timeout_s` passes — checked before the exit at
        every poll, so a cancel or timeout that came first always wins; both raise
        `MeasureError` with one line. A non-zero exit is an error too, naming the log's last line.
        A run that completes sends one last progress report from its whole log, so a run
        shorter than one poll still ends on the last stage it printed.
Rule 4: llama-server is started on a free loopback port, asked once (POST /completion) when
        /health answers, then stopped; its memory report comes out as it shuts down. The HTTP client
        (`urllib.request`, with http.client, ssl and email ~20 ms) is imported by the thread that asks,
        not with this module: the window imports it at every launch.
Rule 5: the engine runs in a session of its own (so the terminal's Ctrl-C reaches us, not it),
        with a mark in its environment that every descendant inherits. Its whole family is
        stopped on every way out — done, error, timeout, cancel, Ctrl-C (KeyboardInterrupt), a
        closed window (which cancels) — terminate, then kill after STOP_GRACE_S: the session's
        process group, every descendant seen while it ran, and every process still carrying the
        mark (a `( setsid sleep 777 & )` inside the engine has left both the group and the tree).
        A SIGTERM or SIGHUP to the command is its Ctrl-C (`gui.cli` raises it as one), so the same
        stop runs and the temporary folder goes.
Rule 6: the engine, and /usr/bin/time around it, die with the thread that started them (`core.family`
        Rule 2): a measuring process killed outright leaves no llama.cpp behind.
Rule 7: a program that ends now (the window quitting) calls `kill_runs_now`: every run in progress has its
        session's process group and every descendant seen so far sent SIGKILL at once, with no grace and no
        wait, so quitting never waits on an engine's shutdown; the run's own thread, should it still run,
        ends it as Rule 5 says. (The mark's search of every process, ~0.5 ms a process, is left out: Rule 6
        covers what left the group and the tree where `setpriv` exists.)
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import psutil

from gguf_budget.core.errors import MeasureError
from gguf_budget.core.family import tied_to_parent
from gguf_budget.core.measure.capture import OutputCapture
from gguf_budget.core.measure.command import LOOPBACK, MeasureSettings, completion_request, measure_command
from gguf_budget.core.measure.engine import Engine, EngineKind
from gguf_budget.core.measure.model_link import engine_model_path
from gguf_budget.core.measure.progress import STARTING, Progress, stage_after
from gguf_budget.core.safe_text import safe_text

DEFAULT_TIMEOUT_S = 600.0
POLL_S = 0.05
STOP_GRACE_S = 5.0
TIME_BINARY = "/usr/bin/time"
_READ_CHUNK = 1 << 20
_ERROR_LINE = re.compile(r"^\d+\.\d+\.\d+\.\d+ E |\berror\b", re.IGNORECASE)
FAMILY_MARK = "GGUF_BUDGET_MEASURE_RUN"
"""Rule 5: the environment variable every process of one run carries, with the run's own token."""

ProgressCallback = Callable[[Progress], None]


@dataclass(frozen=True)
class RunOutput:
    """What one run left: the command, its whole log, the polled peak RSS, exit code and duration."""

    command: tuple[str, ...]
    log: str
    peak_rss_polled: int | None
    returncode: int
    seconds: float


def _timed(time_binary: str | None) -> bool:
    """Rule 2: whether the engine runs under GNU time -v (Linux, where it exists)."""
    return bool(time_binary and sys.platform.startswith("linux") and os.access(time_binary, os.X_OK))


def _wrapped(command: tuple[str, ...], time_binary: str | None) -> tuple[str, ...]:
    """Rules 2 and 6: under GNU time -v where it exists, each process tied to its parent's life."""
    if time_binary and _timed(time_binary):
        return tied_to_parent((time_binary, "-v", *tied_to_parent(command)))
    return tied_to_parent(command)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


class _ServerDriver(threading.Thread):
    """Rule 4: waits for /health, asks for one completion, then reports done (or the failure)."""

    def __init__(self, port: int, deadline: float):
        super().__init__(daemon=True)
        self._base = f"http://{LOOPBACK}:{port}"
        self._deadline = deadline
        self.done = threading.Event()
        self.error: str | None = None

    def run(self) -> None:
        import urllib.request  # Rule 4

        try:
            self._wait_healthy()
            body = json.dumps(completion_request()).encode()
            request = urllib.request.Request(f"{self._base}/completion", body, {"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=max(self._deadline - time.monotonic(), 1.0)) as reply:
                reply.read()
        except (OSError, ValueError) as e:
            self.error = f"llama-server did not answer: {e}"
        self.done.set()

    def _wait_healthy(self) -> None:
        import urllib.request  # Rule 4

        while time.monotonic() < self._deadline:
            try:
                with urllib.request.urlopen(f"{self._base}/health", timeout=1.0) as reply:
                    if reply.status == 200:
                        return
            except (OSError, ValueError):
                pass
            time.sleep(0.2)
        raise TimeoutError("no /health answer before the timeout")


def _engine_process(proc: psutil.Popen, wrapped: bool) -> psutil.Process | None:
    """The llama.cpp process itself: the child of /usr/bin/time when wrapped."""
    try:
        if not wrapped:
            return proc
        children = proc.children()
        return children[0] if children else None
    except psutil.Error:
        return None


def _rss(process: psutil.Process | None) -> int | None:
    if process is None:
        return None
    try:
        return int(process.memory_info().rss)
    except psutil.Error:
        return None


class _Family:
    """Rule 5: the engine and everything it started, found again by group, by tree and by mark."""

    def __init__(self, proc: psutil.Popen, token: str):
        self.proc, self._token = proc, token
        self._seen: dict[int, psutil.Process] = {}

    def look(self) -> None:
        """Remember the descendants alive now (called at every poll)."""
        try:
            for child in self.proc.children(recursive=True):
                self._seen.setdefault(child.pid, child)
        except psutil.Error:
            pass

    def _marked(self) -> list[psutil.Process]:
        found = []
        for p in psutil.process_iter():
            try:
                if p.pid != os.getpid() and p.environ().get(FAMILY_MARK) == self._token:
                    found.append(p)
            except (psutil.Error, OSError):
                continue
        return found

    def _alive(self) -> list[psutil.Process]:
        self.look()
        members = {p.pid: p for p in (*self._seen.values(), *self._marked())}
        members[self.proc.pid] = self.proc  # the engine is reaped through its Popen, which then knows its status
        return [p for p in members.values() if _running(p)]

    def kill_now(self) -> None:
        """Rule 7: SIGKILL to the group, the engine and the descendants seen, without waiting."""
        _signal_group(self.proc.pid, getattr(signal, "SIGKILL", signal.SIGTERM))
        for p in (self.proc, *tuple(self._seen.values())):  # the run's thread may add to it meanwhile
            _quietly(p.kill)

    def stop_engine(self, wrapped: bool) -> None:
        """A served llama-server: only the engine, so /usr/bin/time around it still reports."""
        engine = _engine_process(self.proc, wrapped)
        if engine is not None:
            _end([engine])

    def stop_all(self) -> None:
        """Everything of the run that still runs: the group, the tree, the marked (terminate, then kill)."""
        _signal_group(self.proc.pid, signal.SIGTERM)
        _end(self._alive())
        _signal_group(self.proc.pid, getattr(signal, "SIGKILL", signal.SIGTERM))
        leftover = self._alive()
        for p in leftover:
            _quietly(p.kill)
        psutil.wait_procs(leftover, timeout=STOP_GRACE_S)


_RUNS: set[_Family] = set()
"""Rule 7: the families of the runs in progress in this process."""
_RUNS_LOCK = threading.Lock()


def kill_runs_now() -> int:
    """Rule 7: SIGKILL to every run in progress (its group and the descendants seen), waiting for none; how many."""
    with _RUNS_LOCK:
        running = list(_RUNS)
    for family in running:
        family.kill_now()
    return len(running)


def _running(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _quietly(action: Callable[[], object]) -> None:
    try:
        action()
    except (psutil.Error, OSError):
        pass


def _signal_group(leader: int, sig: int) -> None:
    """The run's session is its own process group, led by the process we started (Rule 5)."""
    if hasattr(os, "killpg"):
        _quietly(lambda: os.killpg(leader, sig))


def _end(processes: list[psutil.Process]) -> None:
    """Terminate, then kill after STOP_GRACE_S."""
    for p in processes:
        _quietly(p.terminate)
    _, alive = psutil.wait_procs(processes, timeout=STOP_GRACE_S)
    for p in alive:
        _quietly(p.kill)
    psutil.wait_procs(alive, timeout=STOP_GRACE_S)


UNKNOWN_EXIT = -1
"""The engine's exit status when a stop already reaped it (psutil's wait then answers None)."""


def _exit_code(family: _Family) -> int:
    try:
        code = family.proc.wait(timeout=2 * STOP_GRACE_S)
    except psutil.TimeoutExpired:
        family.stop_all()
        code = family.proc.wait()
    return UNKNOWN_EXIT if code is None else int(code)


def failure_line(log: str) -> str:
    """The line that says why llama.cpp failed: its last error-level line ("… E …" or one
    naming an error), else its last line; /usr/bin/time's block is not llama.cpp's."""
    lines = [line.strip() for line in log.splitlines()
             if line.strip() and not line.startswith(("\t", "Command being timed", "Command exited"))]
    errors = [line for line in lines if _ERROR_LINE.search(line)]
    return (errors or lines or ["(no output)"])[-1][:200]


def run_measurement(
    engine: Engine,
    model_path: str,
    settings: MeasureSettings,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    cancel: threading.Event | None = None,
    progress: ProgressCallback | None = None,
    time_binary: str | None = TIME_BINARY,
) -> RunOutput:
    """Run `engine` on `model_path` with `settings` (Rules 1–5); raises `MeasureError` on failure."""
    port = _free_port() if engine.kind is EngineKind.SERVER else None
    command = measure_command(engine, model_path, settings, port)
    with tempfile.TemporaryDirectory(prefix="gguf-budget-measure-") as folder:
        argv = _wrapped(measure_command(engine, engine_model_path(model_path, Path(folder)), settings, port),
                        time_binary)
        token = secrets.token_hex(16)
        read_end, write_end = os.pipe()
        try:
            proc = psutil.Popen(argv, stdin=subprocess.DEVNULL, stdout=write_end, stderr=write_end,
                                start_new_session=os.name == "posix", env={**os.environ, FAMILY_MARK: token})
        except OSError as e:
            os.close(read_end)
            raise MeasureError(f"could not start {engine.label}: {e}") from None
        finally:
            os.close(write_end)
        capture = OutputCapture(read_end)
        capture.start()
        family = _Family(proc, token)
        with _RUNS_LOCK:
            _RUNS.add(family)
        try:
            output = _watch(family, _timed(time_binary), capture, timeout_s, cancel, progress, port)
        finally:
            family.stop_all()
            with _RUNS_LOCK:
                _RUNS.discard(family)
            capture.join(STOP_GRACE_S)
    header = f"+ {safe_text(shlex.join(command), None)}\n"
    return RunOutput(command, header + output.log, output.peak_rss_polled, output.returncode, output.seconds)


def _watch(
    family: _Family,
    wrapped: bool,
    capture: OutputCapture,
    timeout_s: float,
    cancel: threading.Event | None,
    progress: ProgressCallback | None,
    port: int | None,
) -> RunOutput:
    proc = family.proc
    start = time.monotonic()
    deadline = start + timeout_s
    driver = _ServerDriver(port, deadline) if port is not None else None
    if driver is not None:
        driver.start()
    stage, peak = STARTING, None
    failure: str | None = None
    served = False
    while True:
        if cancel is not None and cancel.is_set():
            failure = "the measurement was cancelled"
        elif time.monotonic() >= deadline:
            failure = f"the measurement timed out after {timeout_s:g} s"
        elif driver is not None and driver.done.is_set():
            failure, served = driver.error, driver.error is None
        if failure or served:
            if served:
                family.stop_engine(wrapped)
            else:
                family.stop_all()
            break
        if proc.poll() is not None:
            break
        family.look()
        rss = _rss(_engine_process(proc, wrapped))
        if rss is not None and (peak is None or rss > peak):
            peak = rss
        stage = stage_after(capture.fresh(), stage)
        if progress is not None:
            progress(Progress(stage[0], stage[1], rss, time.monotonic() - start))
        time.sleep(POLL_S)
    returncode = _exit_code(family)
    family.stop_all()
    capture.join(STOP_GRACE_S)
    log = capture.text()
    if failure:
        raise MeasureError(failure)
    if progress is not None:
        final = stage_after(log, stage)
        progress(Progress(final[0], final[1], peak, time.monotonic() - start))
    if returncode != 0 and not served:
        raise MeasureError(f"llama.cpp exited with code {returncode}: {failure_line(log)}")
    return RunOutput((), log, peak, returncode, time.monotonic() - start)
