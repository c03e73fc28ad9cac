"""SIGTERM and SIGHUP stop every long-running command and the window as Ctrl-C does, and children die with
their parent (issue #37): `measure` under `timeout` left llama.cpp and its temporary folder, a `library`
scan stopped or killed left its worker pool waiting forever, the window's Ctrl-C was a traceback, and a
window ending with `os._exit` left its scratch settings folder. Real processes, real signals; nothing timed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from gguf_factory import ArchDesc, write_gguf
from runnable_model import write_runnable_model
from test_hostile_children import LIMIT_S, HostileEngine, interruptible, wait_for

GONE_S = 30
"""How long a stopped process's children may take to go before the test calls them left behind (a bound, not a check)."""


def command_env(tmp_path: Path) -> dict[str, str]:
    """The test's own temporary folder, so what a run leaves there can be seen."""
    scratch = tmp_path / "tmp"
    scratch.mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(scratch)}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_during_measure_is_one_line_and_stops_the_engine_tree(tmp_path, sig):
    engine = HostileEngine(tmp_path / "engine", "sleep 600\n")
    model = write_runnable_model(tmp_path / "tiny.gguf")
    try:
        child = subprocess.Popen([sys.executable, "-m", "gguf_budget.gui.cli", "measure", str(model), "--llama",
                                  str(engine.path), "--ctx", "256", "--gpu-layers", "0"], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, env=command_env(tmp_path))
        wait_for(engine.started)
        child.send_signal(sig)
        out, err = child.communicate(timeout=LIMIT_S)
        assert (child.returncode, out, err) == (128 + sig, "", f"gguf-budget: stopped by {sig.name}\n")
        assert engine.survivors() == []
        assert list((tmp_path / "tmp").iterdir()) == []
    finally:
        engine.cleanup()


STOPPED_DURING_RUN = """
import os, signal, sys, time
import gguf_budget.gui.cli as cli
from gguf_budget.gui.cli.commands import COMMANDS
module = COMMANDS[sys.argv[2]].load()
def run(args):
    os.kill(os.getpid(), int(sys.argv[1]))
    time.sleep(3600)
module.run = run
sys.exit(cli.main(sys.argv[2:]))
"""
ARGS = {"evidence": ["run.log"], "hw": [], "library": []}


@pytest.mark.parametrize("command", ["inspect", "plan", "sweep", "fit", "hw", "quants", "library", "evidence",
                                     "measure"])
def test_sigterm_in_any_command_is_one_line(command):
    from gguf_budget.resources import demo_model_path

    args = ARGS.get(command, [str(demo_model_path())])
    done = subprocess.run([sys.executable, "-c", STOPPED_DURING_RUN, str(int(signal.SIGTERM)), command, *args],
                          capture_output=True, text=True, timeout=LIMIT_S)
    assert (done.returncode, done.stdout, done.stderr) == (143, "", "gguf-budget: stopped by SIGTERM\n")


def _workers(pid: int) -> list[psutil.Process]:
    try:
        return [p for p in psutil.Process(pid).children() if "spawn_main" in " ".join(p.cmdline())]
    except psutil.Error:
        return []


