"""Run a llama.cpp once and watch it: the log it prints, and the peak RSS of its process.

The impure half of "measure now"; `command.py` decides what to run, this module runs it.

Rule 1: the engine's stdout and stderr go to one temporary file (no pipe can fill up and
        stall it); the file is read as it grows for progress and is the log kept. Its first
        line is the command, as `+ argv`, like the recorded logs in the shared fixtures.
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
        /health answers, then stopped; its memory report comes out as it shuts down.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable

import psutil

from gguf_budget.core.errors import BudgetError
from gguf_budget.core.measure.command import LOOPBACK, MeasureSettings, completion_request, measure_command
from gguf_budget.core.measure.engine import Engine, EngineKind
from gguf_budget.core.measure.progress import STARTING, Progress, stage_after

DEFAULT_TIMEOUT_S = 600.0
POLL_S = 0.05
STOP_GRACE_S = 5.0
TIME_BINARY = "/usr/bin/time"
_READ_CHUNK = 1 << 20
_ERROR_LINE = re.compile(r"^\d+\.\d+\.\d+\.\d+ E |\berror\b", re.IGNORECASE)

ProgressCallback = Callable[[Progress], None]


class MeasureError(BudgetError):
    """A measurement did not complete: timed out, cancelled, or the engine failed (one line)."""


@dataclass(frozen=True)
class RunOutput:
    """What one run left: the command, its whole log, the polled peak RSS, exit code and duration."""

    command: tuple[str, ...]
    log: str
    peak_rss_polled: int | None
    returncode: int
    seconds: float


def _wrapped(command: tuple[str, ...], time_binary: str | None) -> tuple[str, ...]:
    """Rule 2: under GNU time -v where it exists (Linux)."""
    if time_binary and sys.platform.startswith("linux") and os.access(time_binary, os.X_OK):
        return (time_binary, "-v", *command)
    return command


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


class _LogTail:
    """Reads what the engine has appended to its log file since the last call."""

    def __init__(self, path: Path):
        self._file: IO[bytes] = open(path, "rb")
        self.parts: list[str] = []

    def read_new(self) -> str:
        data = self._file.read(_READ_CHUNK)
        text = data.decode("utf-8", errors="replace")
        if text:
            self.parts.append(text)
        return text

    def rest(self) -> str:
        while self.read_new():
            pass
        self._file.close()
        return "".join(self.parts)


class _ServerDriver(threading.Thread):
    """Rule 4: waits for /health, asks for one completion, then reports done (or the failure)."""

    def __init__(self, port: int, deadline: float):
        super().__init__(daemon=True)
        self._base = f"http://{LOOPBACK}:{port}"
        self._deadline = deadline
        self.done = threading.Event()
        self.error: str | None = None

    def run(self) -> None:
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


def _stop(proc: psutil.Popen, wrapped: bool, gently: bool) -> None:
    """Terminate, then kill after STOP_GRACE_S. Gently (a served llama-server) stops only the
    engine, so /usr/bin/time around it still reports; otherwise the whole tree goes."""
    engine = _engine_process(proc, wrapped)
    try:
        family = [engine] if gently and engine is not None else [*proc.children(recursive=True), proc]
    except psutil.Error:
        family = [proc]
    for p in family:
        try:
            p.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(family, timeout=STOP_GRACE_S)
    for p in alive:
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=STOP_GRACE_S)


def _exit_code(proc: psutil.Popen, wrapped: bool) -> int:
    try:
        return int(proc.wait(timeout=2 * STOP_GRACE_S))
    except psutil.TimeoutExpired:
        _stop(proc, wrapped, gently=False)
        return int(proc.wait())


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
    """Run `engine` on `model_path` with `settings` (Rules 1–4); raises `MeasureError` on failure."""
    port = _free_port() if engine.kind is EngineKind.SERVER else None
    command = measure_command(engine, model_path, settings, port)
    argv = _wrapped(command, time_binary)
    with tempfile.TemporaryDirectory(prefix="gguf-budget-measure-") as folder:
        log_path = Path(folder) / "llama.log"
        log_path.write_text(f"+ {shlex.join(command)}\n", encoding="utf-8")
        with open(log_path, "ab") as sink:
            try:
                proc = psutil.Popen(argv, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink)
            except OSError as e:
                raise MeasureError(f"could not start {engine.label}: {e}") from None
        return _watch(proc, argv != command, command, _LogTail(log_path), timeout_s, cancel, progress, port)


def _watch(
    proc: psutil.Popen,
    wrapped: bool,
    command: tuple[str, ...],
    tail: _LogTail,
    timeout_s: float,
    cancel: threading.Event | None,
    progress: ProgressCallback | None,
    port: int | None,
) -> RunOutput:
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
            _stop(proc, wrapped, gently=served)
            break
        if proc.poll() is not None:
            break
        rss = _rss(_engine_process(proc, wrapped))
        if rss is not None and (peak is None or rss > peak):
            peak = rss
        stage = stage_after(tail.read_new(), stage)
        if progress is not None:
            progress(Progress(stage[0], stage[1], rss, time.monotonic() - start))
        time.sleep(POLL_S)
    returncode = _exit_code(proc, wrapped)
    log = tail.rest()
    if failure:
        raise MeasureError(failure)
    if progress is not None:
        final = stage_after(log, stage)
        progress(Progress(final[0], final[1], peak, time.monotonic() - start))
    if returncode != 0 and not served:
        raise MeasureError(f"llama.cpp exited with code {returncode}: {failure_line(log)}")
    return RunOutput(command, log, peak, returncode, time.monotonic() - start)
