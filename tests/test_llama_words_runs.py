"""Every recorded real llama.cpp run, asked in its own words: the run's command line read as llama.cpp reads it.

Each log in tests/data/llamacpp-runs starts with the command that made it. That command is read by
`llama_words.reader`, asked over a machine with room for everything (`explorer.llama_question.ask`)
and compared with what the run printed and what its process held (`evidence.compare`, Rule 6: only the
CPU's features and the run's tokens come from the log). So each option those commands carry — `-fa off`,
`--swa-full`, `-ub`/`-b`, `-lm none`, `-ctk`/`-ctv` alone, `--no-repack`, `-np 4`, each program's own
defaults — is checked against llama.cpp itself, through the same path a person's question takes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from recorded_models import LOGS, load_run_models, model_of

from gguf_budget.core.evidence.compare import compare
from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.explorer.llama_question import ask
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit.runtime_types import Runtime
from gguf_budget.core.llama_words.reader import read_llama_args, split_command
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.model.loader import load_model

RUNS = LOGS.parent / "llamacpp-runs"
ASKED = sorted(p.name for p in RUNS.glob("*.log") if "_python_" not in p.name)
PYTHON = sorted(p.name for p in RUNS.glob("*_python_*.log"))
NEW_OPTIONS = ("swa-full", "ub128", "ctk-q8", "ctv-q8", "no-repack", "np4", "ub256")
ROOMY = 1 << 50


@pytest.fixture(scope="module")
def specs(tmp_path_factory):
    return load_run_models(tmp_path_factory.mktemp("asked"))


def _asked(specs, name: str):
    text = (RUNS / name).read_text()
    log = parse_llamacpp_log(text)
    model = specs["llama8b" if name.startswith("llama8b") else model_of(name)]
    command = read_llama_args(split_command(text.splitlines()[0].removeprefix("+ ")))  # the command, shell-quoted
    question = ask(command, ExplorerState(model=model, machine=hypothetical_machine(ROOMY)), model)
    request = question.state.fit_request(question.state.ctx)
    return question, compare(log, model, asked=request)


def test_the_runs_carry_every_newly_expressible_option():
    for option in NEW_OPTIONS:
        assert sum(option in name for name in ASKED) >= 2, option


@pytest.mark.parametrize("name", ASKED)
def test_a_runs_own_command_predicts_its_buffers_and_peak_rss(specs, name):
    """The issue's bounds on the hidden-style runs: peak RSS within ±5 %; weights, copies, KV and output exact."""
    question, c = _asked(specs, name)
    assert question.runtime.value == c.log.binary
    assert abs(c.row("peak RSS").error) <= 0.05, c.row("peak RSS")
    for component in ("weights", "repacked", "KV", "output"):
        assert c.row(component).error == 0.0, component


@pytest.mark.parametrize("name", [n for n in ASKED if any(o in n for o in NEW_OPTIONS)])
def test_the_compute_buffer_follows_the_commands_options(specs, name):
    _, c = _asked(specs, name)
    assert abs(c.row("compute").error) <= 0.02, c.row("compute")


def test_the_command_and_the_printed_settings_agree(specs):
    """The same run compared as its command asks and as its log's printed settings say: the same buffers (where the
    log prints the settings: not the slot count, not --no-repack)."""
    for name in ASKED:
        if "_np4" in name or "_no-repack" in name:
            continue
        log = parse_llamacpp_log((RUNS / name).read_text())
        model = specs["llama8b" if name.startswith("llama8b") else model_of(name)]
        by_log = compare(log, model)
        _, by_command = _asked(specs, name)
        for component in ("weights", "repacked", "KV", "output"):
            assert by_command.row(component).estimated == by_log.row(component).estimated, (name, component)


def test_an_options_effect_is_seen_in_the_runs_themselves(specs):
    """What each option moves, measured by llama.cpp: --swa-full grows gemma3's KV, -ctk q8_0 alone shrinks it less
    than both halves would, --no-repack leaves no CPU_REPACK."""
    def kv(name):
        return _asked(specs, name)[1].row("KV").measured

    assert kv("gemma3_cli_full_swa-full.log") > 2.5 * kv("gemma3_cli_full.log")
    assert kv("smollm2_cli_short_ctk-q8.log") < kv("smollm2_cli_short.log")
    assert _asked(specs, "gemma3_cli_short_no-repack.log")[1].row("repacked").measured == 0
    assert _asked(specs, "gemma3_cli_short.log")[1].row("repacked").measured > 0
    assert (RUNS / "README.md").read_text().count("issue 32") >= 1


def _asked_python(specs, name: str):
    """A llama-cpp-python run is asked as `--runtime llama-cpp-python` with the context and load mode its script
    set (`Llama(n_ctx=…, use_mmap=False)` is `-lm none`): its own defaults do the rest."""
    text = (RUNS / name).read_text()
    log = parse_llamacpp_log(text)
    words = split_command(text.splitlines()[0].removeprefix("+ "))  # python llama_cpp_run.py MODEL CTX PROMPT N [none]
    argv = ["-c", words[3], *(["-lm", "none"] if words[-1] == "none" else [])]
    model = specs[model_of(name)]
    question = ask(read_llama_args(argv), ExplorerState(model=model, machine=hypothetical_machine(ROOMY)), model,
                   Runtime.LLAMA_CPP_PYTHON)
    return compare(log, model, asked=question.state.fit_request(question.state.ctx))


@pytest.mark.parametrize("name", PYTHON)
def test_a_llama_cpp_python_run_is_predicted_from_its_own_defaults(specs, name):
    """±10 % for llama-cpp-python (the interpreter's own allocations vary); its full-size sliding-window cache
    (llama.cpp's library default) is what the run allocated."""
    c = _asked_python(specs, name)
    assert abs(c.row("peak RSS").error) <= 0.10, c.row("peak RSS")
    for component in ("weights", "repacked", "KV", "output"):
        assert c.row(component).error == 0.0, component


def test_a_live_run_asked_in_its_own_words_is_priced_exactly(tmp_path):
    """The CI build, now: a tiny model run with options this tool could not be asked before; every buffer it prints
    is the one its command, read by the reader, prices."""
    import subprocess

    from llama_support import llama_engine
    from runnable_model import write_runnable_model

    model_path = write_runnable_model(tmp_path / "tiny.gguf")
    cli = Path(llama_engine().executable).parent / "llama-cli"
    argv = [str(cli), "-m", str(model_path), "-c", "1024", "-t", "2", "-p", "Hi", "-n", "4", "--ignore-eos", "-st",
            "-v", "-fa", "off", "-ub", "128", "-b", "256", "-ctk", "q8_0", "--no-repack"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    log = parse_llamacpp_log(done.stdout + done.stderr)
    model = load_model(model_path)
    question = ask(read_llama_args(argv), ExplorerState(model=model, machine=hypothetical_machine(ROOMY)), model)
    c = compare(log, model, asked=question.state.fit_request(question.state.ctx))
    for component in ("weights", "repacked", "KV", "output", "compute"):
        assert c.row(component).error == 0.0, c.row(component)
