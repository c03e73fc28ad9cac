"""`gguf-budget inspect`: the JSON contract, the text view, and clean failures (exit 2, one line)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from gguf_factory import ArchDesc

from gguf_budget.gui.cli import main

KEYS = {
    "path", "shards", "gguf_version", "architecture", "name", "file_type", "file_bytes", "tensor_bytes",
    "header_only", "n_tensors", "n_params", "n_layer", "n_embd", "n_ff", "n_head", "n_head_kv", "head_dim_k",
    "head_dim_v", "n_vocab", "context_length", "tied_embeddings", "layer_bytes", "global_bytes", "sliding_window",
    "expert_count", "expert_used_count", "unknown",
}


def test_json_has_the_contract_keys_and_accounts_for_every_byte(gguf_file, capsys):
    path = gguf_file(ArchDesc(n_head_kv=[1, 2], tied=True), "complete")
    assert main(["inspect", str(path), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert KEYS <= set(d)
    assert sum(d["layer_bytes"]) + sum(v or 0 for v in d["global_bytes"].values()) == d["tensor_bytes"]
    assert d["global_bytes"]["output"] is None and d["tied_embeddings"] is True
    assert (d["n_head"], d["n_head_kv"], d["header_only"], d["file_bytes"]) == (4, [1, 2], False,
                                                                                path.stat().st_size)


def test_text_view_escapes_hostile_names(gguf_file, capsys):
    path = gguf_file(ArchDesc(name="evil\x1b[2Jname\n" + "x" * 500))
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "evil\\x1b[2Jname\\x0a" in out and "(+" in out


@pytest.mark.parametrize("content", [b"", b"GGUF", b"not a model at all"])
def test_bad_files_exit_2_with_one_line(tmp_path, content):
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    result = subprocess.run([sys.executable, "-m", "gguf_budget.gui.cli", "inspect", str(path)],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stdout == "" and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr and str(path) in result.stderr


def test_missing_file_exits_2(tmp_path, capsys):
    assert main(["inspect", str(tmp_path / "gone.gguf")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_bad_arguments_are_one_line_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["plan", "x.gguf", "--budget", "lots"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and len(err.strip().splitlines()) == 1 and "not a size: 'lots'" in err
