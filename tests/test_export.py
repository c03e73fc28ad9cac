"""Plan and sweep exports: `plan --format md|json` and `sweep --csv FILE` agree with the JSON."""

from __future__ import annotations

import csv
import io
import json

import pytest
from gguf_factory import ArchDesc
from hypothesis import given, settings
from hypothesis import strategies as st

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import BudgetRequest, LEDGER_LINES, load_model, plan_dict, plan_memory, sweep_budgets, sweep_dict
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.views.export import CSV_COLUMNS, md_escape, plan_markdown, sweep_csv
from gguf_budget.core.views.ledger_names import line_name
from gguf_budget.gui.cli import main

GIB = 1024**3
MODEL = str(catalogue_path(find_entry("llama-3.2-1b-instruct")))


def _run(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_format_json_is_exactly_the_json_output(capsys):
    code_a, json_out, _ = _run(capsys, ["plan", MODEL, "--budget", "1G", "--json", "--no-measure"])
    code_b, format_out, _ = _run(capsys, ["plan", MODEL, "--budget", "1G", "--format", "json", "--no-measure"])
    assert (code_a, code_b) == (0, 0)
    assert format_out == json_out
    expected = plan_dict(plan_memory(load_model(MODEL), BudgetRequest(budget=Budget.of(GIB))))
    assert {k: v for k, v in json.loads(format_out).items() if k in expected} == expected


def test_markdown_report_holds_the_ledger_table_with_exact_bytes(capsys):
    code, md, _ = _run(capsys, ["plan", MODEL, "--budget", "1G", "--format", "md"])
    assert code == 0
    d = plan_dict(plan_memory(load_model(MODEL), BudgetRequest(budget=Budget.of(GIB))))
    assert md.startswith("# Memory plan: Llama-3.2-1B-Instruct Q4\\_K\\_M (skeleton, header only)\n")
    assert "| line | bytes | size |" in md
    for line in LEDGER_LINES:
        assert f"| {line_name(line)} | {d['ledger'][line]:,} |" in md
    assert f"| **Total** | **{d['total']:,}** |" in md
    assert f"| Pinned layers | {d['n_pinned']} of 16 |" in md
    assert "```text\n" + d["report"] + "\n```" in md


def test_markdown_of_an_impossible_plan_keeps_exit_3(capsys):
    code, md, _ = _run(capsys, ["plan", MODEL, "--budget", "64M", "--format", "md"])
    assert code == 3
    assert "| Verdict | impossible |" in md
    assert "RAM budget impossible" in md


def test_json_with_another_format_is_bad_input(capsys):
    code, out, err = _run(capsys, ["plan", MODEL, "--budget", "1G", "--json", "--format", "md"])
    assert (code, out) == (2, "")
    assert "--json and --format md disagree" in err


@pytest.mark.parametrize("raw, escaped", [
    ("a|b", "a\\|b"),
    ("*bold* _it_", "\\*bold\\* \\_it\\_"),
    ("line\nbreak", "line\\\\x0abreak"),
    ("<script>", "\\<script\\>"),
])
def test_md_escape(raw, escaped):
    assert md_escape(raw) == escaped


def test_hostile_model_names_cannot_break_the_table(model):
    spec = model(ArchDesc(name="evil | name\n# heading"))
    md = plan_markdown(plan_memory(spec, BudgetRequest(budget=Budget.of(GIB))), spec)
    assert md.splitlines()[0] == "# Memory plan: evil \\| name\\\\x0a\\# heading"
    assert all(line.count("|") - line.count("\\|") in (0, 3, 4) for line in md.splitlines() if line.startswith("|"))


def _csv_rows(text):
    return list(csv.reader(io.StringIO(text)))


def test_sweep_csv_file_has_one_row_per_budget(capsys, tmp_path):
    out_file = tmp_path / "sweep.csv"
    code, _, _ = _run(capsys, ["sweep", MODEL, "--budgets", "256M:2G:256M", "--csv", str(out_file), "--no-measure"])
    assert code == 0
    _, json_out, _ = _run(capsys, ["sweep", MODEL, "--budgets", "256M:2G:256M", "--json", "--no-measure"])
    rows = _csv_rows(out_file.read_text(encoding="utf-8"))
    swept = json.loads(json_out)
    assert tuple(rows[0]) == CSV_COLUMNS
    assert len(rows) == 1 + 8
    for got, want in zip(rows[1:], swept["rows"], strict=True):
        assert got == [str(want["budget"]), str(want["feasible"]).lower(), str(want["ctx"]), str(want["n_pinned"]),
                       str(swept["n_layer"]), str(want["stream_lm_head"]).lower(), str(want["n_buffers"]),
                       str(want["total"]), str(want["ring_planned"]), "" if want["tok_s"] is None else repr(want["tok_s"]),
                       "" if want["stream_bytes_per_token"] is None else str(want["stream_bytes_per_token"]),
                       "" if want["tok_s_full_context"] is None else repr(want["tok_s_full_context"])]


def test_sweep_csv_to_an_unwritable_path_is_bad_input(capsys, tmp_path):
    code, _, err = _run(capsys, ["sweep", MODEL, "--budgets", "256M:1G:256M", "--csv", str(tmp_path / "no" / "x.csv")])
    assert code == 2
    assert "cannot write" in err


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=4 * GIB), min_size=0, max_size=40))
def test_sweep_csv_round_trips_any_budget_list(budgets):
    result = sweep_budgets(load_model(MODEL), budgets, BudgetRequest())
    rows = _csv_rows(sweep_csv(result))
    assert len(rows) == len(budgets) + 1
    want = sweep_dict(result)["rows"]
    assert [int(r[0]) for r in rows[1:]] == budgets
    assert [int(r[7]) for r in rows[1:]] == [w["total"] for w in want]
    assert [r[1] == "true" for r in rows[1:]] == [w["feasible"] for w in want]
