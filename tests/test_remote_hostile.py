"""Hostile servers and hostile addresses (issue 24, part C): one HTTP client policy, one line each.

Every server is a real HTTP server on 127.0.0.1: pytest-httpserver, or a raw socket server
(`http_models.RawServer`) for what a well-behaved framework cannot send — a drip, a head that
lies, a body that never ends. Deadlines are made small through `FetchLimits`; no assertion is
about elapsed time: a client that gives up early is seen by how little the server got to send.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from gguf_factory import ArchDesc, write_gguf
from http_models import RawServer, Served, asked_range
from werkzeug import Request, Response

from gguf_budget.core import load_model
from gguf_budget.core.errors import RemoteError
from gguf_budget.core.remote.cache import entry_dir
from gguf_budget.core.remote.limits import FetchLimits
from gguf_budget.core.remote.open import open_remote
from gguf_budget.core.remote.refs import HubFile, PlainUrl, parse_ref
from gguf_budget.core.views.inspect_report import inspect_dict

KIB = 1 << 10
SMALL = ArchDesc(name="hostile-net", n_layer=2, n_embd=64, n_ff=128, n_head=2, n_head_kv=1, n_vocab=3000,
                 tokens=3000)
QUICK = FetchLimits(first_chunk=16 * KIB, cap=4 << 20, timeout_s=2, file_s=4, retries=1, backoff_s=0,
                    min_progress=4 * KIB, min_rate=1 << 30)
DRIP = FetchLimits(first_chunk=16 * KIB, cap=4 << 20, timeout_s=0.5, file_s=1, retries=1, backoff_s=0, min_rate=1 << 30)
REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def model_file(tmp_path) -> Path:
    return write_gguf(tmp_path / "hostile-net-Q8_0.gguf", SMALL, "complete")[0]


@pytest.fixture
def cache(tmp_path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def raw():
    servers: list[RawServer] = []

    def start(answer) -> RawServer:
        servers.append(RawServer(answer))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def read(text: str, cache: Path, limits: FetchLimits = QUICK):
    ref = parse_ref(text)
    assert ref is not None
    return open_remote(ref, cache_root=cache, limits=limits)


def one_line_error(text: str, cache: Path, limits: FetchLimits = QUICK) -> str:
    with pytest.raises(RemoteError) as e:
        read(text, cache, limits)
    message = str(e.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def head(status: str, **headers: str | int) -> bytes:
    lines = [f"HTTP/1.1 {status}"] + [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


# --- each range answer must make progress ----------------------------------------------------------

GIVEN_UP_AFTER = 40
"""The servers below stop answering ranges after this many requests, so the old, endless client
ends too (with another error) instead of hanging the test."""


def short_ranges(body_bytes: int):
    """A server answering every range with `body_bytes` bytes (0 or 1), for a 5000-byte file."""

    def answer(server: RawServer, conn: socket.socket, request: bytes) -> None:
        start, _ = asked_range(request) or (0, 0)
        if len(server.requests) > GIVEN_UP_AFTER:
            server.send(conn, head("404 Not Found", Content_Length=0, Connection="close"))
            return
        body = b"GGUF\x03"[start:start + body_bytes].ljust(body_bytes, b"\0")
        server.send(conn, head("206 Partial Content", Content_Length=len(body), Connection="close",
                               Content_Range=f"bytes {start}-{start}/5000") + body)

    return answer


@pytest.mark.parametrize("body_bytes", [0, 1])
def test_a_range_answer_that_brings_nothing_is_one_line_not_endless_requests(raw, cache, body_bytes):
    server = raw(short_ranges(body_bytes))
    message = one_line_error(server.url(), cache)
    assert "of the" in message or "bytes for a range" in message
    assert len(server.requests) == 1


def test_the_requests_for_one_file_are_capped(httpserver, tmp_path, cache):
    # A real header of ~1 MiB read 4 KiB at first: the growing prefix needs ~9 requests.
    big = write_gguf(tmp_path / "wide.gguf", ArchDesc(name="wide", n_layer=2, n_embd=64, n_ff=128, n_head=2,
                                                      n_head_kv=1, n_vocab=60000, tokens=60000), "complete")[0]
    served = Served(big)
    httpserver.expect_request("/m/model.gguf").respond_with_handler(served.handler)
    limits = FetchLimits(first_chunk=4 * KIB, cap=8 << 20, timeout_s=5, retries=0, max_requests=3,
                         min_progress=KIB)
    message = one_line_error(httpserver.url_for("/m/model.gguf"), cache, limits)
    assert "3 requests did not bring the header" in message
    assert len(served.requests) == 3


# --- deadlines are overall, not per read ---------------------------------------------------------

def dripping_body(server: RawServer, conn: socket.socket, request: bytes) -> None:
    server.send(conn, head("206 Partial Content", Content_Length=400, Content_Range="bytes 0-399/5000"))
    for byte in b"GGUF" + b"\0" * 396:
        time.sleep(0.02)
        if not server.send(conn, bytes([byte])):
            return


def dripping_head(server: RawServer, conn: socket.socket, request: bytes) -> None:
    for byte in head("206 Partial Content", Content_Range="bytes 0-3/5000", X_Padding="p" * 300) + b"GGUF":
        time.sleep(0.02)
        if not server.send(conn, bytes([byte])):
            return


@pytest.mark.parametrize("answer", [dripping_body, dripping_head], ids=["body", "head"])
def test_a_byte_a_tick_drip_is_cut_at_the_deadline(raw, cache, answer):
    server = raw(answer)
    message = one_line_error(server.url(), cache, DRIP)
    assert "within" in message
    time.sleep(0.1)  # let the server notice the client has gone
    full = len(head("206 Partial Content", Content_Length=400, Content_Range="bytes 0-399/5000")) + 400
    assert server.sent < full / 2  # the client hung up long before the drip ended


def test_a_slow_but_steady_link_gets_the_time_its_bytes_take(raw, cache, model_file):
    """The request deadline is `timeout_s` plus the asked bytes at `min_rate`: a steady slow answer is not a drip."""
    data = model_file.read_bytes()

    def steady(server: RawServer, conn: socket.socket, request: bytes) -> None:
        start, end = asked_range(request) or (0, len(data) - 1)
        body = data[start:min(end, len(data) - 1) + 1]
        server.send(conn, head("206 Partial Content", Content_Length=len(body), Connection="close",
                               Content_Range=f"bytes {start}-{start + len(body) - 1}/{len(data)}"))
        for i in range(0, len(body), 4 * KIB):
            time.sleep(0.02)
            if not server.send(conn, body[i:i + 4 * KIB]):
                return

    limits = FetchLimits(first_chunk=64 * KIB, cap=4 << 20, timeout_s=0.2, file_s=2, retries=0, min_rate=64 * KIB)
    spec, _ = read(raw(steady).url(), cache, limits)  # 64 KiB in ~0.3 s: past 0.2 s, within 0.2 s + 1 s
    assert spec.n_layer == SMALL.n_layer


# --- identity only, never decompressed -----------------------------------------------------------

def test_a_compressed_answer_is_refused_not_inflated(httpserver, cache):
    bomb = gzip.compress(gzip.compress(b"\0" * (32 << 20)))  # 32 MiB of zeros in ~32 KiB

    def handler(request: Request) -> Response:
        return Response(bomb, 206, headers={"Content-Encoding": "gzip, gzip",
                                            "Content-Range": f"bytes 0-{len(bomb) - 1}/{64 << 20}"})

    httpserver.expect_request("/m/model.gguf").respond_with_handler(handler)
    message = one_line_error(httpserver.url_for("/m/model.gguf"), cache)
    assert "compressed its answer (gzip, gzip)" in message


# --- what a server says is checked -----------------------------------------------------------------

def test_a_redirect_loop_is_one_line(httpserver, cache):
    httpserver.expect_request("/a").respond_with_response(Response(status=302, headers={"Location": "/b"}))
    httpserver.expect_request("/b").respond_with_response(Response(status=302, headers={"Location": "/a"}))
    assert "redirects" in one_line_error(httpserver.url_for("/a"), cache)


@pytest.mark.parametrize("claim", ["bytes 0-{last}/1180591620717411303424", "bytes 0-{last}/{last}"],
                         ids=["total-2^70", "total-below-sent"])
def test_a_content_range_that_cannot_be_is_one_line(httpserver, cache, model_file, claim):
    data = model_file.read_bytes()
    httpserver.expect_request("/m/model.gguf").respond_with_response(
        Response(data, 206, headers={"Content-Range": claim.format(last=len(data) - 1)}))
    one_line_error(httpserver.url_for("/m/model.gguf"), cache)


def test_a_huge_content_length_on_a_whole_file_answer_is_one_line(raw, cache, model_file):
    def answer(server, conn, request):  # a server ignoring Range, claiming 2^62 bytes, then sending a real file
        server.send(conn, head("200 OK", Content_Length=2**62) + model_file.read_bytes())
        time.sleep(1)

    assert "bytes, more than any file can be" in one_line_error(raw(answer).url(), cache)


def test_a_server_that_falls_silent_is_said_to_be_silent_not_late(raw, cache):
    """A request may take 16 s for its bytes at `min_rate`; a server silent for `timeout_s` is cut first, and
    the message says so ("no complete answer within 84 s" was said after 21 s of silence)."""
    def silent(server, conn, request):
        time.sleep(3)

    limits = FetchLimits(first_chunk=16 * KIB, cap=4 << 20, timeout_s=0.3, file_s=30, retries=0, min_rate=KIB)
    message = one_line_error(raw(silent).url(), cache, limits)
    assert message.endswith("the server sent nothing for 0.3 s"), message


@pytest.mark.parametrize("text", [
    "http://[::1/x.gguf",
    "http://127.0.0.1:99999/m.gguf",
    "http://127.0.0.1/m\x01.gguf",
    "http://127.0.0.1/m.gguf\x1b[2J",
    "http://127.0.0.1/m.gguf?" + "q" * 100_000,
    "http://" + "h" * 300 + "/m.gguf",
    "http://" + "a" * 70 + ".example/m.gguf",
    "http://127.0.0.1 /m.gguf",
])
def test_a_url_that_cannot_be_requested_is_one_line_before_any_request(text):
    with pytest.raises(RemoteError) as e:
        parse_ref(text)
    assert "\n" not in str(e.value) and "\x1b" not in str(e.value) and len(str(e.value)) < 400


def test_a_300_character_file_name_is_cached_under_a_short_name(httpserver, model_file, cache):
    name = "m" * 300 + ".gguf"
    served = Served(model_file)
    httpserver.expect_request(f"/m/{name}").respond_with_handler(served.handler)
    spec, _ = read(httpserver.url_for(f"/m/{name}"), cache)
    assert spec.n_layer == SMALL.n_layer and len(Path(spec.path).name) <= 80


@pytest.mark.parametrize("text", ["a--b/c:Q4_K_M", "hf://own/re..po/m.gguf", "x" * 100 + "/y:Q4_K_M",
                                  "hf://owner/repo/../m.gguf", "hf://owner/repo@../../x/m.gguf",
                                  "hf://owner/repo@a b/m.gguf", "owner/repo:Q4 K", "owner/repo:" + "Q" * 100])
def test_a_hub_reference_huggingface_hub_or_the_hub_would_refuse_is_one_line(text):
    with pytest.raises(RemoteError) as e:
        parse_ref(text, exists=lambda path: False)
    assert "\n" not in str(e.value)


# --- the Hub, on loopback ------------------------------------------------------------------------

@pytest.fixture
def hub_env(httpserver, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", httpserver.url_for("").rstrip("/"))
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    return httpserver


@pytest.mark.parametrize("listing", [b"<html><body>Sign in</body></html>", b"[" * 200_000, b'{"path": 1}',
                                     b'[{"path": 3}]', b"\xff\xfe"])
def test_a_listing_that_is_not_a_list_of_files_is_one_line(hub_env, cache, listing):
    hub_env.expect_request("/api/models/owner/repo/tree/main").respond_with_data(listing)
    message = one_line_error("owner/repo:Q4_K_M", cache)
    assert message.startswith("listing owner/repo")


def test_a_listing_that_hangs_is_cut_at_the_deadline(hub_env, cache):
    def slow(request: Request) -> Response:
        time.sleep(2)
        return Response(json.dumps([]), 200)

    hub_env.expect_request("/api/models/owner/repo/tree/main").respond_with_handler(slow)
    limits = FetchLimits(first_chunk=16 * KIB, timeout_s=0.3, file_s=1, retries=0, min_rate=1 << 20)
    assert one_line_error("owner/repo:Q4_K_M", cache, limits).endswith("the server sent nothing for 0.3 s")


def test_a_listing_of_endless_pages_is_cut(hub_env, cache):
    def page(request: Request) -> Response:
        return Response(json.dumps([{"type": "file", "path": "README.md"}]), 200,
                        headers={"Link": f'<{hub_env.url_for("/api/models/owner/repo/tree/main")}?cursor=x>; rel="next"'})

    hub_env.expect_request("/api/models/owner/repo/tree/main").respond_with_handler(page)
    limits = FetchLimits(first_chunk=16 * KIB, timeout_s=2, listing_pages=5)
    assert "more than 5 pages" in one_line_error("owner/repo:Q4_K_M", cache, limits)


@pytest.mark.parametrize("link", ['<http://[::1>; rel="next"', '<http://example.invalid/x>; rel="next"',
                                  '<http://127.0.0.1:99999/x>; rel="next"'])
def test_a_listing_whose_next_page_is_not_on_the_hub_is_one_line(hub_env, cache, link):
    hub_env.expect_request("/api/models/owner/repo/tree/main").respond_with_json(
        [{"type": "file", "path": "m-Q4_K_M.gguf"}], headers={"Link": link})
    message = one_line_error("owner/repo:Q4_K_M", cache)
    assert "points to" in message or "port" in message.lower()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_offline_the_hub_is_one_line_saying_so(monkeypatch, cache):
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    message = one_line_error("owner/repo:Q4_K_M", cache)
    assert message.startswith("can't reach Hugging Face — offline?")


def test_offline_a_plain_url_is_one_line_saying_so(cache):
    message = one_line_error(f"http://127.0.0.1:{closed_port()}/m.gguf", cache)
    assert message.startswith("can't reach 127.0.0.1 — offline?")


def recorder(hub_env, model_file):
    """Every request the loopback Hub gets: its path and whether it carried the token."""
    seen: list[tuple[str, str | None]] = []
    served = Served(model_file)

    def handler(request: Request) -> Response:
        seen.append((request.path, request.headers.get("Authorization")))
        return served.handler(request)

    hub_env.expect_request(re.compile(".*")).respond_with_handler(handler)
    return seen


@pytest.mark.parametrize("text", ["hf://owner/repo@../../x/m.gguf", "hf://owner/repo@..%2F..%2Fx/m.gguf",
                                  "hf://owner/repo/sub/../../../x/m.gguf"])
def test_the_token_never_leaves_the_repository_path(hub_env, model_file, cache, text):
    seen = recorder(hub_env, model_file)
    read("hf://owner/repo@refs%2Fpr%2F1/m.gguf", cache)  # a revision with slashes is fine
    assert seen and all(token == "Bearer hf_test_token" for _, token in seen)
    with pytest.raises(RemoteError):
        read(text, cache / "other")
    assert all(path.startswith("/owner/repo/resolve/") for path, token in seen if token)


# --- a local path wins ---------------------------------------------------------------------------

def test_a_bare_owner_repo_and_anything_under_a_local_folder_are_local(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models").mkdir()
    assert parse_ref("models/llama") is None
    assert parse_ref("models/llama:Q4_K_M") is None
    assert parse_ref("owner/llama") is None
    assert parse_ref("owner/llama:Q4_K_M") is not None


def cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gguf_budget.gui.cli", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, cwd=cwd, timeout=120)


def test_a_mistyped_local_path_never_goes_to_the_hub(hub_env, model_file, tmp_path):
    seen = recorder(hub_env, model_file)
    env = {"HF_ENDPOINT": hub_env.url_for("").rstrip("/"), "HF_TOKEN": "hf_test_token"}
    result = cli(["inspect", "models/llama"], env, tmp_path)
    assert result.returncode == 2 and "no such file" in result.stderr and "models/llama:QUANT" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert seen == []


def test_evidence_model_is_always_a_local_file(hub_env, model_file, tmp_path):
    seen = recorder(hub_env, model_file)
    log = REPO_ROOT / "tests" / "data" / "llamacpp-logs" / "gemma3-270m-q4_k_m_ctx2048_f16.log"
    env = {"HF_ENDPOINT": hub_env.url_for("").rstrip("/"), "HF_TOKEN": "hf_test_token"}
    result = cli(["evidence", str(log), "--model", "owner/repo:Q4_K_M", "--no-measure"], env, tmp_path)
    assert result.returncode == 2 and "no such file" in result.stderr, result.stderr
    assert seen == []


# --- credentials in a URL ------------------------------------------------------------------------

def test_credentials_in_a_url_are_used_but_never_shown_or_stored(httpserver, model_file, cache):
    served = Served(model_file)
    auth = []

    def handler(request: Request) -> Response:
        auth.append(request.headers.get("Authorization"))
        return served.handler(request)

    httpserver.expect_request("/m/model.gguf").respond_with_handler(handler)
    url = httpserver.url_for("/m/model.gguf").replace("http://", "http://user:s3cret@")
    ref = parse_ref(url)
    assert isinstance(ref, PlainUrl) and "s3cret" not in ref.describe()
    spec, source = open_remote(ref, cache_root=cache, limits=QUICK)
    assert auth and all(a and a.startswith("Basic ") for a in auth)
    shown = source.summary() + json.dumps(inspect_dict(spec)) + " ".join(source.urls) + source.ref
    assert "s3cret" not in shown
    stored = b"".join(p.read_bytes() for p in cache.rglob("*.json"))
    assert stored and b"s3cret" not in stored
    httpserver.expect_request("/gone.gguf").respond_with_data("no", status=404)
    missing = httpserver.url_for("/gone.gguf").replace("http://", "http://user:s3cret@")
    assert "s3cret" not in one_line_error(missing, cache)


# --- concurrent reads ----------------------------------------------------------------------------

def test_six_concurrent_reads_of_one_url_all_succeed_and_agree(httpserver, model_file, cache):
    served = Served(model_file)
    httpserver.expect_request("/m/model.gguf").respond_with_handler(served.handler)
    url = httpserver.url_for("/m/model.gguf")
    results: list[object] = []
    start = threading.Barrier(6)

    def one() -> None:
        start.wait()
        try:
            results.append(inspect_dict(read(url, cache)[0]))
        except Exception as e:  # noqa: BLE001 - the test wants to see what went wrong
            results.append(e)

    threads = [threading.Thread(target=one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(results) == 6 and all(isinstance(r, dict) for r in results), results
    assert all(r == results[0] for r in results)
    assert not [p for p in cache.iterdir() if ".partial-" in p.name or ".old-" in p.name]
    assert inspect_dict(load_model(read(url, cache)[0].path)) == results[0]


def test_hub_references_parse_with_a_slash_revision():
    assert parse_ref("hf://owner/repo@refs%2Fpr%2F1/m.gguf") == HubFile("owner/repo", "m.gguf", "refs/pr/1")


def test_a_partial_folder_of_a_process_that_is_gone_is_removed_by_the_next_read(httpserver, model_file, cache):
    """A download killed outright (or a window ended before its read saw the cancel) left its .partial folder."""
    url = httpserver.url_for("/m/model.gguf")
    httpserver.expect_request("/m/model.gguf").respond_with_data(model_file.read_bytes())
    folder = entry_dir(cache, parse_ref(url).describe())
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = folder.parent / f"{folder.name}.partial-{int(gone.stdout)}-x1"
    live = folder.parent / f"{folder.name}.partial-{os.getpid()}-x2"
    for scratch in (stale, live):
        scratch.mkdir(parents=True)
        (scratch / "model.gguf").write_bytes(b"GGUF")
    read(url, cache)
    assert not stale.exists() and live.exists()
