"""What round 3 left (issue #37): a disk that refuses, a name too long and a log naming a 5,000-character
path are one line each (they were 20–24-line tracebacks)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gguf_budget.gui.cli import main

LOGS = Path(__file__).parent / "data" / "llamacpp-runs"


def one_line(capsys, args: list[str]) -> str:
    assert main(args) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and len(err) < 600, err[-2000:]
    return err


def test_library_add_with_a_300_character_name_is_one_line(capsys, tmp_path):
    assert "not a folder" in one_line(capsys, ["library", "--add", str(tmp_path / ("a" * 300))])


@pytest.mark.parametrize("where", ["file", "file/below"])
def test_a_config_folder_that_is_a_file_is_one_line(capsys, tmp_path, monkeypatch, where):
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("GGUF_BUDGET_CONFIG_DIR", str(tmp_path / where))
    err = one_line(capsys, ["library", "--add", str(tmp_path)])
    assert str(tmp_path / "file") in err
    assert ("a file is where a folder should be" if where == "file" else "a part of the path is not a folder") in err


def test_evidence_on_a_log_naming_a_5000_character_path_is_one_line(capsys, tmp_path):
    text = (LOGS / "gemma3_cli_full.log").read_text()
    log = tmp_path / "run.log"
    log.write_text(re.sub(r"\S+\.gguf", "/tmp/" + "d" * 5000 + ".gguf", text))
    assert "which is not here" in one_line(capsys, ["evidence", str(log)])
