"""Untrusted text never drives the terminal: names, architectures, paths and error messages are
escaped by the one `safe_text` (control characters, bidi controls, lone surrogates), and a
file name that is not UTF-8 prints instead of crashing the print."""

from __future__ import annotations

import os
import re

import pytest
from gguf_factory import ArchDesc, write_gguf
from hostile_support import assert_one_line_exit_2, run_cli

from gguf_budget.core.safe_text import safe_lines, safe_text

OSC8_LINK = "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"
EVIL = f"ll\x1b[2J{OSC8_LINK}\nma\u202e"
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
RAW_DANGER = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


@pytest.mark.parametrize("raw, shown", [
    ("\x1b[2J", "\\x1b[2J"),
    ("a\nb", "a\\x0ab"),
    ("\u202eevil", "\\u202eevil"),
    ("\u2066x\u2069", "\\u2066x\\u2069"),
    ("\u061c\u200e\u200f", "\\u061c\\u200e\\u200f"),
    ("m\udcff.gguf", "m\\udcff.gguf"),
    ("\u2028\u2029\x85", "\\u2028\\u2029\\x85"),
    ("日本語 ok – émoji 🙂", "日本語 ok – émoji 🙂"),
])
def test_safe_text_escapes_what_could_steer_a_terminal(raw, shown):
    assert safe_text(raw) == shown
    assert safe_text(safe_text(raw)) == safe_text(raw)


def test_every_bidi_control_is_escaped():
    assert not RAW_DANGER.search(safe_text(BIDI, None))
    assert safe_text(BIDI, None).count("\\u") == len(BIDI)


def test_safe_lines_keeps_the_layout_and_escapes_inside_lines():
    assert safe_lines("Model  a\x1b[2J\nFile   b\u202e") == "Model  a\\x1b[2J\nFile   b\\u202e"


def _clean(text: str) -> None:
    assert not RAW_DANGER.search(text), repr(text)
    text.encode("utf-8")


def test_inspect_prints_a_hostile_architecture_on_one_line(tmp_path):
    path = write_gguf(tmp_path / "m.gguf", ArchDesc(arch=EVIL, name=BIDI), "header_only")[0]
    result = run_cli(["inspect", str(path)])
    assert result.returncode == 0, result.stderr
    _clean(result.stdout)
    arch_lines = [line for line in result.stdout.splitlines() if line.startswith("Architecture")]
    assert arch_lines == ["Architecture  ll\\x1b[2J\\x1b]8;;https://evil.example\\x1b\\click\\x1b]8;;\\x1b\\\\x0ama\\u202e"]


def test_an_error_naming_a_hostile_architecture_is_one_escaped_line(tmp_path):
    desc = ArchDesc(arch=EVIL, omit=["{arch}.block_count"], extra_kv={f"{EVIL}.block_count": 7})
    path = write_gguf(tmp_path / "m.gguf", desc, "header_only")[0]
    result = run_cli(["inspect", str(path)])
    assert_one_line_exit_2(result, "block_count is 7 but the tensor directory has 2 blocks")
    _clean(result.stderr)


@pytest.mark.usefixtures("measured_machine")  # conftest: the run's one measurement of the speed figures
@pytest.mark.parametrize("args", [["inspect"], ["plan", "--budget", "1G", "--format", "md"], ["plan", "--budget", "1G"],
                                  ["fit", "--no-gpu", "--host-available", "8G"], ["sweep", "--budgets", "1G:2G:1G"]])
def test_a_file_name_that_is_not_utf8_prints_escaped(tmp_path, args):
    model = write_gguf(tmp_path / "m.gguf", ArchDesc(), "header_only")[0]
    odd = os.fsencode(tmp_path) + b"/m\xff\xe2\x80\xae.gguf"
    os.rename(model, odd)
    result = run_cli([args[0], os.fsdecode(odd), *args[1:]], env={**os.environ, "LC_ALL": "C.UTF-8",
                                                                   "PYTHONIOENCODING": "utf-8"})
    assert result.returncode in (0, 3), result.stderr
    assert "Traceback" not in result.stderr
    _clean(result.stdout + result.stderr)


def test_a_missing_file_with_a_hostile_name_is_one_escaped_line(tmp_path):
    result = run_cli(["inspect", str(tmp_path / "gone\x1b[2J\n\u202e.gguf")])
    assert_one_line_exit_2(result, "no such file", "gone\\x1b[2J\\x0a\\u202e.gguf")
    _clean(result.stderr)
