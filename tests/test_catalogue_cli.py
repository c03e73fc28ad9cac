"""`gguf-budget inspect --catalog`: names, listing, JSON, and clean failures (exit 2)."""

from __future__ import annotations

import json

import pytest

from gguf_budget.core.model.catalogue import CATALOGUE, catalogue_names
from gguf_budget.gui.cli import main


def test_catalog_list_prints_every_name(capsys):
    assert main(["inspect", "--catalog", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines if not line.startswith(" ")]  # a row's description wraps under it
    assert [line.split()[0] for line in rows[:-1]] == list(catalogue_names())
    assert "skeleton (header only) built from the published config" in rows[-1]


def test_catalog_list_as_json_carries_the_published_sizes(capsys):
    assert main(["inspect", "--catalog", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(e["name"], e["published_file_bytes"]) for e in listed] == [
        (e.name, e.published_file_bytes) for e in CATALOGUE]


def test_catalog_name_inspects_the_skeleton(capsys):
    assert main(["inspect", "--catalog", "llama-3.1-8b-instruct"]) == 0
    out = capsys.readouterr().out
    assert "Llama-3.1-8B-Instruct Q4_K_M (skeleton, header only)" in out
    assert "header only (tensor data absent; the complete file is 4.58 GiB)" in out
    assert "4920739232 bytes" in out


def test_catalog_json_adds_the_catalogue_block(capsys):
    assert main(["inspect", "--catalog", "gemma-3-4b-it", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["architecture"] == "gemma3"
    assert payload["swa_layers"] == 29
    assert payload["catalogue"]["published_file_bytes"] == 2_489_757_856
    assert payload["catalogue"]["file"] == "gemma-3-4b-it-q4_k_m.skeleton.gguf"


@pytest.mark.parametrize("argv, message", [
    (["inspect", "--catalog", "llama-2-7b"], "choose one of: llama-3.2-1b-instruct"),
    (["inspect"], "give a FILE, or --catalog NAME"),
    (["inspect", "model.gguf", "--catalog", "lfm2-1.2b"], "not both"),
])
def test_bad_catalogue_requests_exit_2_with_one_line(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1
