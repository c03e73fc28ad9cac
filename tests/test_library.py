"""The local library: real store layouts in a temporary home, each entry named and judged.

Hugging Face (refs, snapshots linking into blobs), Ollama (manifest + blob), LM Studio (its folders
and its settings' downloads folder), a user folder with a split model, a link loop, a broken link,
a FIFO and a non-GGUF blob — all real files, links and folders.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gguf_factory import ArchDesc, write_gguf

from gguf_budget.core.library.config import add_folder, read_folders, remove_folder
from gguf_budget.core.library.discover import hf_name, ollama_model_blob, ollama_name
from gguf_budget.core.library.scan import candidates, scan
from gguf_budget.core.library.stores import StoreKind, store_roots

TINY = ArchDesc(name="tiny-llama", n_layer=2, n_embd=64, n_ff=128, n_head=2, n_head_kv=1, n_vocab=256,
                context_length=2048)
OTHER = ArchDesc(name="other-llama", n_layer=3, n_embd=64, n_ff=128, n_head=2, n_head_kv=1, n_vocab=256,
                 context_length=4096)


def model_bytes(tmp_path: Path, desc: ArchDesc = TINY) -> bytes:
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    path = write_gguf(scratch / f"{desc.name}.gguf", desc, "header_only")[0]
    return path.read_bytes()


def hf_store(home: Path, data: bytes, split: list[bytes]) -> Path:
    hub = home / ".cache" / "huggingface" / "hub"
    repo = hub / "models--owner--tiny-GGUF"
    rev = "a" * 40
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(rev)
    snap = repo / "snapshots" / rev
    (snap / "sub").mkdir(parents=True)
    (repo / "blobs").mkdir()

    def blob_link(name: str, content: bytes | None) -> None:
        digest = hashlib.sha256(content or name.encode()).hexdigest()
        if content is not None:
            (repo / "blobs" / digest).write_bytes(content)
        os.symlink(os.path.relpath(repo / "blobs" / digest, (snap / name).parent), snap / name)

    blob_link("tiny-Q4_K_M.gguf", data)
    blob_link("sub/tiny-Q8_0.gguf", None)  # the blob never finished downloading
    for i, shard in enumerate(split, 1):
        blob_link(f"big-Q4_K_M-{i:05d}-of-{len(split):05d}.gguf", shard)
    return hub


def ollama_store(home: Path, data: bytes) -> None:
    models = home / ".ollama" / "models"
    (models / "blobs").mkdir(parents=True)

    def manifest(path: str, blob: bytes) -> None:
        digest = hashlib.sha256(blob).hexdigest()
        (models / "blobs" / f"sha256-{digest}").write_bytes(blob)
        target = models / "manifests" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps({"schemaVersion": 2, "layers": [
            {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + "0" * 64},
            {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}", "size": len(blob)},
        ]}))

    manifest("registry.ollama.ai/library/tiny/latest", data)
    manifest("registry.ollama.ai/someone/broken/q4", b"this blob is not a GGUF file at all" * 10)


@pytest.fixture
def home(tmp_path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    data = model_bytes(tmp_path)
    split_dir = tmp_path / "split-src"
    split_dir.mkdir()
    shards = [p.read_bytes() for p in write_gguf(split_dir / "big.gguf", OTHER, "header_only", split_max_tensors=10)]
    hf_store(home, data, shards)
    ollama_store(home, data[:-1] + b"\0")  # a different file with the same model
    studio = home / ".lmstudio" / "models" / "pub" / "tiny-GGUF"
    studio.mkdir(parents=True)
    (studio / "tiny-IQ4_XS.gguf").write_bytes(data)
    downloads = tmp_path / "elsewhere"
    downloads.mkdir()
    (downloads / "other.gguf").write_bytes(model_bytes(tmp_path, OTHER))
    (home / ".lmstudio" / "settings.json").write_text(json.dumps({"downloadsFolder": str(downloads)}))
    mine = tmp_path / "mine"
    (mine / "deep").mkdir(parents=True)
    (mine / "deep" / "copy.gguf").write_bytes(data)
    os.symlink(mine, mine / "deep" / "loop")
    os.mkfifo(mine / "pipe.gguf")
    (mine / "notes.txt").write_text("not a model")
    return home


def entries_by_name(home: Path, extra=()):
    roots = store_roots(home, {}, extra)
    result = scan(roots, assess=lambda spec: spec.n_layer)
    return {e.name: e for e in result.entries}, result


def test_every_store_is_found_and_every_entry_named(home, tmp_path):
    found, result = entries_by_name(home, [tmp_path / "mine"])
    assert result.complete
    assert [r.kind for r in result.roots] == [StoreKind.HUGGING_FACE, StoreKind.LM_STUDIO, StoreKind.LM_STUDIO,
                                               StoreKind.OLLAMA, StoreKind.USER]
    assert set(found) == {
        "owner/tiny-GGUF · tiny-Q4_K_M.gguf", "owner/tiny-GGUF · sub/tiny-Q8_0.gguf",
        "owner/tiny-GGUF · big-Q4_K_M-00001-of-00003.gguf",
        "tiny:latest", "someone/broken:q4", "tiny-IQ4_XS.gguf", "other.gguf", "copy.gguf", "pipe.gguf",
    }
    ok = {name: e.assessment for name, e in found.items() if e.error is None}
    assert ok == {"owner/tiny-GGUF · tiny-Q4_K_M.gguf": 2, "owner/tiny-GGUF · big-Q4_K_M-00001-of-00003.gguf": 3,
                  "tiny:latest": 2, "tiny-IQ4_XS.gguf": 2, "other.gguf": 3, "copy.gguf": 2}


def test_split_models_are_one_entry_and_hf_links_resolve_to_blobs(home):
    found, _ = entries_by_name(home)
    big = found["owner/tiny-GGUF · big-Q4_K_M-00001-of-00003.gguf"]
    assert big.shards == 3 and big.architecture == "llama"
    assert not any("00002-of-00003" in name for name in found)


def test_unreadable_entries_say_why_and_never_stop_the_scan(home, tmp_path):
    found, result = entries_by_name(home, [tmp_path / "mine"])
    assert "unfinished download" in found["owner/tiny-GGUF · sub/tiny-Q8_0.gguf"].error
    assert "not a GGUF file" in found["someone/broken:q4"].error
    assert "not a regular file" in found["pipe.gguf"].error
    assert all("\n" not in (e.error or "") for e in result.entries)


def test_a_link_loop_is_walked_once(home, tmp_path):
    roots = store_roots(home, {}, [tmp_path / "mine"])
    names = [c.name for c in candidates(roots)]
    assert names.count("copy.gguf") == 1


def test_stores_follow_their_tools_settings(tmp_path):
    home = tmp_path / "home"
    (home / "hf").mkdir(parents=True)
    (home / "ollama-elsewhere").mkdir()
    env = {"HF_HUB_CACHE": str(home / "hf"), "OLLAMA_MODELS": str(home / "ollama-elsewhere")}
    kinds = {r.kind: r.path for r in store_roots(home, env)}
    assert kinds == {StoreKind.HUGGING_FACE: home / "hf", StoreKind.OLLAMA: home / "ollama-elsewhere"}


@pytest.mark.parametrize(("rel", "name"), [
    ("models--meta--Llama-3/snapshots/abc/x/m.gguf", ("meta/Llama-3", "x/m.gguf")),
    ("models--meta/snapshots/abc/m.gguf", None),
    ("datasets--a--b/snapshots/abc/m.gguf", None),
])
def test_hub_cache_paths_name_owner_repo_and_file(rel, name):
    from pathlib import PurePath

    assert hf_name(PurePath(rel)) == name


@pytest.mark.parametrize(("rel", "name"), [
    ("registry.ollama.ai/library/llama3/8b", "llama3:8b"),
    ("registry.ollama.ai/bob/llama3/latest", "bob/llama3:latest"),
    ("hf.co/bartowski/Qwen3-8B-GGUF/Q4_K_M", "hf.co/bartowski/Qwen3-8B-GGUF:Q4_K_M"),
    ("registry.ollama.ai/library/llama3", None),
])
def test_ollama_manifest_paths_name_model_and_tag(rel, name):
    from pathlib import PurePath

    assert ollama_name(PurePath(rel)) == name


def test_an_ollama_manifest_names_its_gguf_blob():
    assert ollama_model_blob(json.dumps({"layers": [{"mediaType": "application/vnd.ollama.image.model",
                                                     "digest": "sha256:" + "ab" * 32}]})) == "sha256-" + "ab" * 32
    assert ollama_model_blob("{not json") is None
    assert ollama_model_blob(json.dumps({"layers": [{"mediaType": "x", "digest": "sha256:" + "0" * 64}]})) is None


def test_cancel_returns_what_was_read_marked_incomplete(home):
    roots = store_roots(home, {})
    judged: list[str] = []

    def assess(spec) -> None:
        judged.append(spec.path)

    result = scan(roots, assess=assess, cancelled=lambda: len(judged) >= 2, workers=1)
    read = [e for e in result.entries if e.architecture is not None]
    known_unread = [e for e in result.entries if e.architecture is None]
    assert not result.complete and len(read) == 2
    assert all("broken link" in (e.error or "") or "not a regular file" in (e.error or "") for e in known_unread)


def test_added_folders_persist_and_a_broken_settings_file_is_ignored(tmp_path):
    config = tmp_path / "cfg" / "library.json"
    assert read_folders(config) == ()
    added = add_folder(tmp_path / "a", config)
    assert add_folder(tmp_path / "a", config) == added == ((tmp_path / "a").resolve(),)
    assert remove_folder(tmp_path / "a", config) == ()
    config.write_text("{broken")
    assert read_folders(config) == ()


def cli(*args: str, home: Path, config: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "OLLAMA", "LLAMA_CACHE", "XDG_"))}
    env.update(HOME=str(home), GGUF_BUDGET_CONFIG_DIR=str(config))
    return subprocess.run([sys.executable, "-m", "gguf_budget.gui.cli", "library", *args], capture_output=True,
                          text=True, env=env, timeout=120)


def test_the_library_command_lists_judges_and_remembers_folders(home, tmp_path):
    config = tmp_path / "config"
    added = cli("--add", str(tmp_path / "mine"), "--host-available", "16G", "--no-gpu", home=home, config=config)
    assert added.returncode == 0, added.stderr
    assert "copy.gguf" in added.stdout and str(tmp_path / "mine") in added.stdout
    listed = cli("--json", "--host-available", "16G", "--no-gpu", "--budget", "1G", home=home, config=config)
    assert listed.returncode == 0, listed.stderr
    payload = json.loads(listed.stdout)
    assert payload["budget_bytes"] == 1 << 30 and payload["machine"] == "hypothetical" and payload["complete"]
    by_name = {e["name"]: e for e in payload["entries"]}
    tiny = by_name["tiny:latest"]
    assert tiny["store"] == "ollama" and tiny["error"] is None and tiny["architecture"] == "llama"
    assert tiny["full_load"] == {"verdict": "cpu_only", "gpu_layers": 0, "ctx": 2048, "max_ctx": 2048}
    assert tiny["budget_plan"] == {"outcome": "feasible", "ctx": 2048, "pinned": 2, "n_layer": 2}
    assert "not a regular file" in by_name["pipe.gguf"]["error"] and by_name["pipe.gguf"]["full_load"] is None
    removed = cli("--remove", str(tmp_path / "mine"), "--json", "--host-available", "16G", "--no-gpu",
                  home=home, config=config)
    assert "copy.gguf" not in {e["name"] for e in json.loads(removed.stdout)["entries"]}


def test_the_library_command_refuses_a_missing_folder(home, tmp_path):
    bad = cli("--add", str(tmp_path / "nowhere"), home=home, config=tmp_path / "config")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "not a folder" in bad.stderr


def test_a_file_reached_through_links_of_every_kind_is_listed_once(tmp_path):
    """Relative and absolute links, links to folders, a link to a link: one real file, one entry."""
    data = model_bytes(tmp_path)
    real = tmp_path / "real"
    (real / "deep").mkdir(parents=True)
    (real / "deep" / "model.gguf").write_bytes(data)
    aliases = tmp_path / "aliases"
    aliases.mkdir()
    os.symlink("../real/deep/model.gguf", aliases / "relative.gguf")
    os.symlink(real / "deep" / "model.gguf", aliases / "absolute.gguf")
    os.symlink("relative.gguf", aliases / "chain.gguf")
    os.symlink("../real", aliases / "folder")
    roots = store_roots(tmp_path / "nohome", {}, [aliases, real])
    found = candidates(roots)
    assert len(found) == 1 and os.path.realpath(found[0].path) == str((real / "deep" / "model.gguf").resolve())
