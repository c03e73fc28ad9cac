"""What the hostile-input tests share: the CLI in a child process that a hang cannot stall, and
filesystem oddities (FIFOs, sockets, symlink loops, folders without search permission)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Sequence

HANG_LIMIT_S = 120
"""Not a speed budget: a child still running after this long is hung (blocked in `open`)."""

NOBODY = 65534


def run_cli(args: Sequence[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`gguf-budget ARGS` in a child process, killed (and the test failed) if it hangs."""
    return subprocess.run([sys.executable, "-m", "gguf_budget.gui.cli", *args], capture_output=True, text=True,
                          timeout=HANG_LIMIT_S, env=env)


def outcome_as_nobody(call: Callable[[], object]) -> str:
    """Run `call` in a forked child that, when we are root, first becomes uid/gid 65534 (root
    reads anything, so permissions only bite for another user). Returns "ok" or
    "ExceptionType: message" — whatever escaped the call."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report and leave without running pytest's clean-up
        os.close(read_end)
        try:
            if os.geteuid() == 0:
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            call()
            report = "ok"
        except BaseException as e:  # noqa: BLE001 - the test wants to see whatever escaped
            report = f"{type(e).__name__}: {e}"
        os.write(write_end, report.encode("utf-8", "backslashreplace"))
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        report = pipe.read().decode()
    os.waitpid(pid, 0)
    return report


def assert_one_line_exit_2(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stdout == "" and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


def make_fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def make_socket(path: Path) -> Path:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()
    return path


def make_symlink_loop(folder: Path) -> Path:
    a, b = folder / "a.gguf", folder / "b.gguf"
    a.symlink_to(b)
    b.symlink_to(a)
    return a


def world_readable_folder() -> Path:
    """A fresh folder every user can traverse (pytest's tmp_path is private to its owner)."""
    folder = Path(tempfile.mkdtemp(prefix="gguf-budget-hostile-"))
    folder.chmod(0o755)
    return folder
