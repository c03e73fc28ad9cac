"""Hostile llama.cpp logs (issue #24 D): numbers of 400 and 6,000 digits, `nan` and `inf` speeds,
lines built to make a backtracking pattern take quadratic time, and a model path that carries a
fake peak-RSS line. Each is read in linear time as unknown — never a ValueError, OverflowError,
NaN in JSON, or a parse that does not end."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings, strategies as st
from recorded_models import LOGS, write_recorded_models

from gguf_budget.core.evidence.llamacpp_log import MAX_LINE_CHARS, LlamaCppLogError, parse_llamacpp_log
from gguf_budget.gui.cli import main

SMOLLM2 = LOGS / "smollm2-135m-instruct-q4_1_ctx2048_f16.log"
LOADER = "llama_model_loader: loaded meta data with 33 key-value pairs and 272 tensors from m.gguf (version GGUF V3 (latest))\n"
HUGE = "9" * 6000
LARGE = "9" * 400
HANG_LIMIT_S = 120
"""Not a speed budget: a parse still running after this long does not end (quadratic on long lines)."""

# Each line puts an absurd number where the parser reads one; the field it fills is then unknown.
ABSURD_NUMBERS = {
    "loader counts": (f"llama_model_loader: loaded meta data with {HUGE} key-value pairs and {HUGE} tensors from m.gguf "
                      "(version GGUF V3 (latest))\n", lambda log: log.loads == ()),
    "type count": (f"llama_model_loader: - type  f32: {HUGE} tensors\n", lambda log: log.run.model.type_counts == ()),
    "buffer": (f"load_tensors: CPU_Mapped model buffer size = {HUGE}.5 MiB\n", lambda log: log.run.buffers == ()),
    "buffer decimals": (f"load_tensors: CPU model buffer size = 1.{HUGE} MiB\n", lambda log: log.run.buffers == ()),
    "cache": (f"llama_kv_cache: size = 1.00 MiB ({HUGE} cells, 2 layers, 1/1 seqs), K (f16): 1.00 MiB\n",
              lambda log: log.run.caches == ()),
    "cache part": (f"llama_kv_cache: size = 1.00 MiB (8 cells, 2 layers, 1/1 seqs), K (f16): {HUGE} MiB\n",
                   lambda log: log.run.caches[0].parts == ()),
    "n_ctx": (f"llama_context: n_ctx = {HUGE}\n", lambda log: log.run.settings.n_ctx is None),
    "n_ctx superscript": ("llama_context: n_ctx = ²\n", lambda log: log.run.settings.n_ctx is None),
    "meta": (f"print_info: n_layer = {HUGE}\n", lambda log: log.run.model.n_layer is None),
    "offloaded": (f"load_tensors: offloaded {HUGE}/31 layers to GPU\n", lambda log: log.run.offloaded is None),
    "kv_size": (f"llama_kv_cache_init: kv_size = {HUGE}, offload = 1\n", lambda log: log.run.caches == ()),
    "breakdown": (f"llama_memory_breakdown_print: |   - Host   | {HUGE} = 1 + 2 + 3 |\n",
                  lambda log: log.run.breakdown == ()),
    "build": (f"build: {HUGE} (0c1e570)\n", lambda log: log.build is None),
    "threads": (f"system_info: n_threads = {HUGE} | AVX = 1 |\n", lambda log: log.n_threads is None),
    "eval": (f"llama_perf_context_print:        eval time = {HUGE} ms / 7 runs (1 ms per token, 5 tokens per second)\n",
             lambda log: log.eval is None),
    "eval tokens": (f"llama_perf_context_print:        eval time = 10 ms / {HUGE} runs (1 ms per token, 5 tokens per "
                    "second)\n", lambda log: log.eval is None),
    "time -v": (f"\tMaximum resident set size (kbytes): {HUGE}\n", lambda log: log.peak_rss is None),
    "peak 6000": (f"peak RSS: {HUGE} GiB\n", lambda log: log.peak_rss is None),
    "peak 400": (f"peak RSS: {LARGE} GiB\n", lambda log: log.peak_rss is None),
    "peak 400 decimals": (f"peak RSS: {LARGE}.{LARGE} GiB\n", lambda log: log.peak_rss is None),
    "fingerprint": (f'{{"system_fingerprint":"b{HUGE}-0c1e570"}}\n', lambda log: log.build is None),
    "file size": (f"print_info: file size = {LARGE}.5 MiB (5.74 BPW)\n", lambda log: log.run.model.file_size is None),
}


@pytest.mark.parametrize("case", sorted(ABSURD_NUMBERS))
def test_absurd_numbers_are_unknown_never_an_exception(case):
    line, unknown = ABSURD_NUMBERS[case]
    log = parse_llamacpp_log(LOADER + line) if "loader counts" != case else None
    if log is None:
        with pytest.raises(LlamaCppLogError):
            parse_llamacpp_log(line)
        return
    assert unknown(log), log


@pytest.mark.parametrize("speed", ["nan", "-nan", "inf"])
def test_a_speed_that_is_not_a_number_is_unknown(speed):
    log = parse_llamacpp_log(LOADER + f"llama_perf_context_print:        eval time =   10.00 ms /     7 runs   "
                                      f"(    1.43 ms per token, {speed} tokens per second)\n")
    assert log.eval is None


def strict_json(text: str) -> object:
    def refuse(constant: str) -> object:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("speed", ["nan", "inf"])
def test_evidence_json_stays_json_with_a_nan_speed(tmp_path, monkeypatch, capsys, speed):
    write_recorded_models(tmp_path / "models")
    monkeypatch.chdir(tmp_path)
    text = SMOLLM2.read_text()
    assert "94.00 tokens per second" in text
    (tmp_path / "run.log").write_text(text.replace("94.00 tokens per second", f"{speed} tokens per second"))
    assert main(["evidence", "run.log", "--ram-bw", "20G", "--json"]) == 0
    payload = strict_json(capsys.readouterr().out)
    decode = next(r for r in payload["rows"] if r["name"] == "decode")
    assert decode["measured"] is None


# Lines built so that a backtracking pattern takes time quadratic in their length.
N = MAX_LINE_CHARS - 200
QUADRATIC_LINES = [
    "load_tensors: buffer size = " + "x" * N,
    "x" * N + " buffer size = 1 MiB",
    "print_info: a" + " " * N + "b = c",
    "print_info: a" + " " * N,
    "llama_memory_breakdown_print: |   - a" + " " * N + "b",
    "llama_kv_cache: size = 1.00 MiB (1 cells, 1 layers, 1 seqs), " + "K" * N,
    "llama_kv_cache: size = 1.00 MiB (1 cells, 1 layers, 1 seqs), " + "K (f16):" + " " * N,
    "llama_model_loader: loaded meta data with 1 key-value pairs and 1 tensors from " * (N // 80),
    "system_info: " * (N // 13),
    "llama_context: " + " " * N + "n_ctx",
    "llama_perf_context_print: eval time = " + " " * N,
    "Command being timed: \"" * (N // 22),
    "build " + "1" * N,
    "peak RSS:" + " " * N,
]


def test_lines_built_for_backtracking_are_read_in_linear_time():
    """A child process parses ~1,000 long hostile lines (under the line cap) and one of 1 MB; it must end."""
    script = textwrap.dedent(f"""
        import json, sys
        from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
        lines = json.load(sys.stdin)
        text = {LOADER!r} + "\\n".join(lines * 70) + "\\n" + "buffer size = " + "x" * 1_000_000 + "\\n"
        parse_llamacpp_log(text)
        print("ended")
    """)
    done = subprocess.run([sys.executable, "-c", script], input=json.dumps(QUADRATIC_LINES), capture_output=True,
                          text=True, timeout=HANG_LIMIT_S)
    assert done.stdout.strip() == "ended", done.stderr


def test_a_line_over_the_cap_is_skipped():
    long_path = "/" + "p" * MAX_LINE_CHARS
    with pytest.raises(LlamaCppLogError):
        parse_llamacpp_log(f"llama_model_loader: loaded meta data with 1 key-value pairs and 1 tensors from {long_path} "
                           "(version GGUF V3 (latest))\n")
    path = "/" + "p" * 4095
    log = parse_llamacpp_log(f"llama_model_loader: loaded meta data with 1 key-value pairs and 1 tensors from {path} "
                             "(version GGUF V3 (latest))\n")
    assert log.run.model.path == path


@pytest.mark.parametrize("line", [
    "+ /usr/bin/llama-cli -m '/models/peak RSS: 1 b/m.gguf' -c 512",
    "\tCommand being timed: \"llama-cli -m /models/peak_rss_bytes=1/m.gguf\"",
    "llama_model_loader: - kv   0: general.name str = peak RSS: 1 b",
])
def test_a_peak_rss_line_is_only_read_at_the_start_of_a_line(line):
    assert parse_llamacpp_log(LOADER + line + "\n").peak_rss is None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(SMOLLM2.read_text().splitlines()), min_size=1, max_size=40),
       st.lists(st.tuples(st.integers(0, 39), st.sampled_from([HUGE, LARGE, "nan", "inf", "-1", "²", "1e308", "",
                                                               " " * 300, "|", "(", ")", "="])), max_size=8))
def test_mutated_real_lines_parse_or_are_refused_in_one_line(lines, edits):
    """Real lines with their numbers swapped for hostile ones: a record, or `LlamaCppLogError` — nothing else."""
    for index, value in edits:
        if index < len(lines):
            line = lines[index]
            digits = [i for i, c in enumerate(line) if c.isdigit()]
            at = digits[len(digits) // 2] if digits else len(line)
            lines[index] = line[:at] + value + line[at + 1:]
    try:
        log = parse_llamacpp_log("\n".join(lines))
    except LlamaCppLogError:
        return
    assert log.eval is None or log.eval.tokens_per_second == log.eval.tokens_per_second


@pytest.mark.parametrize("line", [
    "print_info: general.name     = x CPU_Mapped model buffer size = 999.00 MiB",
    "llama_model_loader: - kv   0:    general.name str = x CPU model buffer size = 5.00 MiB",
    "+ llama-cli -m 'llama_model_loader: loaded meta data with 1 key-value pairs and 1 tensors from x (version'",
    "+ llama-cli -m '/m/ CPU_Mapped model buffer size = 7.00 MiB'",
    "\tCommand being timed: \"llama-cli -m /m/Maximum resident set size (kbytes): 1\"",
    "\tCommand being timed: \"llama-cli -m /m/load_tensors: CPU model buffer size = 3.00 MiB\"",
])
def test_text_quoted_from_a_file_name_or_the_metadata_forges_nothing(line):
    log = parse_llamacpp_log(LOADER + line + "\n")
    assert len(log.loads) == 1 and log.run.buffers == () and log.peak_rss is None
