"""Remote headers: only the header crosses the wire, over real loopback HTTP servers.

The servers (pytest-httpserver and a raw socket server) run on 127.0.0.1; the Hub is a loopback
endpoint set through HF_ENDPOINT. No test touches a remote host.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gguf_factory import ArchDesc, write_gguf
from http_models import DroppingServer, Served
from werkzeug import Response

from gguf_budget.core import FitRequest, estimate_fit, hypothetical_machine, load_model
from gguf_budget.core.errors import RemoteError
from gguf_budget.core.remote.fetch import FetchCancelled
from gguf_budget.core.remote.limits import FetchLimits
from gguf_budget.core.remote.open import open_remote
from gguf_budget.core.remote.refs import HubFile, HubQuant, PlainUrl, parse_ref, pick_quant_files
from gguf_budget.core.views.inspect_report import inspect_dict
from gguf_budget.core.views.remote_command import runnable

KIB = 1 << 10
# A real vocabulary makes the header ~400 KiB: more than one 64 KiB first chunk, less than the data.
VOCAB = ArchDesc(name="remote-llama", n_layer=4, n_embd=256, n_ff=512, n_head=4, n_head_kv=2, n_vocab=32000,
                 tokens=32000, context_length=2048)
FAST = FetchLimits(first_chunk=64 * KIB, cap=8 << 20, timeout_s=5, retries=1, backoff_s=0)
SOURCE_FIELDS = ("path", "shards")


@pytest.fixture
def model_file(tmp_path) -> Path:
    return write_gguf(tmp_path / "remote-llama-Q8_0.gguf", VOCAB, "complete")[0]


@pytest.fixture
def cache(tmp_path) -> Path:
    return tmp_path / "cache"


def serve(httpserver, path: Path, url_path: str = "/m/model.gguf", ranges: bool = True) -> Served:
    served = Served(path, ranges=ranges)
    httpserver.expect_request(url_path).respond_with_handler(served.handler)
    return served


def header_size(path: Path) -> int:
    from gguf_budget.core.gguf.header import read_header

    return read_header(str(path)).data_offset


def without_source(d: dict) -> dict:
    return {k: v for k, v in d.items() if k not in SOURCE_FIELDS}


@pytest.mark.parametrize(("text", "ref"), [
    ("https://example.org/a/b/model.gguf", PlainUrl("https://example.org/a/b/model.gguf")),
    ("hf://owner/repo/sub/m-Q4_K_M.gguf", HubFile("owner/repo", "sub/m-Q4_K_M.gguf")),
    ("hf://owner/repo@v2/m.gguf", HubFile("owner/repo", "m.gguf", "v2")),
    ("https://huggingface.co/owner/repo/resolve/main/m.gguf", HubFile("owner/repo", "m.gguf")),
    ("https://huggingface.co/owner/repo/blob/abc123/dir/m.gguf", HubFile("owner/repo", "dir/m.gguf", "abc123")),
    ("owner/repo:Q4_K_M", HubQuant("owner/repo", "Q4_K_M")),
    ("owner/repo", None),
    ("models/llama.gguf", None),
    ("./owner/repo", None),
    ("model.gguf", None),
])
def test_what_a_user_types_names_a_remote_file_or_a_local_path(text, ref):
    assert parse_ref(text) == ref


def test_an_existing_local_file_wins_over_the_shorthand():
    assert parse_ref("owner/repo:Q4_K_M", exists=lambda path: True) is None


@pytest.mark.parametrize("text", ["hf://owner/repo", "hf://owner/repo/readme.md", "https:///m.gguf"])
def test_malformed_remote_addresses_are_one_line_errors(text):
    with pytest.raises(RemoteError) as e:
        parse_ref(text)
    assert "\n" not in str(e.value)


LISTING = ["README.md", "m-Q4_K_M.gguf", "m-Q8_0.gguf", "mmproj-m-Q4_K_M.gguf", "m-IQ4_XS.gguf",
           "big/big-Q4_K_M-00001-of-00003.gguf", "big/big-Q4_K_M-00002-of-00003.gguf",
           "big/big-Q4_K_M-00003-of-00003.gguf", "m-Q4_K_M_L.gguf"]


def test_the_shorthand_picks_the_quant_as_a_whole_word_and_every_shard_of_a_split_model():
    assert pick_quant_files(LISTING, "q8_0") == ("m-Q8_0.gguf",)
    assert pick_quant_files(LISTING, "Q4_K_M") == tuple(f"big/big-Q4_K_M-0000{i}-of-00003.gguf" for i in (1, 2, 3))
    assert pick_quant_files([p for p in LISTING if not p.startswith("big/")], "Q4_K_M") == ("m-Q4_K_M.gguf",)
    with pytest.raises(RemoteError, match="no GGUF file for Q2_K"):
        pick_quant_files(LISTING, "Q2_K")
    with pytest.raises(RemoteError, match="lacks shard"):
        pick_quant_files(LISTING[:6], "Q4_K_M")


def test_a_remote_header_loads_as_the_local_file_does_and_moves_under_twice_the_header(httpserver, model_file, cache):
    served = serve(httpserver, model_file)
    spec, source = open_remote(parse_ref(httpserver.url_for("/m/model.gguf")), cache_root=cache, limits=FAST)
    local = load_model(model_file)
    assert without_source(inspect_dict(spec)) == without_source(inspect_dict(local))
    assert not spec.header_only and spec.file_bytes == model_file.stat().st_size
    header = header_size(model_file)
    assert header < source.transferred == served.sent <= 2 * header
    assert served.sent < model_file.stat().st_size / 2
    assert not source.from_cache and "header read over the network" in source.summary()


def test_progress_is_reported_and_cancel_stops_the_transfer(httpserver, model_file, cache):
    serve(httpserver, model_file)
    seen: list[int] = []
    spec, _ = open_remote(parse_ref(httpserver.url_for("/m/model.gguf")), cache_root=cache, limits=FAST,
                          progress=lambda done, total: seen.append(done))
    assert seen == sorted(seen) and seen[-1] >= header_size(model_file)
    with pytest.raises(FetchCancelled):
        open_remote(parse_ref(httpserver.url_for("/m/model.gguf")), cache_root=cache / "other", limits=FAST,
                    cancelled=lambda: True)
    assert not (cache / "other").exists() or not any((cache / "other").iterdir())


def test_a_server_that_ignores_range_is_cut_at_the_cap_with_a_clear_error(httpserver, model_file, cache):
    serve(httpserver, model_file, ranges=False)
    small_cap = FetchLimits(first_chunk=16 * KIB, cap=64 * KIB, timeout_s=5, retries=0)
    transferred: list[int] = []
    with pytest.raises(RemoteError, match="ignores range requests") as e:
        open_remote(parse_ref(httpserver.url_for("/m/model.gguf")), cache_root=cache, limits=small_cap,
                    progress=lambda done, total: transferred.append(done))
    assert "\n" not in str(e.value)
    assert transferred[-1] < 64 * KIB + 65536 < model_file.stat().st_size


def test_a_server_that_ignores_range_still_gives_a_header_that_ends_before_the_cap(httpserver, model_file, cache):
    serve(httpserver, model_file, ranges=False)
    spec, source = open_remote(parse_ref(httpserver.url_for("/m/model.gguf")), cache_root=cache, limits=FAST)
    assert spec.n_layer == VOCAB.n_layer and not spec.header_only
    assert source.transferred < model_file.stat().st_size


def test_a_redirect_to_another_host_is_followed(httpserver, model_file, cache):
    from pytest_httpserver import HTTPServer

    cdn = HTTPServer(host="127.0.0.1", port=0)
    cdn.start()
    try:
        served = serve(cdn, model_file, "/cdn/blob")
        httpserver.expect_request("/m/model.gguf").respond_with_response(
            Response(status=302, headers={"Location": cdn.url_for("/cdn/blob")}))
        spec, _ = open_remote(parse_ref(httpserver.url_for("/m/model.gguf")), cache_root=cache, limits=FAST)
        assert spec.n_layer == VOCAB.n_layer and served.sent > 0
    finally:
        cdn.clear()
        cdn.stop()


def test_a_slow_server_times_out_in_one_line(httpserver, model_file, cache):
    def slow(request):
        time.sleep(1.5)
        return Response(b"", 200)

    httpserver.expect_request("/m/model.gguf").respond_with_handler(slow)
    limits = FetchLimits(first_chunk=64 * KIB, cap=1 << 20, timeout_s=0.3, retries=1, backoff_s=0, min_rate=1 << 40)
    with pytest.raises(RemoteError, match=r"no complete answer within 0.3 s"):
        open_remote(parse_ref(httpserver.url_for("/m/model.gguf")), cache_root=cache, limits=limits)


def test_a_dropped_connection_is_retried_and_then_reported(model_file, cache):
    dropper = DroppingServer(drops=10)
    try:
        with pytest.raises(RemoteError, match="dropped"):
            open_remote(parse_ref(dropper.url("/model.gguf")), cache_root=cache, limits=FAST)
        assert dropper.connections == FAST.retries + 1
    finally:
        dropper.close()


def test_a_dropped_connection_then_a_good_one_loads(httpserver, model_file, cache):
    served = serve(httpserver, model_file)

    def proxy(conn, request):
        import http.client

        line = request.split(b"\r\n")
        rng = next((h.split(b": ", 1)[1].decode() for h in line if h.lower().startswith(b"range:")), "")
        upstream = http.client.HTTPConnection("127.0.0.1", httpserver.port)
        upstream.request("GET", "/m/model.gguf", headers={"Range": rng})
        answer = upstream.getresponse()
        body = answer.read()
        head = f"HTTP/1.1 {answer.status} X\r\n" + "".join(f"{k}: {v}\r\n" for k, v in answer.getheaders()
                                                             if k.lower() != "connection")
        conn.sendall(head.encode() + b"Connection: close\r\n\r\n" + body)

    dropper = DroppingServer(drops=1, after=proxy)
    try:
        spec, _ = open_remote(parse_ref(dropper.url("/model.gguf")), cache_root=cache, limits=FAST)
        assert spec.n_layer == VOCAB.n_layer and served.sent > 0
    finally:
        dropper.close()


def test_not_a_gguf_file_is_one_line_naming_the_url(httpserver, tmp_path, cache):
    page = tmp_path / "index.html"
    page.write_bytes(b"<html>not a model</html>" * 100)
    serve(httpserver, page)
    with pytest.raises(RemoteError, match=r"/m/model.gguf: not a GGUF file"):
        open_remote(parse_ref(httpserver.url_for("/m/model.gguf")), cache_root=cache, limits=FAST)


@pytest.mark.parametrize(("status", "words"), [(404, "not found"), (403, "access denied"), (401, "HF_TOKEN")])
def test_http_errors_are_one_line(httpserver, cache, status, words):
    httpserver.expect_request("/m/model.gguf").respond_with_data("no", status=status)
    with pytest.raises(RemoteError, match=words):
        open_remote(parse_ref(httpserver.url_for("/m/model.gguf")), cache_root=cache, limits=FAST)


def test_a_cached_header_is_reused_while_current_and_opens_offline(model_file, cache):
    from pytest_httpserver import HTTPServer

    server = HTTPServer(host="127.0.0.1", port=0)
    server.start()
    served = serve(server, model_file)
    url = server.url_for("/m/model.gguf")
    try:
        first, _ = open_remote(parse_ref(url), cache_root=cache, limits=FAST)
        before = served.sent
        again, source = open_remote(parse_ref(url), cache_root=cache, limits=FAST)
        assert source.from_cache and not source.offline and served.sent - before == 1
        assert inspect_dict(again) == inspect_dict(first)
    finally:
        server.clear()
        server.stop()
    offline, source = open_remote(parse_ref(url), cache_root=cache, limits=FAST)
    assert source.from_cache and source.offline and "offline" in source.summary()
    assert source.fetched_at in source.summary()
    assert inspect_dict(offline) == inspect_dict(first)


def test_a_changed_remote_file_is_fetched_again(httpserver, model_file, cache):
    served = serve(httpserver, model_file)
    url = httpserver.url_for("/m/model.gguf")
    open_remote(parse_ref(url), cache_root=cache, limits=FAST)
    served.commit = "f" * 40
    write_gguf(model_file, ArchDesc(name="remote-llama", n_layer=6, n_embd=256, n_ff=512, n_head=4, n_head_kv=2,
                                    n_vocab=32000, tokens=32000), "complete")
    spec, source = open_remote(parse_ref(url), cache_root=cache, limits=FAST)
    assert not source.from_cache and spec.n_layer == 6


# --- the Hub, on loopback ------------------------------------------------------------------------

def hub_repo(httpserver, files: dict[str, Path], repo: str = "owner/repo") -> dict[str, Served]:
    listing = [{"type": "file", "path": name, "size": p.stat().st_size, "oid": "0" * 40} for name, p in files.items()]
    httpserver.expect_request(f"/api/models/{repo}/tree/main").respond_with_json(listing)
    served = {}
    for name, path in files.items():
        served[name] = serve(httpserver, path, f"/{repo}/resolve/main/{name}")
    return served


@pytest.fixture
def hub_env(httpserver, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", httpserver.url_for("").rstrip("/"))
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    return httpserver


def test_the_shorthand_fetches_every_shard_of_a_split_model_from_the_hub(hub_env, tmp_path, cache):
    (tmp_path / "split").mkdir()
    (tmp_path / "one").mkdir()
    shards = write_gguf(tmp_path / "split" / "big-Q4_K_M.gguf", VOCAB, "complete", split_max_tensors=20)
    assert len(shards) > 1
    files = {f"sub/{p.name}": p for p in shards}
    other = write_gguf(tmp_path / "one" / "big-Q8_0.gguf", VOCAB, "complete")[0]
    served = hub_repo(hub_env, {**files, "big-Q8_0.gguf": other})
    spec, source = open_remote(parse_ref("owner/repo:Q4_K_M"), cache_root=cache, limits=FAST)
    local = load_model(shards[0])
    assert without_source(inspect_dict(spec)) == without_source(inspect_dict(local))
    assert len(spec.shards) == len(shards) and all(served[n].sent > 0 for n in files)
    assert served["big-Q8_0.gguf"].sent == 0
    assert source.ref == "owner/repo:Q4_K_M" and len(source.urls) == len(shards)


def test_hub_requests_carry_the_users_token(hub_env, model_file, cache):
    seen = []

    def check(request):
        seen.append(request.headers.get("Authorization"))
        return Served(model_file).handler(request)

    hub_env.expect_request("/owner/repo/resolve/main/m.gguf").respond_with_handler(check)
    open_remote(parse_ref("hf://owner/repo/m.gguf"), cache_root=cache, limits=FAST)
    assert seen and all(a == "Bearer hf_test_token" for a in seen)


def test_a_missing_hub_repository_is_one_line(hub_env, cache):
    hub_env.expect_request("/api/models/owner/nothing/tree/main").respond_with_json(
        {"error": "Repository not found"}, status=404, headers={"X-Error-Code": "RepoNotFound"})
    with pytest.raises(RemoteError, match="no such Hub repository"):
        open_remote(parse_ref("owner/nothing:Q4_K_M"), cache_root=cache, limits=FAST)


# --- the command line ----------------------------------------------------------------------------

def cli(*args: str, cache: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "GGUF_BUDGET_CACHE_DIR": str(cache), **(env or {})}
    return subprocess.run([sys.executable, "-m", "gguf_budget.gui.cli", *args], capture_output=True, text=True,
                          env=full_env, timeout=120)


def test_inspect_json_of_a_url_equals_the_local_files_except_for_its_source(httpserver, tmp_path, cache):
    # A header over half the default first chunk (1 MiB), as every real model's is.
    model_file = write_gguf(tmp_path / "wide-vocab.gguf", ArchDesc(name="wide-vocab", n_layer=2, n_embd=64, n_ff=128,
                                                                   n_head=2, n_head_kv=1, n_vocab=50000, tokens=50000),
                            "complete")[0]
    assert header_size(model_file) > (1 << 20) // 2
    serve(httpserver, model_file)
    remote = cli("inspect", httpserver.url_for("/m/model.gguf"), "--json", cache=cache)
    local = cli("inspect", str(model_file), "--json", cache=cache)
    assert remote.returncode == 0, remote.stderr
    remote_json, local_json = json.loads(remote.stdout), json.loads(local.stdout)
    assert remote_json["source"]["ref"] == httpserver.url_for("/m/model.gguf")
    assert remote_json["source"]["transferred"] <= 2 * header_size(model_file)
    assert without_source({k: v for k, v in remote_json.items() if k != "source"}) == without_source(local_json)
    assert "header read over the network" in remote.stderr


@pytest.mark.usefixtures("measured_machine")  # conftest: the run's one measurement of the speed figures
def test_plan_and_fit_take_a_url_and_a_bad_one_exits_2(httpserver, model_file, cache):
    serve(httpserver, model_file)
    url = httpserver.url_for("/m/model.gguf")
    assert cli("plan", url, "--budget", "1G", cache=cache).returncode == 0
    assert cli("fit", url, "--host-available", "8G", "--no-gpu", cache=cache).returncode == 0
    httpserver.expect_request("/missing.gguf").respond_with_data("gone", status=404)
    bad = cli("inspect", httpserver.url_for("/missing.gguf"), cache=cache)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "not found" in bad.stderr


@pytest.mark.usefixtures("measured_machine")  # conftest: the run's one measurement of the speed figures
def test_the_command_for_a_url_runs_the_url_not_the_header_kept_here(httpserver, model_file, cache):
    """remote_command Rule 1: the header cache holds no weights, so `-m <cache file>` could not run."""
    serve(httpserver, model_file)
    url = httpserver.url_for("/m/model.gguf")
    printed = cli("fit", url, "--host-available", "8G", "--no-gpu", "--print-command", cache=cache)
    assert printed.returncode == 0, printed.stderr
    argv = shlex.split(printed.stdout)
    assert argv[:3] == ["llama-server", "-mu", url] and "-m" not in argv and str(cache) not in printed.stdout
    fitted = json.loads(cli("fit", url, "--host-available", "8G", "--no-gpu", "--json", cache=cache).stdout)["command"]
    assert fitted["argv"] == argv and fitted["ollama"]["modelfile"].startswith("FROM ./model.gguf\n")
    assert any("Ollama cannot pull" in n for n in fitted["ollama"]["notes"])
    local = shlex.split(cli("fit", str(model_file), "--host-available", "8G", "--no-gpu", "--print-command",
                            cache=cache).stdout)
    assert local[:3] == ["llama-server", "-m", str(model_file)] and local[3:] == argv[3:]


def test_the_command_for_the_hub_shorthand_is_llama_servers_own(hub_env, model_file, cache):
    hub_repo(hub_env, {"model-Q8_0.gguf": model_file})
    spec, _ = open_remote(parse_ref("owner/repo:Q8_0"), cache_root=cache, limits=FAST)
    fit = estimate_fit(spec, hypothetical_machine(8 << 30), FitRequest(ctx=2048))
    run = runnable(fit.recommended)
    assert run.argv[:3] == ("llama-server", "-hf", "owner/repo:Q8_0")
    assert run.ollama_modelfile.startswith("FROM hf.co/owner/repo:Q8_0\n") and run.argv[3:] == fit.recommended.argv[3:]
    single, _ = open_remote(parse_ref("hf://owner/repo/model-Q8_0.gguf"), cache_root=cache, limits=FAST)
    assert runnable(estimate_fit(single, hypothetical_machine(8 << 30), FitRequest(ctx=2048)).recommended).argv[:5] == (
        "llama-server", "-hfr", "owner/repo", "-hff", "model-Q8_0.gguf")


def test_the_header_cap_is_an_option(httpserver, model_file, cache):
    serve(httpserver, model_file)
    small = cli("--max-header", "128K", "inspect", httpserver.url_for("/m/model.gguf"), cache=cache)
    assert small.returncode == 2 and "larger than the 128.00 KiB cap" in small.stderr
