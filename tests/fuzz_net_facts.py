"""Structure-aware fuzzing of two surfaces: what an HTTP server answers, and what a header's facts say.

Each input is drawn from a seed (`random.Random(seed)`), so any finding replays from its number.

HTTP: a scenario is the answers a loopback server gives to the client's successive requests —
a status line (valid, odd, garbage), headers (Content-Range right, shifted, past 2^64, garbage;
Content-Length right, short, long, garbage; Content-Encoding; chunked framing, right or broken;
validators with odd bytes; redirects to loops, odd or unreachable places), a body (the asked bytes
of a real GGUF file, fewer, more, flipped, random, a compression bomb) and a delivery (at once, a
drip, cut, a hang, a reset). A quarter of the inputs name the model as `owner/repo:QUANT`, so the
first answers are the Hub's listing (JSON right, wrong, deep, HTML, endless pages). A fifth run
against a cache already holding the file (revalidation and the offline fallback).

Facts: a structurally valid header (dense or MoE) with one to three `{arch}.*` keys re-encoded
with hostile values (`hostile_headers`), loaded, then fitted, planned and assessed by the library
(and one in eight priced for every quantization), its work counted in Python calls.

`run_http(seed, …)` and `run_facts(seed, …)` return an `Outcome`: `ok`, `one_line` (a project
error of one line), `traceback` (anything else escaped, or an error of several lines), `hang`,
`over_limit` (memory, requests or work past the limits).
"""

from __future__ import annotations

import gzip
import json
import random
import shutil
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from gguf.constants import GGUFValueType as V
from gguf_factory import ArchDesc, write_gguf
from hostile_headers import BASE, FACT_KEYS, INTERESTING_INTS, MOE_BASE, PER_LAYER_KEYS, Value, encode_kv

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetError, BudgetRequest, FitRequest, PlanError, estimate_fit, hypothetical_machine
from gguf_budget.core.library.assess import LibrarySettings, assess
from gguf_budget.core.model.loader import load_model
from gguf_budget.core.plan.search import plan_memory
from gguf_budget.core.remote.limits import FetchLimits
from gguf_budget.core.remote.open import open_remote
from gguf_budget.core.remote.refs import HubQuant, PlainUrl
from gguf_budget.core.quant.ladder import quant_ladder

KIB, GIB = 1 << 10, 1 << 30
LIMITS = FetchLimits(first_chunk=4 * KIB, cap=256 * KIB, timeout_s=0.15, file_s=0.4, retries=1, backoff_s=0,
                     max_requests=16, min_progress=KIB, max_redirects=5, listing_cap=64 * KIB, listing_pages=4,
                     min_rate=64 << 20)
"""Small on purpose: every hostile answer is cut within a second."""
HANG_S = 10.0
"""An input still running after this long is a hang (every deadline above is under a second)."""
MAX_REQUESTS_PER_INPUT = 80
"""More requests than this for one input is an endless loop, whatever the answers said."""
WORK_FACTOR = 4
MODEL = ArchDesc(name="fuzz-net", n_layer=2, n_embd=64, n_ff=128, n_head=2, n_head_kv=1, n_vocab=2000, tokens=2000)
MACHINE = hypothetical_machine(host_available=64 * GIB, gpu_count=2, gpu_total=24 * GIB)
OUTCOMES = ("ok", "one_line", "traceback", "hang", "over_limit")


@dataclass
class Outcome:
    kind: str
    detail: str = ""
    requests: int = 0


class Hang(BaseException):
    """The per-input alarm fired (a BaseException, so no `except Exception` in the code under test eats it)."""


class TooMuchWork(BaseException):
    """More Python calls than the work limit."""


def _alarm(signum: int, frame: object) -> None:
    raise Hang(f"still running after {HANG_S:g} s")


