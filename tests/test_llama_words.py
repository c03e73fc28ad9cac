"""llama.cpp's own words: its option table, a command read as llama.cpp reads it, and the answer it asks for.

The option table is held against each program's `--help` (the CI build's, live, and a recorded copy of
it in tests/data/llamacpp-help); the reader against llama.cpp's parsing rules; each option against the
buffers it moves; and every printed command against the answer it came from (a property test).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from llama_support import llama_engine

from gguf_budget.core.errors import LlamaArgsError
from gguf_budget.core.explorer.full_load import full_load
from gguf_budget.core.explorer.llama_question import ask
from gguf_budget.core.explorer.state import ExplorerState
from gguf_budget.core.fit.engine_options import EngineOptions, LoadMode
from gguf_budget.core.fit.runtime_types import Runtime, SplitMode, TensorOverride
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.llama_words.options import OPTIONS, PRICED, SPELLINGS, Effect, Program
from gguf_budget.core.llama_words.reader import read_llama_args, split_command
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.model.kv import KV_TYPES, KVType
from gguf_budget.core.model.loader import load_model
from gguf_budget.core.speed.token_bytes import TokenPrices
from gguf_budget.gui.cli import main

pytestmark = [pytest.mark.slow,  # published commands priced by fit, quants and the library (CI hands the file out first)
              pytest.mark.usefixtures("measured_machine")]  # conftest: this machine's figures measured once a run

HELP = Path(__file__).parent / "data" / "llamacpp-help"
GiB = 1 << 30
MiB = 1 << 20


def help_spellings(text: str) -> list[str]:
    """Every option spelling a llama.cpp `--help` lists (the part of each option line before its description)."""
    out = []
    for line in text.splitlines():
        if not line.startswith("-") or line.startswith("-----"):
            continue
        head = re.split(r"\s{2,}", line)[0]
        out += [w for part in head.split(",") if (w := part.strip().split(" ")[0]).startswith("-")]
    return out


def _unlisted(program: Program, text: str) -> list[str]:
    return [s for s in help_spellings(text) if s not in SPELLINGS or program not in SPELLINGS[s][0].programs]


@pytest.mark.parametrize("program", list(Program))
def test_every_option_the_recorded_help_lists_has_a_row(program):
    text = (HELP / f"{program.value}.txt").read_text()
    assert len(help_spellings(text)) > 150
    assert _unlisted(program, text) == []


@pytest.mark.parametrize("program", list(Program))
def test_every_option_the_ci_builds_help_lists_has_a_row(program):
    """The live check: a llama.cpp option that appears without a row fails here, before it is read as unknown."""
    folder = Path(llama_engine().executable).parent
    text = subprocess.run([str(folder / program.value), "--help"], capture_output=True, text=True, timeout=60).stdout
    assert _unlisted(program, text) == []


def test_a_row_that_is_not_in_the_help_is_caught():
    text = (HELP / "llama-server.txt").read_text() + "\n--frobnicate N                          new in a later build\n"
    assert _unlisted(Program.SERVER, text) == ["--frobnicate"]


def test_every_priced_option_fills_a_setting():
    """Each priced row reads into the settings (a value, a flag or an added override), never dropped."""
    for name, option in PRICED.items():
        argv = [option.spellings[0]] + (["1"] * option.values)
        value = {"flash_attn": "on", "cache_type_k": "q8_0", "cache_type_v": "q8_0", "draft_type_k": "q8_0",
                 "draft_type_v": "q8_0", "load_mode": "none", "split_mode": "none", "device": "CUDA0",
                 "override_tensor": "exps=CPU", "fit": "off", "tensor_split": "1,1", "draft_device": "none"}.get(name)
        if value is not None:
            argv = [option.spellings[0], value]
        cmd = read_llama_args(["llama-server", *argv])
        assert [g.option.detail for g in cmd.priced] == [name]
        assert cmd.settings != read_llama_args(["llama-server"]).settings, name


def test_the_table_classifies_every_row_and_names_a_reason():
    assert {o.effect for o in OPTIONS} == set(Effect)
    for option in OPTIONS:
        assert option.reason and option.programs and option.values in (0, 1, 2)
        if option.effect is Effect.PRICED:
            assert option.detail in PRICED


# The reader: llama.cpp's parsing rules.

def test_a_whole_server_command_reads_as_llama_cpp_reads_it():
    cmd = read_llama_args(split_command(
        "./build/bin/llama-server -m /models/q.gguf -c 32768 -ngl 99 -fa on -np 4 --temp 0.7 --host 0.0.0.0 "
        "-ctk q8_0 -ctv q8_0 -ot 'blk\\.(1|2)\\.ffn_.*_exps=CPU' -ot exps=CUDA0 --no_mmap"))
    s = cmd.settings
    assert cmd.program is Program.SERVER and s.model == "/models/q.gguf" and s.ctx == 32768 and s.gpu_layers == 99
    assert s.flash_attn is True and s.parallel == 4 and s.cache_type_k == s.cache_type_v == KVType.Q8_0
    assert s.overrides == (TensorOverride(r"blk\.(1|2)\.ffn_.*_exps", "CPU"), TensorOverride("exps", "CUDA0"))
    assert s.load_mode is LoadMode.NONE and any("older llama.cpp" in n for n in cmd.notes)
    assert [g.text for g in cmd.ignored] == ["--temp 0.7", "--host 0.0.0.0"]


@pytest.mark.parametrize("argv, message", [
    (["llama-server", "--frobnicate"], "error: invalid argument: --frobnicate"),
    (["llama-server", "-c"], 'error while handling argument "-c": expected value for argument'),
    (["llama-server", "-c", "lots"], 'error while handling argument "-c": not a whole number'),
    (["llama-server", "-fa", "maybe"], 'error while handling argument "-fa": unknown value'),
    (["llama-server", "-ctk", "q3_k"], 'error while handling argument "-ctk": unsupported cache type'),
    (["llama-server", "-ot", "exps"], 'error while handling argument "-ot": invalid value'),
    (["llama-server", "-ot", "(=CPU"], "is not a regular expression"),
    (["llama-server", "-sm", "diagonal"], 'error while handling argument "-sm": invalid value'),
    (["llama-completion", "--cache-ram", "256"], "llama-completion does not take it"),
    (["llama-run", "-m", "x.gguf"], "is not a llama.cpp program"),
    (["llama-server", "-np", "99999999999999"], "outside"),
])
def test_what_llama_cpp_would_refuse_is_one_line(argv, message):
    with pytest.raises(LlamaArgsError) as e:
        read_llama_args(argv)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_secret_is_never_repeated():
    cmd = read_llama_args(["llama-server", "--api-key", "sk-secret", "-hft", "hf_secret"])
    assert all("secret" not in g.text for g in cmd.ignored)


def test_the_last_value_wins_and_overrides_add_up():
    cmd = read_llama_args(["llama-cli", "-c", "1024", "-c", "2048", "-ot", "a=CPU", "--n-cpu-ffn", "2"])
    assert cmd.settings.ctx == 2048 and len(cmd.settings.overrides) == 3
    assert cmd.settings.overrides[1].pattern == r"blk\.0\.ffn_(up|down|gate)\."


def test_ngl_auto_and_all_are_llama_cpps_codes():
    assert read_llama_args(["-ngl", "auto"]).settings.gpu_layers == -1
    assert read_llama_args(["-ngl", "all"]).settings.gpu_layers == -2


# The question: a command over the session state.

@pytest.fixture(scope="module")
def models():
    return {name: load_model(catalogue_path(find_entry(name))) for name in
            ("llama-3.1-8b-instruct", "qwen3-30b-a3b-instruct-2507", "gemma-3-4b-it")}


def _load(model, argv, machine):
    q = ask(read_llama_args(argv), ExplorerState(model=model, machine=machine), model)
    load = full_load(model, q.state, TokenPrices.of(model))
    assert load is not None
    return q, load


def test_each_program_takes_its_own_defaults(models):
    m = models["gemma-3-4b-it"]
    machine = hypothetical_machine(64 * GiB)
    server, _ = _load(m, ["llama-server", "-c", "8192"], machine)
    cli, _ = _load(m, ["llama-cli", "-c", "8192"], machine)
    completion, _ = _load(m, ["llama-completion", "-c", "8192"], machine)
    assert server.state.server.n_parallel is None and cli.state.server.n_parallel == 1
    assert completion.state.server.cache_ram_mib == 0 and completion.state.server.ctx_checkpoints == 0
    python = ask(read_llama_args(["-c", "16384"]), ExplorerState(model=m), m, Runtime.LLAMA_CPP_PYTHON)
    assert python.state.fit_request(16384).engine.swa_full is True
    assert server.state.fit_request(16384).engine.swa_full is False


def test_llama_cpp_python_prices_its_full_size_sliding_window_cache(models):
    """llama-cpp-python leaves llama.cpp's `swa_full = true`: gemma3's sliding layers hold every cell."""
    m = models["gemma-3-4b-it"]
    machine = hypothetical_machine(64 * GiB)
    python = ask(read_llama_args(["-c", "16384"]), ExplorerState(model=m, machine=machine), m, Runtime.LLAMA_CPP_PYTHON)
    cli = ask(read_llama_args(["llama-cli", "-c", "16384"]), ExplorerState(model=m, machine=machine), m)
    kv_python = full_load(m, python.state, TokenPrices.of(m)).fit.kv.engine
    kv_cli = full_load(m, cli.state, TokenPrices.of(m)).fit.kv.engine
    assert kv_python > 3 * kv_cli


def test_v_cache_type_is_priced_apart_from_k(models):
    m = models["llama-3.1-8b-instruct"]
    machine = hypothetical_machine(64 * GiB)
    both = _load(m, ["-c", "8192", "-ctk", "q8_0", "-ctv", "q8_0"], machine)[1].fit.kv.engine
    k_only = _load(m, ["-c", "8192", "-ctk", "q8_0"], machine)[1].fit.kv.engine
    f16 = _load(m, ["-c", "8192"], machine)[1].fit.kv.engine
    assert both < k_only < f16
    assert k_only - both == f16 - k_only  # K and V rows of this model are the same width


def test_a_forced_n_cpu_moe_keeps_those_experts_on_the_host(models):
    m = models["qwen3-30b-a3b-instruct-2507"]
    machine = hypothetical_machine(128 * GiB, gpu_count=1, gpu_total=80 * GiB)
    plain = _load(m, ["-c", "8192", "-ngl", "all"], machine)[1].fit
    forced = _load(m, ["-c", "8192", "-ngl", "all", "--n-cpu-moe", "12"], machine)[1].fit
    moved = forced.devices[0].weights - plain.devices[0].weights
    assert moved > 0 and plain.devices[1].weights - forced.devices[1].weights == moved
    assert "--n-cpu-moe 12" in forced.command.shell
    everything = _load(m, ["-c", "8192", "-ngl", "all", "--cpu-moe"], machine)[1].fit
    assert everything.weights.host_exact - plain.weights.host_exact == m.routed_expert_bytes


def test_fit_off_loads_the_trained_context_on_every_layer(models):
    m = models["llama-3.1-8b-instruct"]
    machine = hypothetical_machine(16 * GiB, gpu_count=1, gpu_total=8 * GiB)
    on = _load(m, ["llama-server"], machine)[1]
    off = _load(m, ["llama-server", "-fit", "off"], machine)[1]
    assert on.ctx < m.context_length and on.fit.verdict.admitted
    assert off.ctx == m.context_length and off.fit.gpu_layers == m.n_layer + 1 and not off.fit.verdict.admitted
    floor = _load(m, ["llama-server", "-fitc", "2048", "-fitt", "1536"],
                  hypothetical_machine(7 * GiB, gpu_count=1, gpu_total=6 * GiB))[1]
    assert 2048 <= floor.ctx < 4096


def test_a_command_without_fitt_keeps_the_programs_1024_mib_free_on_every_gpu(models):
    """A command without `-fitt` asks llama.cpp's `--fit` margin on every GPU, not this tool's reserve (1.5 GiB on
    the first GPU only), whether `--fit` places the layers or the command does; a GPU reserve the person typed stays
    theirs."""
    m = models["llama-3.1-8b-instruct"]
    machine = hypothetical_machine(64 * GiB, gpu_count=2, gpu_total=24 * GiB)
    for words in (["-c", "8192"], ["-c", "8192", "-ngl", "all"], ["-c", "8192", "-fit", "off"]):
        assert [d.reserve for d in _load(m, words, machine)[1].fit.devices[1:]] == [1024 * MiB, 1024 * MiB]
    typed = ExplorerState(model=m, machine=machine, reserves=Reserves(gpu=2 * GiB))
    load = full_load(m, ask(read_llama_args(["-c", "8192"]), typed, m).state, TokenPrices.of(m))
    assert load is not None and [d.reserve for d in load.fit.devices[1:]] == [2 * GiB, 0]
    small = hypothetical_machine(7 * GiB, gpu_count=1, gpu_total=6 * GiB)
    assert _load(m, ["llama-server", "-fitc", "2048"], small)[1].ctx > _load(
        m, ["llama-server", "-fitc", "2048", "-fitt", "1536"], small)[1].ctx


def test_fit_target_is_each_gpus_reserve(models):
    m = models["llama-3.1-8b-instruct"]
    machine = hypothetical_machine(64 * GiB, gpu_count=2, gpu_total=24 * GiB)
    q, load = _load(m, ["-c", "8192", "-fitt", "512,2048"], machine)
    assert [d.reserve for d in load.fit.devices[1:]] == [512 * MiB, 2048 * MiB]
    q, load = _load(m, ["-c", "8192", "-fitt", "300"], machine)
    assert [d.reserve for d in load.fit.devices[1:]] == [300 * MiB, 300 * MiB]


def test_split_mode_none_and_devices_pick_the_gpus(models):
    m = models["llama-3.1-8b-instruct"]
    machine = hypothetical_machine(64 * GiB, gpu_count=3, gpu_total=24 * GiB)
    assert len(_load(m, ["-c", "8192"], machine)[1].fit.devices) == 4
    assert [d.name for d in _load(m, ["-c", "8192", "-sm", "none", "-mg", "2"], machine)[1].fit.devices] == ["host", "gpu2"]
    assert [d.name for d in _load(m, ["-c", "8192", "-dev", "CUDA0,CUDA2"], machine)[1].fit.devices] == \
        ["host", "gpu0", "gpu2"]
    none = _load(m, ["-c", "8192", "-dev", "none"], machine)[1].fit
    assert none.gpu_layers == 0 and len(none.devices) == 1
    with pytest.raises(Exception, match="-mg 5: this machine has 3 GPUs"):
        _load(m, ["-c", "8192", "-sm", "none", "-mg", "5"], machine)


def test_unpriced_and_ignored_options_are_said(models):
    m = models["llama-3.1-8b-instruct"]
    q, _ = _load(m, ["llama-server", "-c", "4096", "--lora", "a.gguf", "--temp", "0.2", "--port", "9000"],
                 hypothetical_machine(64 * GiB))
    text = "\n".join(q.lines)
    assert "Not priced  --lora a.gguf: changes memory, not priced here: LoRA adapter weights" in text
    assert "--temp 0.2 (sampling: no memory)" in text and "--port 9000" in text
    assert q.lines[0].startswith("Asked of llama-server: -c 4096; every other setting is its default")


# The property of issue 32 item 2: command → answer → printed command → the same answer.

_OPTION_CHOICES = st.lists(st.sampled_from([
    ("-c", "4096"), ("-c", "16384"), ("-c", "0"), ("-ngl", "auto"), ("-ngl", "all"), ("-ngl", "10"),
    ("-fa", "on"), ("-fa", "off"), ("-fa", "auto"), ("-ub", "128"), ("-ub", "1024"), ("-b", "256"),
    ("-ctk", "q8_0"), ("-ctv", "q8_0"), ("-ctk", "q4_0"), ("-ctv", "q5_1"), ("--swa-full",), ("-lm", "none"),
    ("-np", "1"), ("-np", "2"), ("-np", "-1"), ("-kvu",), ("-no-kvu",), ("--cache-ram", "0"), ("--cache-ram", "512"),
    ("--ctx-checkpoints", "4"), ("-t", "4"), ("--no-repack",), ("-nkvo",), ("--no-op-offload",),
    ("--n-cpu-moe", "6"), ("-fit", "off"), ("-fitc", "2048"), ("-ts", "1,3"), ("--temp", "0.3"),
]), max_size=7)


def _key(load):
    f = load.fit
    return (f.verdict, load.ctx, f.gpu_layers, tuple((d.name, d.weights, d.kv, d.server) for d in f.devices),
            f.memory.peak_rss if f.memory else None)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(["llama-3.1-8b-instruct", "qwen3-30b-a3b-instruct-2507", "gemma-3-4b-it"]),
       options=_OPTION_CHOICES, gpus=st.integers(0, 2), vram=st.sampled_from([8, 24]))
def test_a_printed_command_reads_back_to_the_same_answer(models, name, options, gpus, vram):
    m = models[name]
    machine = hypothetical_machine(48 * GiB, gpu_count=gpus, gpu_total=vram * GiB if gpus else 0)
    argv = ["llama-server", "-m", m.path, *[w for o in options for w in o]]
    _, first = _load(m, argv, machine)
    printed = first.fit.command
    assert printed is not None and printed.argv[0] == "llama-server"
    _, again = _load(m, list(printed.argv), machine)
    assert _key(again) == _key(first)
    assert again.fit.command.argv == printed.argv


# The command line.

def test_fit_reads_a_whole_command_and_the_words_after_the_separator(capsys):
    path = str(catalogue_path(find_entry("gemma-3-4b-it")))
    base = ["fit", "--host-available", "32G", "--no-gpu", "--cpu-features", "none"]
    assert main([*base, "--command", f"llama-server -m {path} -c 8192 -fa off -ub 256 --temp 0.5", "--json"]) == 0
    import json

    first = json.loads(capsys.readouterr().out)
    assert first["llama_command"]["given"] == ["-c 8192", "-fa off", "-ub 256"]
    assert main([*base, path, "--json", "--", "-c", "8192", "-fa", "off", "-ub", "256"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert first["devices"] == second["devices"] and first["ctx"] == second["ctx"] == 8192
    assert main([*base, path, "-c", "8192", "-fa", "off", "-ub", "256", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["devices"] == first["devices"]


def test_fit_says_which_settings_are_defaults_and_what_it_ignored(capsys):
    path = str(catalogue_path(find_entry("llama-3.2-1b-instruct")))
    assert main(["fit", "--host-available", "32G", "--no-gpu", path, "--", "-c", "4096", "--top-k", "20"]) == 0
    out = capsys.readouterr().out
    assert "Asked of llama-server: -c 4096; every other setting is its default" in out
    assert "Ignored     --top-k 20 (sampling: no memory)" in out


@pytest.mark.parametrize("argv, message", [
    (["--", "--bogus"], "error: invalid argument: --bogus"),
    (["--command", "llama-server -c"], "expected value for argument"),
    (["--command", "llama-server -c 'unterminated"], "does not split into words"),
])
def test_fit_refuses_a_bad_command_in_one_line(capsys, argv, message):
    path = str(catalogue_path(find_entry("llama-3.2-1b-instruct")))
    args = ["fit", "--host-available", "32G", "--no-gpu", path, *argv] if argv[0] == "--" else \
        ["fit", "--host-available", "32G", "--no-gpu", path, *argv]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_typed_machine_keeps_this_machines_cpu_features(capsys):
    """A hypothetical machine used to drop the CPU features, so no repacked copy was priced (−38 % on an 8B)."""
    from gguf_budget.core.machine.cpu_features import read_cpu_features

    assert read_cpu_features(), "this machine kind publishes its CPU features (/proc/cpuinfo)"
    path = str(catalogue_path(find_entry("llama-3.1-8b-instruct")))
    import json

    assert main(["fit", "--host-available", "32G", "--no-gpu", path, "--ctx", "4096", "--json"]) == 0
    kept = json.loads(capsys.readouterr().out)
    assert main(["fit", "--host-available", "32G", "--no-gpu", path, "--ctx", "4096", "--json",
                 "--cpu-features", "none"]) == 0
    dropped = json.loads(capsys.readouterr().out)
    assert kept["runtime_memory"]["devices"][0]["repack"] > 3 * GiB > dropped["runtime_memory"]["devices"][0]["repack"] == 0
    assert kept["runtime_memory"]["peak_rss"] > 1.35 * dropped["runtime_memory"]["peak_rss"]


def test_engine_options_print_only_what_differs_from_llama_cpps_defaults():
    assert EngineOptions().argv() == []
    o = EngineOptions(flash_attn=False, ubatch=256, load_mode=LoadMode.NONE, kv_offload=False,
                      split_mode=SplitMode.NONE, main_gpu=1, overrides=(TensorOverride("exps", "CPU"),), fit=False)
    argv = o.argv()
    assert argv == ["-fa", "off", "-ub", "256", "-lm", "none", "-nkvo", "-sm", "none", "-mg", "1", "-ot", "exps=CPU",
                    "-fit", "off"]
    q = ask(read_llama_args(argv), ExplorerState(), load_model(catalogue_path(find_entry("llama-3.2-1b-instruct"))))
    assert q.state.engine == replace(o)


# Commands people published (tests/data/public-commands.tsv: the catalogue model nearest to each, its source, the
# command as published): each is an answer, or one line saying what llama.cpp 0c1e570 would refuse.

def _public_commands():
    import csv

    with open(Path(__file__).parent / "data" / "public-commands.tsv", newline="") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    assert rows[0] == ["catalogue", "url", "command"]
    return rows[1:]


PUBLIC = _public_commands()


def test_the_public_commands_are_many_and_cited():
    assert len(PUBLIC) >= 10 and all(url.startswith("https://") for _, url, _ in PUBLIC)


def test_every_published_command_gets_an_answer_or_one_clear_line(capsys):
    answered = []
    for catalogue, url, command in PUBLIC:
        name = catalogue if catalogue != "none" else "llama-3.1-8b-instruct"
        code = main(["fit", "--catalog", name, "--host-available", "64G", "--gpu-total", "24G", "--gpu-count", "2",
                     "--command", command])
        out, err = capsys.readouterr()
        if code == 2:
            assert err.count("\n") == 1 and err.startswith("gguf-budget fit: ") and "Traceback" not in err, (url, err)
        else:
            assert code in (0, 3) and out.startswith("Asked of llama-"), (url, code, err)
            answered.append(url)
    assert len(answered) >= 10


def test_quants_and_library_take_the_same_words_as_fit(tmp_path, capsys, monkeypatch):
    """One question everywhere: the file's own Quants row is fit's answer to the same llama.cpp options, and the
    Library judges every model with them."""
    import json
    import shutil

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "models" / "llama-3.1-8b-instruct-q4_k_m.gguf"
    path.parent.mkdir()
    shutil.copy(catalogue_path(find_entry("llama-3.1-8b-instruct")), path)
    machine = ["--host-available", "12G", "--gpu-total", "8G"]
    words = ["--", "-ctk", "q8_0", "-ctv", "q8_0", "-ub", "256"]
    assert main(["fit", str(path), *machine, "--json", *words]) == 0
    fit = json.loads(capsys.readouterr().out)
    main(["quants", str(path), *machine, "--json", *words])
    (own,) = [r for r in json.loads(capsys.readouterr().out)["rows"] if r["source"]]
    assert (own["ctx"], own["gpu_layers"], own["verdict"]) == (fit["ctx"], fit["gpu_layers"], fit["verdict"])
    main(["quants", str(path), *machine, "--json"])
    (plain,) = [r for r in json.loads(capsys.readouterr().out)["rows"] if r["source"]]
    assert plain["ctx"] < own["ctx"]  # the q8_0 cache leaves room for more context on the 8 GiB GPU
    largest = []
    for extra in ([], words):
        assert main(["library", "--add", str(path.parent), "--host-available", "12G", "--no-gpu", "--json", *extra]) == 0
        (entry,) = json.loads(capsys.readouterr().out)["entries"]
        largest.append(entry["full_load"]["max_ctx"])
    assert largest[1] > largest[0]


def test_a_machine_of_different_gpus_is_typed_one_size_a_gpu(capsys):
    import json

    base = ["fit", "--catalog", "llama-3.1-70b-instruct", "--host-available", "64G", "--json"]
    assert main([*base, "--gpu-total", "24G,16G", "--", "-c", "8192"]) == 0
    d = json.loads(capsys.readouterr().out)
    gpus = d["devices"][1:]
    assert [g["available"] for g in gpus] == [24 * GiB, 16 * GiB]
    assert gpus[0]["weights"] > gpus[1]["weights"]  # split by free memory, as llama.cpp splits
    assert main([*base, "--gpu-total", "24G,16G", "--gpu-free", "10G,16G", "--", "-c", "8192", "-ts", "1,1"]) in (0, 3)
    d = json.loads(capsys.readouterr().out)
    assert [g["available"] for g in d["devices"][1:]] == [10 * GiB, 16 * GiB]
    assert main([*base, "--gpu-total", "24G,16G", "--gpu-count", "3"]) == 2
    assert "--gpu-count 3 but 2 GPU sizes" in capsys.readouterr().err


@pytest.mark.parametrize("runtime", list(Runtime))
def test_the_command_printed_is_the_programs_own(capsys, runtime):
    """What to run follows the program chosen: a llama-cli or llama-completion line llama.cpp's reader takes as
    that program, a llama-cpp-python call whose keywords carry the same settings; what it cannot say is named."""
    import ast
    import json

    path = str(catalogue_path(find_entry("gemma-3-4b-it")))
    argv = ["fit", path, "--host-available", "16G", "--no-gpu", "--runtime", runtime.value, "--json", "--",
            "-c", "8192", "-fa", "on", "-ub", "256", "-ctk", "q8_0", "-np", "2"]
    assert main(argv) == 0
    program = json.loads(capsys.readouterr().out)["command"]["program"]
    assert program["runtime"] == runtime.value
    if runtime is Runtime.LLAMA_CPP_PYTHON:
        tree = ast.parse(program["text"])
        (call,) = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
        assert kwargs["n_ctx"] == 8192 and kwargs["flash_attn"] is True and kwargs["n_ubatch"] == 256
        assert kwargs["type_k"] == int(KV_TYPES[KVType.Q8_0]) and "type_v" not in kwargs  # V stays f16
        assert "-np 2" in program["not_said"]
    else:
        cmd = read_llama_args(split_command(program["text"]))
        assert cmd.program.value == runtime.value and cmd.settings.ctx == 8192 and cmd.settings.ubatch == 256
    assert main([*argv[:-12], "--print-command", *argv[-11:]]) == 0
    assert capsys.readouterr().out.strip() == program["text"].strip()


def test_n_cpu_moe_and_an_ot_place_the_weights_together(models):
    """`--n-cpu-moe 12` beside one `-ot` moves both: the twelve blocks' experts and the named tensor are on the
    host (the placement once priced the weights by the `-ot` alone and counted the twelve blocks back on the GPU)."""
    m = models["qwen3-30b-a3b-instruct-2507"]
    machine = hypothetical_machine(128 * GiB, gpu_count=1, gpu_total=80 * GiB)
    base = ["-c", "8192", "-ngl", "all"]
    moe = _load(m, [*base, "--n-cpu-moe", "12"], machine)[1].fit
    both = _load(m, [*base, "--n-cpu-moe", "12", "-ot", r"blk\.40\.ffn_down_exps\.weight=CPU"], machine)[1].fit
    moved = next(t.nbytes for t in m.tensors if t.name == "blk.40.ffn_down_exps.weight")
    assert both.devices[0].weights - moe.devices[0].weights == moved
    assert moe.devices[1].weights - both.devices[1].weights == moved
