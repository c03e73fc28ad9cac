"""A llama-server session: its spelling, the replay of llama.cpp's cache and checkpoints, and the resident memory after
each request — checked by hand-worked tables, on the sessions recorded against the real server
(tests/data/server-sessions, made by benchmarks/server_sessions.py --record), and on one short live session.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from recorded_models import load_recorded_models
from server_support import drive_session, recorded_peak, serving
from session_scenarios import SCENARIOS, Scenario, fit_args, write_models

from gguf_budget.core.errors import RequestError
from gguf_budget.core.evidence.compare import compare
from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.fit.runtime_memory import PROCESS_PER_TOKEN, PROFILES
from gguf_budget.core.fit.runtime_types import Runtime
from gguf_budget.core.fit.server.checkpoints import CheckpointSettings, keep_checkpoints, seq_state_bytes
from gguf_budget.core.fit.server.session import SessionModel, replay
from gguf_budget.core.fit.server.session_spec import MAX_REQUESTS, TYPICAL_CHAT, SessionSpec, Turns
from gguf_budget.core.fit.server.slots import SlotLayout
from gguf_budget.core.model.loader import load_model
from gguf_budget.gui.cli import main

pytestmark = pytest.mark.usefixtures("measured_machine")  # conftest: this machine's figures measured once a run, not a test

RECORDED = Path(__file__).parent / "data" / "server-sessions"
MiB = 1024 * 1024


def test_the_spelling_reads_requests_chats_and_images():
    assert SessionSpec.parse("8x(2000+300)").requests()[7].prompt == 2000
    chat = SessionSpec.parse("4x(500+200)*4").requests()
    assert len(chat) == 16 and [r.prompt for r in chat[:4]] == [500, 1200, 1900, 2600]  # each turn resends its chat
    assert {r.conversation for r in chat} == {0, 1, 2, 3}
    mixed = SessionSpec.parse("2k+10, 2x(40+4+1img)")
    assert [(r.prompt, r.images) for r in mixed.requests()] == [(2000, 0), (40, 1), (40, 1)]
    assert TYPICAL_CHAT.text == "4x(500+200)*4" and TYPICAL_CHAT.assumed


@pytest.mark.parametrize("bad", ["", "8x", "2000+300*4", "(1+2", "0+3", "x(1+2)", "1+2+", "5000x(1+1)*5000",
                                 "(1+1+999img)", "1+1," * 100_000, "(" * 100_000])
def test_a_spelling_that_is_not_one_is_one_line(bad):
    with pytest.raises(RequestError):
        SessionSpec.parse(bad)


@given(st.lists(st.builds(Turns, st.integers(1, 5), st.integers(1, 5), st.integers(1, 10**6), st.integers(0, 10**6),
                          st.integers(0, 3)), min_size=1, max_size=4))
def test_the_spelling_reads_back_what_it_writes(groups):
    spec = SessionSpec(tuple(groups))
    assert SessionSpec.parse(spec.text) == spec
    assert len(spec.requests()) == sum(g.conversations * g.turns for g in groups) <= MAX_REQUESTS


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, str]:
    return write_models(tmp_path_factory.mktemp("session-models"))


def _session(spec: str, model: str, layout: SlotLayout, cache_mib: int, ckpts: int = 32) -> tuple:
    spec_ = load_model(model)
    m = SessionModel(kv_type="f16", layout=layout, slot_ctx=8192 // layout.streams, n_ctx=8192, cache_ram_mib=cache_mib,
                     checkpoints=CheckpointSettings(max_checkpoints=ckpts))
    return spec_, replay(spec_, m, SessionSpec.parse(spec))


def test_each_new_conversation_saves_the_last_one_and_the_oldest_go_at_the_limit(models):
    # one slot: request i saves request i-1's 1,519 tokens (1,500 + 20 generated but the last) of 8 layers × 16 KiB
    model, trace = _session("7x(1500+20)", models["llama"], SlotLayout(), 100)
    entry = seq_state_bytes(model, "f16", 1519)
    assert f"{entry / MiB:.3f}" == "23.752"  # what llama-server printed: "total state size = 23.752 MiB"
    assert [s.cache_entries for s in trace.steps] == [0, 1, 2, 3, 4, 4, 4]  # 5 × 23.75 MiB > 100 MiB
    assert trace.steps[-1].cache_bytes == 4 * entry and trace.peak.held == 4 * entry
    # a chat on its own slot never touches the cache until the next conversation starts
    _, chat = _session("2x(400+40)*3", models["llama"], SlotLayout(), 400)
    assert [s.cache_entries for s in chat.steps] == [0, 0, 0, 1, 1, 1]
    # unified slots are cleared once saved; split ones keep their copy: the cache is the same, one behind
    for layout in (SlotLayout(4, True), SlotLayout(4, False)):
        _, four = _session("6x(800+20)", models["llama"], layout, 8192)
        assert [s.cache_entries for s in four.steps] == [0, 1, 2, 3, 4, 5]
        assert [s.slot for s in four.steps[:4]] == [3, 2, 1, 0]  # least recently used, the last of equals


def test_checkpoints_come_two_a_turn_and_stay_within_the_limit(models):
    _, trace = _session("1x(700+30)*3", models["gemma"], SlotLayout(), 8192, ckpts=3)
    assert [s.checkpoint_count for s in trace.steps] == [2, 3, 3]
    _, none = _session("1x(700+30)*3", models["llama"], SlotLayout(), 8192, ckpts=3)
    assert {s.checkpoint_count for s in none.steps} == {0}


@given(st.lists(st.integers(1, 30_000), min_size=1, max_size=40), st.integers(1, 40))
@settings(max_examples=200)
def test_a_slot_never_keeps_more_checkpoints_than_asked(positions, limit):
    s, kept = CheckpointSettings(max_checkpoints=limit), []
    for task, at in enumerate(sorted(positions)):
        kept = keep_checkpoints(kept, at, task, s)
        assert len(kept) <= limit and kept[-1] == (at, task)


def _recorded() -> list[str]:
    return sorted(p.stem for p in RECORDED.glob("*.json") if p.stem in SCENARIOS)


def _predicted(capsys, s: Scenario, paths: dict[str, str]) -> tuple[dict, str]:
    assert main(["fit", *fit_args(s, paths), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert main(["fit", *fit_args(s, paths), "--print-command"]) == 0
    return d, capsys.readouterr().out.strip()


def _within(trajectory: list[dict], samples: list[dict]) -> list[float]:
    assert len(trajectory) == len(samples)
    return [(t["rss"] - s["rss"]) / s["rss"] for t, s in zip(trajectory, samples, strict=True)]


@pytest.mark.parametrize("name", _recorded())
def test_a_recorded_session_is_predicted_within_ten_percent_after_every_request(capsys, models, name):
    rec = json.loads((RECORDED / f"{name}.json").read_text())
    log = (RECORDED / f"{name}.log").read_text()
    s = SCENARIOS[name]
    assert (rec["session"], rec["args"]) == (s.session, list(s.args))
    d, command = _predicted(capsys, s, models)
    def flags(line: str) -> list[str]:  # the same flags, the files in another folder
        return [Path(a).name if "/" in a else a for a in line.split()]
    assert flags(command) == flags(rec["command"])
    trajectory = d["server"]["session"]["trajectory"]
    errors = _within(trajectory, rec["samples"])
    assert max(abs(e) for e in errors) <= 0.10, [f"{e:+.1%}" for e in errors]
    states = re.findall(r"cache state: (\d+) prompts, (\d+\.\d+) MiB", log)
    if states:  # the cache at the end holds what the replay says, to llama.cpp's printed 0.001 MiB (token arrays;
        n, mib = states[-1]  # a text prompt around an image is tokenized by the server: its BOS and spaces, ~1 %)
        last = trajectory[-1]
        assert int(n) == last["cache_entries"]
        if "img" in s.session:
            assert float(mib) == pytest.approx(last["cache_bytes"] / MiB, rel=0.02)
        else:
            assert mib == f"{last['cache_bytes'] / MiB:.3f}"


def test_a_short_live_session_is_predicted_within_ten_percent_after_every_request(capsys, models, tmp_path):
    s = Scenario("llama", ("--ctx", "8192", "--cache-ram", "24"), "3x(600+4)")
    d, command = _predicted(capsys, s, models)
    trajectory = d["server"]["session"]["trajectory"]
    assert [t["cache_entries"] for t in trajectory] == [0, 1, 2]  # two 9.4 MiB states fit in 24 MiB
    with serving(command, tmp_path / "server.log") as (url, pid):
        samples = drive_session(url, pid, SessionSpec.parse(s.session))
    errors = _within(trajectory, [vars(x) for x in samples])
    assert max(abs(e) for e in errors) <= 0.10, [f"{e:+.1%}" for e in errors]
    printed = re.findall(r"cache state: (\d+) prompts, (\d+\.\d+) MiB", (tmp_path / "server.log").read_text())
    assert printed[-1] == ("2", f"{trajectory[-1]['cache_bytes'] / MiB:.3f}")


IDLE = (("server-logs", "smollm2_ctx4096_np1"), ("server-sessions", "llama_idle"), ("server-sessions", "gemma_idle"))


def test_llama_servers_process_constant_is_the_mean_over_its_idle_runs_only(models, tmp_path):
    """`runtime_memory` Rule 10: peak − every other resident item − 137 B a vocabulary token, on the three idle runs;
    every session sample is judged, none fitted."""
    specs = {**load_recorded_models(tmp_path), "llama": load_model(models["llama"]), "gemma": load_model(models["gemma"])}
    bases = []
    for folder, name in IDLE:
        text = (RECORDED.parent / folder / f"{name}.log").read_text()
        log = replace(parse_llamacpp_log(text), peak_rss=recorded_peak(text))
        spec = specs[name.split("_")[0]]
        short = compare(log, spec).estimate.memory.short
        bases.append(log.peak_rss - (short.total - short.process) - PROCESS_PER_TOKEN * (spec.n_vocab or 0))
    assert PROFILES[Runtime.LLAMA_SERVER].process == round(sum(bases) / len(bases) / 1024) * 1024


def test_the_verdict_counts_the_sessions_peak_unless_the_worst_case_is_asked(capsys, models):
    base = [models["llama"], "--ctx", "8192", "--cache-ram", "2048", "--no-gpu", "--host-reserve", "0"]
    assert main(["fit", *base, "--host-available", "1G", "--session", "3x(1500+20)", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    session = d["server"]["session"]
    assert session["counted"] == "session_peak" and not session["assumed"]
    assert session["peak_held"] == 2 * seq_state_bytes(load_model(models["llama"]), "f16", 1519)
    assert session["worst_case_held"] == 2048 * MiB and session["worst_case"] == "when every cache and checkpoint is full"
    assert main(["fit", *base, "--host-available", "1G", "--session", "3x(1500+20)", "--worst-case", "--json"]) == 3
    worst = json.loads(capsys.readouterr().out)
    assert worst["server"]["session"]["counted"] == "worst_case" and worst["verdict"] == "does_not_fit"
    (cap,) = [c for c in worst["server"]["session"]["caps"] if c["flag"] == "--cache-ram"]
    assert "fewer cached prompts" in cap["cost"]
    capped = [models["llama"], "--ctx", "8192", "--cache-ram", str(cap["value"]), "--no-gpu", "--host-reserve", "0",
              "--host-available", "1G", "--worst-case"]
    assert main(["fit", *capped]) == 0  # the cap offered keeps the worst case in
    capsys.readouterr()


def test_without_a_session_the_typical_chat_is_assumed_and_said(capsys, models):
    assert main(["fit", models["llama"], "--ctx", "8192", "--host-available", "16G", "--no-gpu"]) == 0
    text = capsys.readouterr().out
    assert "Session     4x(500+200)*4 (assumed: a typical chat" in text
    assert "the verdict counts the session's peak" in text


def test_a_bad_session_is_one_line(capsys, models):
    with pytest.raises(SystemExit) as exit_:
        main(["fit", models["llama"], "--session", "lots", "--host-available", "16G", "--no-gpu"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert "a session is" in err and len(err.strip().splitlines()) <= 3


def test_the_draft_and_the_projector_are_in_both_ends_of_the_band(capsys, models):
    plain = [models["llama"], "--ctx", "8192", "--host-available", "16G", "--no-gpu", "--json"]
    assert main(["fit", *plain]) == 0
    a = json.loads(capsys.readouterr().out)["runtime_memory"]
    assert main(["fit", *plain, "--draft", models["draft"], "--mmproj", models["mmproj"]]) == 0
    d = json.loads(capsys.readouterr().out)
    b, server = d["runtime_memory"], d["server"]
    draft, projector = server["draft"], server["projector"]
    extra = (draft["kv"]["host"] + draft["output"] + draft["compute"] + draft["sampler"] + draft["kv_cells"]
             + projector["weights"] + projector["compute"])
    for end in ("short", "full"):
        moved = sum(b[end][k] - a[end][k] for k in ("kv", "compute", "checkpoints", "kv_cells"))  # the image's 256
        # cells of ctx
        assert b[end]["total"] - a[end]["total"] == extra + draft["weights"]["host"] + moved
        assert b[end]["total"] > a[end]["total"] + extra
        assert (b[end]["server"], b[end]["server_mapped"]) == (extra, draft["weights"]["host"])


def test_every_slot_fills_its_checkpoints_at_the_bands_full_end(capsys, models):
    args = [models["gemma"], "--ctx", "8192", "--host-available", "16G", "--no-gpu", "--json"]
    assert main(["fit", *args]) == 0
    one = json.loads(capsys.readouterr().out)["runtime_memory"]["full"]["checkpoints"]
    assert main(["fit", *args, "-np", "4"]) == 0
    four = json.loads(capsys.readouterr().out)["runtime_memory"]["full"]["checkpoints"]
    assert one > 0 and four == 4 * one  # a 2,048-token slot still leaves two full-window checkpoints


def test_a_session_changes_nothing_but_what_is_counted(capsys, models):
    """The worst case does not depend on the session; the KV cache and weights do not either."""
    base = [models["gemma"], "--ctx", "8192", "--host-available", "16G", "--no-gpu", "--json", "--worst-case"]
    outs = []
    for spec in ("1+1", "8x(2000+300)", "3x(600+30)*3"):
        assert main(["fit", *base, "--session", spec]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert len({(o["server"]["session"]["worst_case_held"], o["kv"]["engine"]) for o in outs}) == 1
    assert len({o["server"]["session"]["peak_held"] for o in outs}) == 3


sessions = st.lists(st.builds(Turns, st.integers(1, 4), st.integers(1, 4), st.integers(1, 1500), st.integers(0, 300)),
                    min_size=1, max_size=3).map(lambda g: SessionSpec(tuple(g)))


@settings(max_examples=40, deadline=None)
@given(spec=sessions, slots=st.sampled_from([("-np", "1"), ("-np", "3"), ("-np", "2", "--kv-unified")]),
       cache=st.sampled_from(["0", "8", "64", "-1"]), ckpts=st.sampled_from(["0", "1", "3", "32"]))
def test_no_session_holds_more_than_the_worst_case(models, spec, slots, cache, ckpts):
    """Whatever the traffic, what the server holds after a request stays within the worst case — every cache and
    checkpoint full — and the resident memory grows with the requests, never falls (`server_band` Rule 3)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["fit", models["gemma"], "--ctx", "4096", *slots, "--cache-ram", cache, "--ctx-checkpoints", ckpts,
              "--session", spec.text, "--host-available", "16G", "--no-gpu", "--json"])
    session = json.loads(out.getvalue())["server"]["session"]
    worst = session["worst_case_held"]
    rss = [t["rss"] for t in session["trajectory"] if t["rss"] is not None]
    assert all(t["held"] <= worst for t in session["trajectory"])
    assert rss == sorted(rss) and (not rss or max(rss) <= session["worst_case_rss"])


@pytest.mark.parametrize(("slots", "cache"), [("2", "200"), ("4", "200"), ("2", "512")])
def test_each_cap_offered_alone_keeps_the_worst_case_in(capsys, models, slots, cache):
    """`server_caps` Rule 5: every cap fit offers, added to the same command, turns the worst case into a fit."""
    machine = ["--ctx", "8192", "--host-available", "6.3G", "--no-gpu", "--worst-case"]
    asked = {"-np": slots, "--cache-ram": cache}  # 512: the cache alone overruns the room, only its cap can help
    assert main(["fit", models["gemma"], *machine, *[x for kv in asked.items() for x in kv], "--json"]) == 3
    caps = json.loads(capsys.readouterr().out)["server"]["session"]["caps"]
    assert caps
    for cap in caps:
        capped = asked | {cap["flag"]: str(cap["value"])}
        assert main(["fit", models["gemma"], *machine, *[x for kv in capped.items() for x in kv]]) == 0, cap
        capsys.readouterr()
