"""Run a real llama-server, drive it over HTTP, and read what it printed and how much memory it held.

The binary is the one `measure` finds (llama_support: CI fails without one). When
$GGUF_BUDGET_LLAMA_LOCK names a file, every run holds an exclusive lock on it (`flock`), so
machines that share their cores run one llama.cpp at a time. The server is started with the
printed command plus `-t 2 -v --port P`, asked for `/health` until it answers, driven, and its
peak resident memory read from /proc (VmHWM) before it is stopped.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import os
import random
import re
import shlex
import socket
import struct
import subprocess
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import httpx
from gguf_factory import ProjectorDesc
from llama_support import llama_engine

from gguf_budget.core.fit.server.session_spec import SessionSpec
from gguf_budget.core.measure.engine import EngineKind

ENV_LOCK = "GGUF_BUDGET_LLAMA_LOCK"
GEMMA3_PROJECTOR = ProjectorDesc(name="gemma3-width-mmproj", n_embd=256, n_ff=1024, n_head=4, n_layer=4, image_size=224,
                                 patch_size=14, text_embd=640)
"""The factory projector the recorded gemma3 run loaded (its output is gemma3-270m's 640 wide)."""
MiB = 1024 * 1024
_BUFFER = re.compile(r"(?P<device>\S+) +(?P<kind>model|KV|RS|output|compute) buffer size = +(?P<mib>\d+\.\d+) MiB")
_CLIP_MODEL = re.compile(r"load_hparams: model size: +(?P<mib>\d+\.\d+) MiB")
_CLIP_COMPUTE = re.compile(r"reserve_compute_meta: +(?P<device>\S+) compute buffer size = +(?P<mib>\d+\.\d+) MiB")
_CHECKPOINT = re.compile(r"created context checkpoint \d+ of \d+ .*size = (?P<mib>\d+\.\d+) MiB")
_CACHE_STATE = re.compile(r"cache state: (?P<n>\d+) prompts, (?P<mib>\d+\.\d+) MiB")
_LOAD = "llama_model_loader: loaded meta data"
_DRAFT = "loading draft model"
_CLIP = "clip_model_loader"


@dataclass(frozen=True)
class Load:
    """The buffers one model load printed: (kind, device) → the MiB texts llama.cpp wrote, in order."""

    buffers: dict[tuple[str, str], list[str]]
    text: str


@dataclass(frozen=True)
class ServerLog:
    """What a verbose llama-server log says about the model, the draft, the projector and the caches."""

    text: str

    def _loads(self) -> list[Load]:
        out = []
        for part in self.text.split(_LOAD)[1:]:
            part = part.split(_DRAFT, 1)[0].split(_CLIP, 1)[0]
            buffers: dict[tuple[str, str], list[str]] = {}
            for m in _BUFFER.finditer(part):  # a sliding-window model prints two KV caches: full, then sliding
                buffers.setdefault((m["kind"], m["device"]), []).append(m["mib"])
            if any(kind == "model" and float(mib[0]) > 0 for (kind, _), mib in buffers.items()):
                out.append(Load(buffers, part))  # fit's dry runs print 0.00 MiB model buffers
        return out

    @property
    def target(self) -> Load:
        return self._loads()[0]

    @property
    def draft(self) -> Load | None:
        after = self.text.split(_DRAFT, 1)
        return ServerLog(after[1]).target if len(after) == 2 else None

    @property
    def projector(self) -> tuple[str, str] | None:
        """(weights MiB, compute MiB) as clip printed them."""
        model, compute = _CLIP_MODEL.search(self.text), _CLIP_COMPUTE.search(self.text)
        return (model["mib"], compute["mib"]) if model and compute else None

    @property
    def checkpoints(self) -> list[str]:
        return [m["mib"] for m in _CHECKPOINT.finditer(self.text)]

    @property
    def cache_states(self) -> list[tuple[int, str]]:
        return [(int(m["n"]), m["mib"]) for m in _CACHE_STATE.finditer(self.text)]


@dataclass(frozen=True)
class ServerRun:
    command: str
    log: ServerLog
    peak_rss: int


def mib(n: int | None) -> str:
    """Bytes as llama.cpp prints MiB (two decimals)."""
    assert n is not None
    return f"{n / MiB:.2f}"


@contextlib.contextmanager
def _llama_lock() -> Iterator[None]:
    path = os.environ.get(ENV_LOCK)
    if not path:
        yield
        return
    with open(path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _vm(pid: int, key: str) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    kib = re.search(rf"{key}:\s+(\d+) kB", status)
    assert kib, status
    return int(kib[1]) * 1024


def _vm_hwm(pid: int) -> int:
    return _vm(pid, "VmHWM")


def rss_now(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of the process now, in bytes."""
    return _vm(pid, "VmRSS"), _vm(pid, "VmHWM")


NOISE = ("llama_graph_n_input_tensors: input tensor", "create_tensor: loading tensor")
"""Per-tensor debug lines (thousands a load, no buffer figures): dropped from the logs kept as fixtures."""


@contextlib.contextmanager
def serving(command: str, log_path: Path, start_timeout: float = 180.0) -> Iterator[tuple[str, int]]:
    """Start `command` (as the tool printed it) on the real llama-server; yield its URL and pid; stop it."""
    argv = shlex.split(command)
    assert argv[0] == "llama-server", command
    binary = llama_engine(EngineKind.SERVER).executable
    port = _free_port()
    full = [binary, *argv[1:], "-t", "2", "-v", "--port", str(port)]
    url = f"http://127.0.0.1:{port}"
    with _llama_lock(), open(log_path, "w") as log:
        log.write(f"+ {shlex.join(full)}\n")
        log.flush()
        proc = subprocess.Popen(full, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            _wait_healthy(proc, url, start_timeout, log_path)
            yield url, proc.pid
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def run_server(command: str, log_path: Path, drive: Callable[[str], None] = lambda url: None,
               start_timeout: float = 180.0) -> ServerRun:
    """Start `command` on the real llama-server, drive it, read its peak RSS, stop it (module doc)."""
    with serving(command, log_path, start_timeout) as (url, pid):
        drive(url)
        peak = _vm_hwm(pid)
    with open(log_path, "a") as log:
        log.write(f"# printed: {command}\n# VmHWM: {peak // 1024} kB\n")
    return ServerRun(command, ServerLog(log_path.read_text(errors="replace")), peak)


def keep_as_fixture(raw: Path, kept: Path) -> None:
    """The log without its per-tensor noise (`NOISE`), every other line as llama.cpp wrote it."""
    with open(raw, errors="replace") as src, open(kept, "w") as dst:
        dst.writelines(line for line in src if not any(n in line for n in NOISE))


def recorded_peak(text: str) -> int:
    """The VmHWM a recorded run wrote at its end, in bytes."""
    m = re.search(r"^# VmHWM: (\d+) kB$", text, re.MULTILINE)
    assert m, "the log has no VmHWM line"
    return int(m[1]) * 1024


def recorded_command(text: str) -> str:
    """The command the tool printed for a recorded run."""
    m = re.search(r"^# printed: (.+)$", text, re.MULTILINE)
    assert m, "the log has no printed command"
    return m[1]


def _wait_healthy(proc: subprocess.Popen[bytes], url: str, timeout: float, log_path: Path) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise AssertionError(f"llama-server exited ({proc.returncode}):\n{log_path.read_text()[-3000:]}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        time.sleep(0.2)
    raise AssertionError(f"llama-server did not come up in {timeout:.0f} s:\n{log_path.read_text()[-3000:]}")


def complete(url: str, prompt: str | list[int], n_predict: int = 4, **extra: object) -> dict[str, object]:
    """One /completion request; the server's JSON answer."""
    r = httpx.post(f"{url}/completion", json={"prompt": prompt, "n_predict": n_predict, "cache_prompt": True, **extra},
                   timeout=600)
    r.raise_for_status()
    answer: dict[str, object] = r.json()
    return answer


WORDS = ("apple", "river", "stone", "cloud", "green", "quiet", "north", "amber", "lamp", "field")


def words(n: int, seed: int) -> str:
    """`n` plain words, different for each seed: prompts that share no prefix."""
    rnd = random.Random(seed)
    return " ".join(f"{rnd.choice(WORDS)}{rnd.randrange(100)}" for _ in range(n))


def fill_prompt_cache(n_prompts: int, n_words: int, last_words: int = 0) -> Callable[[str], None]:
    """Distinct prompts one after the other: each new task saves the slot's last prompt into the cache; then, with
    `last_words`, one more that fills the context."""
    def drive(url: str) -> None:
        for i in range(n_prompts):
            complete(url, f"Story {i}: {words(n_words, i)}", 2)
        if last_words:
            complete(url, f"Story {n_prompts}: {words(last_words, n_prompts)}", 2)
    return drive


def fill_with_letters(n_prompts: int, chars: int, last_chars: int = 0) -> Callable[[str], None]:
    """`fill_prompt_cache` for a byte-level vocabulary (tests/runnable_model.py): a prompt of `chars` letters is that
    many tokens, so the states have a known size; then, with `last_chars`, one prompt that fills the context."""
    def text(i: int, n: int) -> str:
        return f"{i:04d}" + ("abcdefghij" * (n // 10 + 1))[:n - 4]

    def drive(url: str) -> None:
        for i in range(n_prompts):
            complete(url, text(i, chars), 2)
        if last_chars:
            complete(url, text(n_prompts, last_chars), 2)
    return drive


def one_long_prompt(n_words: int) -> Callable[[str], None]:
    """One prompt past a sliding window and a ubatch: the server checkpoints before its end."""
    return lambda url: None if complete(url, words(n_words, 99), 2) else None


def one_image(png: bytes) -> Callable[[str], None]:
    """One chat turn with an image: the projector encodes it."""
    def drive(url: str) -> None:
        image = "data:image/png;base64," + base64.b64encode(png).decode()
        r = httpx.post(f"{url}/v1/chat/completions", timeout=600, json={"max_tokens": 2, "messages": [
            {"role": "user", "content": [{"type": "text", "text": "what is this?"},
                                         {"type": "image_url", "image_url": {"url": image}}]}]})
        r.raise_for_status()
    return drive


def png(width: int, height: int) -> bytes:
    """A plain RGB PNG of that size (one colour), written with zlib: no imaging library needed."""
    raw = b"".join(b"\x00" + bytes((120, 60, 200)) * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


@dataclass(frozen=True)
class Sample:
    """The server's memory right after one request was answered."""

    rss: int
    hwm: int
    prompt_tokens: int
    generated: int


def drive_session(url: str, pid: int, spec: SessionSpec, image: bytes | None = None) -> list[Sample]:
    """Send every request of `spec` in order (`session_spec` Rule 2) as token arrays — each turn resends its
    conversation, generated tokens included — and sample the server's RSS after each answer. A request with
    images sends them amid its own letters (`multimodal_data`), so that conversations share no prefix."""
    samples, history = [], {}
    marker = None
    for r in spec.requests():
        rnd = random.Random(r.conversation * 7919 + r.turn)
        new = [rnd.randrange(3, 259) for _ in range(r.new)]
        tokens = history.get(r.conversation, []) + new
        if r.images:
            marker = marker or httpx.get(f"{url}/props", timeout=60).json()["media_marker"]  # random per server
            letters = "".join(chr(97 + rnd.randrange(26)) for _ in range(r.new))  # its own text around the images:
            text = letters[:r.new // 2] + marker * r.images + letters[r.new // 2:]  # one ending in an image aborts
            # llama-server 0c1e570 (server-context.cpp: GGML_ASSERT(batch.size() > 0))
            data = [base64.b64encode(image or png(224, 224)).decode()] * r.images
            prompt: object = {"prompt_string": text, "multimodal_data": data}
        else:
            prompt = tokens
        answer = httpx.post(f"{url}/completion", timeout=600, json={
            "prompt": prompt, "n_predict": r.generated, "cache_prompt": True, "ignore_eos": True,
            "return_tokens": True, "temperature": 0.0}).raise_for_status().json()
        generated = list(answer.get("tokens") or [])
        history[r.conversation] = tokens + generated
        rss, hwm = rss_now(pid)
        samples.append(Sample(rss, hwm, int(answer.get("tokens_evaluated", 0)), len(generated)))
    return samples