def classify(run: Callable[[], Outcome]) -> Outcome:
    """Run one input under the hang alarm and sort what came out of it."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, HANG_S)
    try:
        return run()
    except Hang as e:
        return Outcome("hang", str(e))
    except TooMuchWork as e:
        return Outcome("over_limit", str(e))
    except MemoryError:
        return Outcome("over_limit", "MemoryError")
    except BudgetError as e:
        text = str(e)
        if "\n" in text or not text.strip():
            return Outcome("traceback", f"not one line: {text!r}"[:500])
        return Outcome("one_line")
    except Exception as e:  # noqa: BLE001 - a fuzz run counts whatever escapes
        return Outcome("traceback", f"{type(e).__name__}: {e}"[:500])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --- HTTP ------------------------------------------------------------------------------------------

@dataclass
class Answer:
    """One response, as bytes to send and how to send them."""

    status: bytes = b"HTTP/1.1 206 Partial Content"
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    body: bytes = b""
    delivery: str = "all"
    chunked: bytes | None = None


Scenario = Callable[[bytes, int], Answer]
"""(request head, request number for this input) -> the answer."""


def _range(head: bytes) -> tuple[int, int]:
    import re

    match = re.search(rb"\r\nrange: bytes=(\d+)-(\d+)", head, re.IGNORECASE)
    return (int(match[1]), int(match[2])) if match else (0, -1)


def _odd_text(rng: random.Random) -> bytes:
    return rng.choice([b"", b"x", b'"abc"', b"W/\"e\"", bytes(range(0x21, 0x7f)), b"\xe9\xff\x80", b"\x01\x7f",
                       b"a" * 3000, b"0" * 25, b"Thu, 01 Jan 1970 00:00:00 GMT", b"not a date"])


def _content_range(rng: random.Random, start: int, body: bytes, size: int) -> bytes:
    end = start + len(body) - 1
    pick = rng.random()
    if pick < 0.6:
        return b"bytes %d-%d/%d" % (start, end, size)
    return rng.choice([b"bytes %d-%d/*" % (start, end), b"bytes %d-%d/%d" % (start + 1, end, size),
                       b"bytes %d-%d/%d" % (start, end, 2**70), b"bytes %d-%d/%d" % (start, end, 2**64 - 1),
                       b"bytes %d-%d/%d" % (start, end, max(end, 0)), b"bytes %d-%d/%d" % (start, max(end - 5, 0), size),
                       b"bytes */%d" % size, b"bytes -1-5/9", b"garbage", b"bytes \xd9\xa0-3/5000", b"",
                       b"bytes %d-%d/%d" % (start, end + 10**30, size), b"bytes %s-%d/%d" % (b"9" * 40, end, size)])


def _body(rng: random.Random, data: bytes, start: int, end: int) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    asked = data[start:end + 1] if end >= start else data[start:]
    kind = rng.choices(["exact", "short", "long", "flipped", "random", "empty", "bomb"],
                       weights=[55, 10, 6, 12, 7, 5, 5])[0]
    if kind == "exact":
        return asked, []
    if kind == "short":
        return asked[:rng.choice([1, 2, 7, 100, max(len(asked) // 3, 1)])], []
    if kind == "long":
        return asked + data[end + 1:end + 1 + rng.choice([1, 10, 4096])] + b"\0" * rng.choice([0, 7]), []
    if kind == "flipped":
        body = bytearray(asked)
        for _ in range(rng.choice([1, 2, 8, 32])):
            if body:
                body[rng.randrange(len(body))] = rng.randrange(256)
        return bytes(body), []
    if kind == "random":
        return rng.randbytes(rng.choice([1, 16, 4096, 70000])), []
    if kind == "empty":
        return b"", []
    bomb = gzip.compress(gzip.compress(b"\0" * rng.choice([1 << 20, 16 << 20])))
    return bomb, [(b"Content-Encoding", rng.choice([b"gzip, gzip", b"gzip"]))]


def _redirect(rng: random.Random, here: bytes, port: int) -> Answer:
    where = rng.choice([here, b"/elsewhere.gguf", b"http://127.0.0.1:%d/m/model.gguf" % port, b"http://[::1",
                        b"http://127.0.0.1:0/x", b"ftp://127.0.0.1/x", b"//127.0.0.1:9/x", b"../" * 50 + b"x",
                        b"/" + b"a" * 5000, b"http://127.0.0.1:%d/\x01" % port, b""])
    return Answer(b"HTTP/1.1 " + rng.choice([b"301 Moved", b"302 Found", b"307 Temporary", b"308 Permanent"]),
                  [(b"Location", where), (b"Content-Length", b"0")])


def _file_answer(rng: random.Random, head: bytes, data: bytes, port: int) -> Answer:
    start, end = _range(head)
    status = rng.choices([b"206 Partial Content", b"200 OK", b"3xx", b"404 Not Found", b"416 Range Not Satisfiable",
                          b"429 Too Many", b"500 Oops", b"503 Busy", b"999 What", b"abc", b"401 No", b"100 Continue"],
                         weights=[60, 8, 6, 2, 3, 2, 2, 2, 1, 1, 1, 1])[0]
    if status == b"3xx":
        return _redirect(rng, head.split(b" ")[1] if b" " in head else b"/", port)
    body, extra = _body(rng, data, start, end) if status == b"206 Partial Content" else (
        (data if rng.random() < 0.7 else data[:rng.randrange(1, len(data))]), []) if status == b"200 OK" else (b"no", [])
    headers = list(extra)
    if status == b"206 Partial Content" and rng.random() < 0.95:
        headers.append((b"Content-Range", _content_range(rng, start, body, len(data))))
    if status == b"416 Range Not Satisfiable":
        headers.append((b"Content-Range", b"bytes */%d" % len(data)))
    if rng.random() < 0.8:
        headers.append((b"ETag", b'"fixed"' if rng.random() < 0.7 else _odd_text(rng)))
    if rng.random() < 0.3:
        headers.append((b"Last-Modified", _odd_text(rng)))
    if rng.random() < 0.2:
        headers.append((b"X-Repo-Commit", _odd_text(rng)))
    if rng.random() < 0.05:
        headers.append((b"Content-Encoding", rng.choice([b"identity", b"br", b"x\x01y", b"gzip, gzip"])))
    answer = Answer(b"HTTP/1.1 " + status if status != b"abc" else b"HTTP/1.1 abc", headers, body)
    framing = rng.random()
    if framing < 0.8:
        length = rng.choices([len(body), len(body) + 100, max(len(body) - 1, 0), -1, 2**62], weights=[90, 3, 3, 2, 2])[0]
        answer.headers.append((b"Content-Length", str(length).encode()))
    elif framing < 0.9:
        answer.chunked = rng.choice([b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n", b"zz\r\n" + body,
                                     b"fffffffffffffffffff\r\n" + body, b"%x\r\n" % (len(body) + 50) + body])
        answer.headers.append((b"Transfer-Encoding", b"chunked"))
    else:
        answer.headers.append((b"Connection", b"close"))
    answer.delivery = rng.choices(["all", "drip", "cut", "hang", "reset"], weights=[88, 3, 4, 2, 3])[0]
    return answer


def _listing_answer(rng: random.Random, file_name: str, port: int) -> Answer:
    kind = rng.choices(["good", "html", "deep", "types", "big", "next-loop", "next-away", "error", "status"],
                       weights=[55, 6, 6, 8, 4, 6, 4, 6, 5])[0]
    headers: list[tuple[bytes, bytes]] = [(b"Content-Type", b"application/json")]
    good = json.dumps([{"type": "file", "path": "README.md"}, {"type": "file", "path": file_name}]).encode()
    status = b"HTTP/1.1 200 OK"
    body = {"good": good, "html": b"<html>sign in</html>", "deep": b"[" * rng.choice([500, 200_000]),
            "types": rng.choice([b'{"path": 1}', b'[{"path": 3}]', b"[1, 2]", b'"x"', b"null", b"\xff\xfe"]),
            "big": b"[" + b'{"type": "file", "path": "x"},' * 4000 + b"{}]", "next-loop": good, "next-away": good,
            "error": b'{"error": "x"}', "status": b""}[kind]
    if kind == "next-loop":
        headers.append((b"Link", b'<http://127.0.0.1:%d/api/models/owner/repo/tree/main?c=1>; rel="next"' % port))
    if kind == "next-away":
        headers.append((b"Link", rng.choice([b'<http://example.invalid/x>; rel="next"', b'<http://[::1>; rel="next"',
                                             b'<\x01>; rel="next"'])))
    if kind == "error":
        status = b"HTTP/1.1 " + rng.choice([b"401 No", b"403 No", b"404 No", b"500 No"])
        headers.append((b"X-Error-Code", rng.choice([b"GatedRepo", b"RevisionNotFound", b"RepoNotFound", b"?"])))
    if kind == "status":
        status = b"HTTP/1.1 " + rng.choice([b"302 Found\r\nLocation: /api/models/owner/repo/tree/main", b"204 None",
                                            b"429 Slow"])
    headers.append((b"Content-Length", str(len(body)).encode()))
    return Answer(status, headers, body)


class FuzzServer:
    """A loopback server answering each request with the current scenario; counts requests per input.
    It is the Hub too: the caller points `HF_ENDPOINT` at `endpoint`."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.scenario: Scenario = lambda head, n: Answer()
        self.count = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, scenario: Scenario) -> None:
        with self.lock:
            self.scenario, self.count = scenario, 0

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(2)
            try:
                while True:  # keep-alive: one connection may carry several requests
                    head = b""
                    while b"\r\n\r\n" not in head:
                        piece = conn.recv(65536)
                        if not piece:
                            return
                        head += piece
                    with self.lock:
                        self.count += 1
                        n, scenario = self.count, self.scenario
                    if not self._send(conn, scenario(head, n)):
                        return
            except OSError:
                return

    def _send(self, conn: socket.socket, a: Answer) -> bool:
        wire = a.status + b"\r\n" + b"".join(k + b": " + v + b"\r\n" for k, v in a.headers) + b"\r\n"
        wire += a.chunked if a.chunked is not None else a.body
        if a.delivery == "all":
            conn.sendall(wire)
            return not any(k == b"Connection" for k, _ in a.headers)
        if a.delivery == "drip":
            for i in range(0, min(len(wire), 400), 4):
                conn.sendall(wire[i:i + 4])
                time.sleep(0.01)
            return False
        if a.delivery == "cut":
            conn.sendall(wire[:max(len(wire) // 2, 1)])
            return False
        if a.delivery == "hang":
            time.sleep(LIMITS.timeout_s + 0.2)
            return False
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.sendall(wire[:len(wire) // 3])
        return False


_MODEL_BYTES: dict[str, bytes] = {}


def model_bytes(folder: Path) -> bytes:
    if "m" not in _MODEL_BYTES:
        _MODEL_BYTES["m"] = write_gguf(folder / "fuzz-net-Q8_0.gguf", MODEL, "complete")[0].read_bytes()
    return _MODEL_BYTES["m"]


def http_scenario(seed: int, data: bytes, port: int) -> tuple[Scenario, bool, bool]:
    """The answers for input `seed`, whether it goes through the Hub, and whether the cache is warm first."""
    rng = random.Random(seed)
    hub = rng.random() < 0.25
    warm = rng.random() < 0.2
    answers: dict[int, Answer] = {}

    def scenario(head: bytes, n: int) -> Answer:
        if n not in answers:
            listing = hub and b"/api/models/" in head.split(b"\r\n", 1)[0]
            answers[n] = _listing_answer(rng, "m-Q4_K_M.gguf", port) if listing else _file_answer(rng, head, data, port)
        return answers[n]

    return scenario, hub, warm


def _good(data: bytes) -> Scenario:
    def answer(head: bytes, n: int) -> Answer:
        if b"/api/models/" in head.split(b"\r\n", 1)[0]:
            body = json.dumps([{"type": "file", "path": "m-Q4_K_M.gguf"}]).encode()
            return Answer(b"HTTP/1.1 200 OK", [(b"Content-Length", str(len(body)).encode())], body)
        start, end = _range(head)
        body = data[start:end + 1]
        return Answer(b"HTTP/1.1 206 Partial Content", [(b"Content-Range", b"bytes %d-%d/%d" % (start, start + len(body) - 1,
                                                                                               len(data))),
                                                         (b"ETag", b'"warm"'), (b"Content-Length", str(len(body)).encode())],
                      body)
    return answer


def run_http(seed: int, server: FuzzServer, folder: Path) -> Outcome:
    """One HTTP input: the scenario of `seed` served, the model read through the client policy."""
    data = model_bytes(folder)
    scenario, hub, warm = http_scenario(seed, data, server.port)
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=folder))
    ref = HubQuant("owner/repo", "Q4_K_M") if hub else PlainUrl(f"http://127.0.0.1:{server.port}/m/model.gguf")

    def run() -> Outcome:
        if warm:
            server.start(_good(data))
            open_remote(ref, cache_root=cache, limits=LIMITS)
        server.start(scenario)
        try:
            open_remote(ref, cache_root=cache, limits=LIMITS)
            return Outcome("ok")
        finally:
            if server.count > MAX_REQUESTS_PER_INPUT:
                raise TooMuchWork(f"{server.count} requests for one input")

    try:
        outcome = classify(run)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    outcome.requests = server.count
    return outcome


# --- header facts ----------------------------------------------------------------------------------

ARCH_KEYS = tuple(k for k in FACT_KEYS if k.startswith("{arch}."))


def _hostile_value(rng: random.Random, key: str) -> Value:
    pick = rng.random()
    if pick < 0.6:
        vtype = rng.choice([V.UINT32, V.UINT64]) if pick < 0.5 else rng.choice([V.INT32, V.INT64, V.UINT16])
        lo, hi = {V.UINT32: (0, 2**32 - 1), V.UINT64: (0, 2**64 - 1), V.INT32: (-2**31, 2**31 - 1),
                  V.INT64: (-2**63, 2**63 - 1), V.UINT16: (0, 2**16 - 1)}[vtype]
        pool = [n for n in INTERESTING_INTS if lo <= n <= hi] + [rng.randint(lo, hi), rng.randint(0, 300)]
        if key in PER_LAYER_KEYS and rng.random() < 0.4:
            length = rng.choice([BASE.n_layer, BASE.n_layer, 0, 1, 5])
            return V.ARRAY, (vtype, [rng.choice(pool) for _ in range(length)])
        return vtype, rng.choice(pool)
    if pick < 0.75:
        return rng.choice([(V.FLOAT32, rng.choice([0.0, -1.0, 1e38, float("nan"), float("inf")])), (V.BOOL, True),
                           (V.FLOAT64, 1e300)])
    if pick < 0.9:
        return V.STRING, rng.choice([b"", b"12", b"\xff\xfe", "\u202e".encode(), b"x" * 300])
    etype = rng.choice([V.UINT32, V.INT32, V.BOOL, V.STRING, V.UINT8])
    items = {V.UINT32: [rng.choice([0, 1, 4, 2**32 - 1])], V.INT32: [-1], V.BOOL: [True], V.STRING: [b"t"],
             V.UINT8: [7]}[etype] * rng.choice([0, 1, 3, 4097])
    return V.ARRAY, (etype, items)


_BASE_BYTES: dict[tuple[str, frozenset[str]], bytes] = {}


def facts_header(seed: int, folder: Path) -> tuple[Path, ArchDesc]:
    """The header of input `seed`: a base with one to three keys re-encoded with hostile values."""
    rng = random.Random(seed)
    base = rng.choice([BASE, MOE_BASE])
    keys = rng.sample(ARCH_KEYS, rng.choice([1, 1, 2, 3]))
    overrides = {k: _hostile_value(rng, k) for k in keys}
    cache_key = (base.name, frozenset(keys))
    if cache_key not in _BASE_BYTES:
        if len(_BASE_BYTES) > 2000:
            _BASE_BYTES.clear()
        _BASE_BYTES[cache_key] = write_gguf(folder / "base.gguf", replace(base, omit=tuple(keys)), "header_only")[0].read_bytes()
    data = _BASE_BYTES[cache_key]
    extra = [encode_kv(k.format(arch=base.arch).encode(), v) for k, v in overrides.items()]
    n_kv = struct.unpack_from("<Q", data, 16)[0] + len(extra)
    path = folder / f"f{seed}.gguf"
    path.write_bytes(data[:16] + struct.pack("<Q", n_kv) + b"".join(extra) + data[24:])
    return path, base


def exercise(spec: object, ladder: bool) -> None:
    """What `fit`, `plan`, `library` (and `quants`) do with a model that loaded."""
    estimate_fit(spec, MACHINE, FitRequest())  # type: ignore[arg-type]
    for request in (BudgetRequest(budget=Budget.of(GIB)), BudgetRequest(budget=Budget.unlimited()), BudgetRequest(budget=Budget.of(1 << 20), ctx=4096)):
        try:
            plan_memory(spec, request)  # type: ignore[arg-type]
        except PlanError:
            pass
    assess(spec, LibrarySettings(MACHINE, Budget.of(8 * GIB)))
    if ladder:
        quant_ladder(spec, MACHINE)  # type: ignore[arg-type]


def _calls(work: Callable[[], object], limit: float) -> int:
    made = 0

    def counting(frame: object, event: str, arg: object) -> None:
        nonlocal made
        if event == "call":
            made += 1
            if made > limit:
                raise TooMuchWork(f"more than {int(limit):,} calls")

    sys.setprofile(counting)
    try:
        work()
    finally:
        sys.setprofile(None)
    return made


_BASE_WORK: dict[tuple[str, bool], int] = {}


def base_work(base: ArchDesc, ladder: bool, folder: Path) -> int:
    key = (base.name, ladder)
    if key not in _BASE_WORK:
        spec = load_model(write_gguf(folder / f"{base.name}.gguf", base, "header_only")[0])
        _BASE_WORK[key] = _calls(lambda: exercise(spec, ladder), float("inf"))
    return _BASE_WORK[key]


def run_facts(seed: int, folder: Path) -> Outcome:
    """One facts input: load, then the work of `fit`/`plan`/`library` (and `quants`), counted."""
    path, base = facts_header(seed, folder)
    ladder = seed % 8 == 0
    limit = WORK_FACTOR * base_work(base, ladder, folder)

    def run() -> Outcome:
        spec = load_model(path)
        _calls(lambda: exercise(spec, ladder), limit)
        return Outcome("ok")

    try:
        return classify(run)
    finally:
        path.unlink(missing_ok=True)
