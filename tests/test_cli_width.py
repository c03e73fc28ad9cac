"""Every report the command line prints fits 100 columns: each command on the demo model and the 8B catalogue entry.

The machine is typed (`--gpu-total`, `--host-available`, or none) and nothing is measured
(`--no-measure`, typed bandwidths), so the lines are the same on every machine; `evidence` reads a
recorded llama.cpp log beside its header-only model. Widths are counted in characters: the
reports' only non-ASCII characters (≈, —, ×, ◀, ★) each take one column. A command to paste
(`fit`'s Command and Ollama lines) is left whole, however long its path, and so is a word longer
than a line (a URL).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from recorded_models import LOGS, write_recorded_models

from gguf_budget.core.views.table import PASTED
from gguf_budget.core.views.table import WIDTH, fit_width
from gguf_budget.gui.cli import main
from gguf_budget.resources import demo_model_path

MACHINE = ["--no-measure", "--gpu-total", "24G", "--host-available", "64G"]
SMALL_MACHINE = ["--no-measure", "--gpu-total", "8G", "--host-available", "32G"]
NO_GPU = ["--no-measure", "--no-gpu", "--host-available", "16G"]
RATES = ["--ram-bw", "20G", "--disk-bw", "1G"]
MODELS = {"demo": [str(demo_model_path())], "8b": ["--catalog", "llama-3.1-8b-instruct"]}
COMMANDS = {
    "inspect": ["inspect"],
    "plan": ["plan", "--budget", "6G", *RATES],
    "sweep": ["sweep", *RATES],
    "fit": ["fit", *MACHINE],
    "fit tiers": ["fit", *MACHINE, "--tiers"],
    "fit no gpu": ["fit", *NO_GPU],
    "tune": ["tune", *MACHINE, "--goal", "max-ctx"],
    "quants": ["quants", *MACHINE],
    "quants budget": ["quants", *SMALL_MACHINE, "--budget", "8G"],
    "quants no gpu": ["quants", *NO_GPU],
}


LABELLED = re.compile(r" *\S.*?  +(\S.*)")


def _widest(capsys) -> tuple[int, str]:
    """The widest line printed, a command to paste and a lone long word aside."""
    captured = capsys.readouterr()
    lines = [line for line in (captured.out + captured.err).splitlines()
             if not ((m := LABELLED.match(line)) is not None and m.group(1).startswith(PASTED)) and " " in line.strip()]
    return max(((len(line), line) for line in lines), default=(0, ""))


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("command", COMMANDS)
def test_every_model_report_fits_100_columns(capsys, command, model):
    head, *options = COMMANDS[command]
    assert main([head, *MODELS[model], *options]) in (0, 3)
    width, line = _widest(capsys)
    assert width <= WIDTH, line


@pytest.mark.parametrize("argv", [["hw"], ["hw", "--presets"], ["hw", "--calibration"], ["library"],
                                  ["inspect", "--catalog", "list"]])
def test_every_machine_report_fits_100_columns(capsys, argv):
    assert main(argv) == 0
    width, line = _widest(capsys)
    assert width <= WIDTH, line


def test_the_evidence_table_fits_100_columns(tmp_path, capsys, monkeypatch):
    write_recorded_models(tmp_path / "models")
    monkeypatch.chdir(tmp_path)
    for log in sorted(LOGS.glob("*.log")):
        assert main(["evidence", str(log), "--ram-bw", "20G"]) in (0, 3)
        width, line = _widest(capsys)
        assert width <= WIDTH, (log.name, line)


WORDS = st.text(st.sampled_from("abc≈—"), min_size=1, max_size=30)


@given(label=st.text("ab", min_size=1, max_size=60), words=st.lists(WORDS, max_size=40), lead=st.integers(0, 8))
def test_a_wrapped_line_keeps_every_word_in_order_within_the_width(label, words, lead):
    line = " " * lead + label + "  " + " ".join(words)
    wrapped = fit_width(line).split("\n")
    assert all(len(part) <= WIDTH for part in wrapped)
    assert "".join("".join(part.split()) for part in wrapped) == "".join(line.split())


def test_a_command_to_paste_is_one_line_however_long(capsys):
    assert main(["fit", "--catalog", "llama-3.1-8b-instruct", *MACHINE, "--print-command"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and len(lines[0]) > WIDTH and lines[0].startswith("llama-server -m ")


def test_a_markdown_report_keeps_its_lines_whole(capsys):
    assert main(["plan", "--catalog", "llama-3.1-8b-instruct", "--budget", "6G", *RATES, "--format", "md"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line for line in lines if line.startswith("|")]
    assert rows and all(line.endswith("|") for line in rows)
    assert max(len(line) for line in lines) > WIDTH


def test_the_lines_kept_whole_begin_with_every_programs_name():
    """`table.PASTED` is spelled out so `say` stays light; it must name every program a command is printed for."""
    from gguf_budget.core.fit.runtime_types import Runtime

    assert PASTED == (*(f"{r.value} " for r in Runtime), "FROM ")
