"""A model read over the network looks remote (issue 25, item 3): the Model panel and `inspect` name
its URL or Hub reference and say how much of the remote file was read; Open Recent keeps the URL;
a server without an ETag is revalidated by Last-Modified and size, or, with no validator at all, its
header is reused for a day unless `--refresh`. Servers are real HTTP servers on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gguf_factory import ArchDesc, write_gguf
from http_models import Served
from PySide6.QtWidgets import QMenu

from gguf_budget.core.remote.limits import FetchLimits
from gguf_budget.core.remote.open import open_remote
from gguf_budget.core.remote.refs import HubFile, parse_ref
from gguf_budget.core.remote.source import cached_source, reopen_name
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.model_summary import summary_rows

KIB = 1 << 10
# A 10,000-token vocabulary and real tensor data: a header well under the file.
REMOTE = ArchDesc(name="remote-looks", n_layer=2, n_embd=256, n_ff=512, n_head=4, n_head_kv=2, n_vocab=10000,
                  tokens=10000)
LIMITS = FetchLimits(first_chunk=64 * KIB, cap=8 << 20, timeout_s=5, retries=0)
DATE = "Wed, 21 Oct 2015 07:28:00 GMT"


@pytest.fixture
def model_file(tmp_path) -> Path:
    return write_gguf(tmp_path / "remote-looks-Q8_0.gguf", REMOTE, "complete")[0]


def serve(httpserver, path: Path, **validators) -> tuple[Served, str]:
    served = Served(path, **validators)
    httpserver.expect_request("/m/remote-looks-Q8_0.gguf").respond_with_handler(served.handler)
    return served, httpserver.url_for("/m/remote-looks-Q8_0.gguf")


def test_the_summary_of_a_remote_model_names_its_url_and_what_was_read(httpserver, model_file, tmp_path):
    _, url = serve(httpserver, model_file)
    spec, source = open_remote(parse_ref(url), cache_root=tmp_path / "cache", limits=LIMITS)
    rows = summary_rows(spec, cached_source(spec.path))
    size = human_bytes(model_file.stat().st_size)
    assert rows["Source"] == url
    assert rows["File size"] == f"{size} (the remote file)"
    assert rows["Storage"] == f"header read over the network: {human_bytes(source.header_bytes)} of {size}"
    assert "on disk" not in " ".join(rows.values()) and "complete file" not in rows["Storage"]
    assert summary_rows(spec)["Source"] == "local file"  # the same file without its source: what it was before


def test_open_recent_keeps_the_url_and_a_hub_reference_reads_back(httpserver, model_file, tmp_path):
    _, url = serve(httpserver, model_file)
    spec, _ = open_remote(parse_ref(url), cache_root=tmp_path / "cache", limits=LIMITS)
    assert reopen_name(spec.path) == url and reopen_name(str(model_file)) == str(model_file)
    for ref in (HubFile("owner/repo", "sub/m.gguf"), HubFile("owner/repo", "m.gguf", "refs/pr/1")):
        assert parse_ref(ref.describe()) == ref


def cli(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GGUF_BUDGET_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-m", "gguf_budget.gui.cli", *args], capture_output=True, text=True,
                          env=env, timeout=120)


def test_inspect_of_a_url_names_the_url_not_the_cache(httpserver, model_file, tmp_path):
    _, url = serve(httpserver, model_file)
    result = cli("inspect", url, cache=tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(None, 1) for line in result.stdout.splitlines() if line.strip())
    assert lines["Source"].startswith(f"{url} (1 shard(s)")
    assert str(tmp_path / "cache") not in result.stdout
    assert "header read over the network" in result.stdout and "(the remote file)" in result.stdout


def bytes_moved(served: Served, url: str, cache: Path, **kw) -> tuple[int, bool]:
    before = served.sent
    _, source = open_remote(parse_ref(url), cache_root=cache, limits=LIMITS, **kw)
    return served.sent - before, source.from_cache


def test_without_an_etag_last_modified_and_size_revalidate(httpserver, model_file, tmp_path):
    served, url = serve(httpserver, model_file, etag=False, last_modified=DATE)
    cache = tmp_path / "cache"
    first, _ = bytes_moved(served, url, cache)
    assert first > 0
    assert bytes_moved(served, url, cache) == (1, True)  # one byte to compare Last-Modified and size
    served.last_modified = "Thu, 22 Oct 2015 07:28:00 GMT"
    moved, from_cache = bytes_moved(served, url, cache)
    assert not from_cache and moved > 1


def test_without_any_validator_the_header_is_reused_for_a_day_unless_refreshed(httpserver, model_file, tmp_path):
    served, url = serve(httpserver, model_file, etag=False)
    cache = tmp_path / "cache"
    bytes_moved(served, url, cache)
    requests = len(served.requests)
    assert bytes_moved(served, url, cache) == (0, True) and len(served.requests) == requests
    moved, from_cache = bytes_moved(served, url, cache, refresh=True)
    assert not from_cache and moved > 1
    source_json = next(cache.glob("*/source.json"))
    entry = json.loads(source_json.read_text())
    source_json.write_text(json.dumps({**entry, "fetched_at": "2000-01-01T00:00:00+00:00"}))
    moved, from_cache = bytes_moved(served, url, cache)
    assert not from_cache and moved > 1  # a day later it is read again


def test_the_refresh_option_reads_the_header_again(httpserver, model_file, tmp_path):
    served, url = serve(httpserver, model_file, etag=False)
    cache = tmp_path / "cache"
    assert cli("inspect", url, cache=cache).returncode == 0
    sent = served.sent
    assert cli("inspect", url, cache=cache).returncode == 0 and served.sent == sent
    refreshed = cli("--refresh", "inspect", url, cache=cache)
    assert refreshed.returncode == 0, refreshed.stderr
    assert served.sent > sent and "header read over the network" in refreshed.stderr


def test_the_window_shows_a_url_model_as_remote_and_open_recent_reopens_the_url(qtbot, make_explorer, httpserver,
                                                                               model_file):
    served, url = serve(httpserver, model_file)
    explorer = make_explorer()
    with qtbot.waitSignal(explorer.window.modelLoaded, timeout=20000):
        explorer.library.url.open(url)
    shown = explorer.window.body.summary.values()
    assert shown["Source"] == url and shown["Storage"].startswith("header read over the network: ")
    assert shown["File size"].endswith("(the remote file)")
    recent = explorer.window.findChild(QMenu, "recentMenu").actions()
    assert recent[0].data() == url
    requests = len(served.requests)
    with qtbot.waitSignal(explorer.window.modelLoaded, timeout=20000):
        recent[0].trigger()
    assert len(served.requests) == requests + 1  # revalidated by one ranged request, not read from a cache path
    assert explorer.window.body.summary.values()["Source"] == url