def _gone(processes: list[psutil.Process]) -> bool:
    return not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in processes)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_library_scan_stopped_or_killed_leaves_no_worker(tmp_path, sig):
    """The pool's workers each hold their own end of its queue, so they never saw it close: orphaned forever."""
    folder = tmp_path / "models"
    folder.mkdir()
    big = ArchDesc(n_layer=32, n_embd=4096, n_ff=14336, n_head=32, n_head_kv=8, n_vocab=32000, context_length=8192)
    for i in range(40):
        write_gguf(folder / f"m{i}.gguf", big, "header_only")
    env = {**command_env(tmp_path), "GGUF_BUDGET_CACHE_DIR": str(tmp_path / "cache")}
    child = subprocess.Popen([sys.executable, "-m", "gguf_budget.gui.cli", "library", "--add", str(folder)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    wait_for(lambda: len(_workers(child.pid)) >= 2 or child.poll() is not None)
    workers = _workers(child.pid)
    assert workers, "the scan ended before its workers were seen"
    child.send_signal(sig)
    _, err = child.communicate(timeout=LIMIT_S)
    assert child.returncode == (143 if sig == signal.SIGTERM else -signal.SIGKILL)
    if sig == signal.SIGTERM:
        assert err == "gguf-budget: stopped by SIGTERM\n"
    try:
        wait_for(lambda: _gone(workers), GONE_S)
    finally:
        for p in workers:
            if p.is_running():
                p.kill()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_the_window_ends_on_a_stop_signal_with_one_line_and_leaves_no_scratch(tmp_path, sig):
    """Its config folder is a file, so its settings live in a scratch folder for the run (removed at the end)."""
    not_a_folder = tmp_path / "config"
    not_a_folder.write_text("a file where the config folder should be")
    env = {**command_env(tmp_path), "XDG_CONFIG_HOME": str(not_a_folder), "QT_QPA_PLATFORM": "offscreen"}
    child = subprocess.Popen([sys.executable, "-m", "gguf_budget.gui.cli"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env, preexec_fn=interruptible)
    scratch = tmp_path / "tmp"
    wait_for(lambda: any(p.name.startswith("gguf-budget-settings-") for p in scratch.iterdir()) or child.poll() is not None)
    child.send_signal(sig)
    out, err = child.communicate(timeout=LIMIT_S)
    words = "gguf-budget: interrupted" if sig == signal.SIGINT else f"gguf-budget: stopped by {sig.name}"
    assert child.returncode == 128 + sig and out == ""
    assert [line for line in err.splitlines() if "propagateSizeHints" not in line and "settings" not in line] == [words]
    assert [p.name for p in scratch.iterdir()] == []


def test_a_disk_full_everywhere_leaves_no_cut_copy_of_the_log(tmp_path):
    """The store, the temporary folder, the current folder and home all on one small tmpfs with 16 KiB left,
    and a log of 100 KB: no copy can be kept whole, and none is left cut (three truncated copies were)."""
    from test_hostile_children import _full_tmpfs_prefix

    engine = HostileEngine(tmp_path / "engine", "head -c 100000 /dev/zero | tr '\\0' x; echo\n")
    model = write_runnable_model(tmp_path / "tiny.gguf")
    full = tmp_path / "full"
    full.mkdir()
    prefix = _full_tmpfs_prefix(full)
    inside = (f'rm "{full}/fill"; head -c 49152 /dev/zero > "{full}/fill"; cd "{full}" && "$0" -m gguf_budget.gui.cli '
              f'measure "$1" --llama "$2" --ctx 256 --gpu-layers 0; echo "exit $?"; cd "{full}" && find . -type f -size +0')
    env = {**os.environ, "GGUF_BUDGET_DATA_DIR": str(full), "TMPDIR": str(full), "HOME": str(full)}
    try:
        done = subprocess.run([*prefix, "sh", "-c", inside, sys.executable, str(model), str(engine.path)],
                              capture_output=True, text=True, timeout=LIMIT_S, env=env)
    finally:
        engine.cleanup()
    assert "the log could not be kept either" in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stdout.split() == ["exit", "2", "./fill"]


def test_sigterm_mid_download_leaves_no_partial_folder(tmp_path):
    """The header arrives a byte at a time; the command is stopped while its scratch folder exists."""
    from http_models import RawServer

    def drip(server, conn, request):
        if not server.send(conn, b"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-1048575/4000000\r\n"
                                 b"Content-Length: 1048576\r\n\r\n"):
            return
        for _ in range(100_000):
            if not server.send(conn, b"\0"):
                return
            time.sleep(0.01)

    server = RawServer(drip)
    cache = tmp_path / "cache"
    try:
        child = subprocess.Popen([sys.executable, "-m", "gguf_budget.gui.cli", "inspect", server.url()],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 env={**command_env(tmp_path), "GGUF_BUDGET_CACHE_DIR": str(cache)})
        wait_for(lambda: any(".partial-" in str(p) for p in cache.rglob("*")) or child.poll() is not None)
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=LIMIT_S)
    finally:
        server.close()
    assert (child.returncode, out, err) == (143, "", "gguf-budget: stopped by SIGTERM\n")
    assert [p for p in cache.rglob("*") if ".partial-" in str(p)] == []


def test_a_measure_killed_outright_takes_its_engine_with_it(tmp_path):
    """SIGKILL leaves the command no way out: the engine (and /usr/bin/time around it) must die with it."""
    engine = HostileEngine(tmp_path / "engine", "sleep 600\n")
    model = write_runnable_model(tmp_path / "tiny.gguf")

    def engines() -> list[psutil.Process]:
        found = []
        for p in psutil.process_iter(["cmdline"]):
            if str(engine.path) in " ".join(p.info["cmdline"] or ()) and p.pid != os.getpid():
                found.append(p)
        return found

    try:
        child = subprocess.Popen([sys.executable, "-m", "gguf_budget.gui.cli", "measure", str(model), "--llama",
                                  str(engine.path), "--ctx", "256", "--gpu-layers", "0"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, env=command_env(tmp_path))
        wait_for(engine.started)
        running = [p for p in engines() if p.pid != child.pid]
        assert running
        child.kill()
        child.wait(timeout=LIMIT_S)
        wait_for(lambda: _gone(running), GONE_S)
    finally:
        for p in engines():
            p.kill()
        engine.cleanup()
