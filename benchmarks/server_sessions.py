"""Scripted sessions against the real llama-server: its resident memory after every request, beside the prediction.

Each scenario writes its tiny runnable models with the factory (tests/runnable_model.py: a
llama and a gemma3 with sliding-window layers, zero weights, a 260-token byte vocabulary, so a
token array is exactly what the server holds), asks `gguf-budget fit MODEL ARGS --session SPEC
--host-available 16G --no-gpu --json` for the trajectory and `--print-command` for the command,
runs that command on the CI-built llama-server on 127.0.0.1 (`tests/server_support.serving`,
`-t 2 -v`), sends the session's requests in order (`drive_session`: token arrays, each turn
resending its conversation with what the server generated) and reads VmRSS from /proc right
after each answer. Error = (predicted − measured) / measured, per request; the bound the issue
asks is ±10 % at every sample.

Run: .venv/bin/python benchmarks/server_sessions.py [NAME…] [--record DIR]
`--record` keeps each run's log (less its per-tensor noise) and samples as tests/data/server-sessions
fixtures (tests/test_server_sessions.py reads them).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import bench_shapes  # noqa: F401  (puts tests/ on sys.path)
from gguf_factory import ProjectorDesc, write_gguf, write_projector
from runnable_model import runnable_desc
from server_support import Sample, drive_session, keep_as_fixture, png, serving

from gguf_budget.core.fit.session_spec import SessionSpec
from gguf_budget.core.views.table import aligned_lines
from gguf_budget.gui.cli import main as cli

MiB = 1024 * 1024
MACHINE = ("--host-available", "16G", "--no-gpu")
WIDE = {"n_layer": 8, "n_embd": 512, "n_ff": 1024, "n_head": 8, "n_head_kv": 8}
MODELS = {
    "llama": WIDE,
    "draft": {"n_layer": 2, "name": "tiny-runnable-draft"},
    "gemma": {"arch": "gemma3", "name": "tiny-runnable-gemma3", "n_layer": 6, "n_embd": 512, "n_ff": 1024,
              "n_head": 8, "n_head_kv": 4, "qk_norm": True, "post_norms": True, "sliding_window": 512, "tied": True,
              "head_dim": 64},
}
PROJECTOR = ProjectorDesc(name="bench-mmproj", n_embd=256, n_ff=1024, n_head=4, n_layer=4, image_size=224,
                          patch_size=14, text_embd=512)


@dataclass(frozen=True)
class Scenario:
    """One server and its traffic: `args` after the model, with {draft} and {mmproj} filled in."""

    model: str
    args: tuple[str, ...]
    session: str


SCENARIOS = {
    "llama_np1_cache100": Scenario("llama", ("--ctx", "8192", "--cache-ram", "100"), "7x(1500+20)"),
    "llama_np4_split": Scenario("llama", ("--ctx", "8192", "-np", "4"), "6x(1200+20)"),
    "llama_npauto_unified": Scenario("llama", ("--ctx", "8192", "-np", "auto"), "6x(800+20)"),
    "llama_chat_np1": Scenario("llama", ("--ctx", "8192", "--cache-ram", "400"), "3x(400+40)*3"),
    "gemma_chat_ckpt3": Scenario("gemma", ("--ctx", "4096", "--ctx-checkpoints", "3"), "2x(700+30)*3"),
    "gemma_chat_ckpt8_np2": Scenario("gemma", ("--ctx", "8192", "-np", "2", "--ctx-checkpoints", "8"),
                                     "3x(600+30)*2"),
    "llama_draft": Scenario("llama", ("--ctx", "8192", "--draft", "{draft}", "--cache-ram", "150"), "5x(1200+16)"),
    "llama_mmproj": Scenario("llama", ("--ctx", "8192", "--mmproj", "{mmproj}"), "3x(40+4+1img)"),
}


def write_models(folder: Path) -> dict[str, str]:
    paths = {name: str(write_gguf(folder / f"{name}.gguf", replace(runnable_desc(context_length=8192), **kw))[0])
             for name, kw in MODELS.items()}
    paths["mmproj"] = str(write_projector(folder / "mmproj.gguf", PROJECTOR))
    return paths


def _cli(*args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli(list(args))
    assert code == 0, (args, code)
    return out.getvalue()


def predicted(s: Scenario, paths: dict[str, str]) -> tuple[dict, str]:
    """The fit's JSON and its printed command for the scenario."""
    args = [paths[s.model], *(a.format(**paths) for a in s.args), "--session", s.session, *MACHINE]
    return json.loads(_cli("fit", *args, "--json")), _cli("fit", *args, "--print-command").strip()


def run(name: str, paths: dict[str, str], record: Path | None, tmp: Path) -> list[list[str]]:
    s = SCENARIOS[name]
    fit, command = predicted(s, paths)
    trajectory = fit["server"]["session"]["trajectory"]
    raw = tmp / f"{name}.log"
    with serving(command, raw) as (url, pid):
        samples = drive_session(url, pid, SessionSpec.parse(s.session), png(224, 224))
    if record is not None:
        record.mkdir(parents=True, exist_ok=True)
        keep_as_fixture(raw, record / f"{name}.log")
        (record / f"{name}.json").write_text(json.dumps({
            "scenario": name, "model": s.model, "args": list(s.args), "session": s.session, "command": command,
            "samples": [vars(x) for x in samples]}, indent=1) + "\n")
    return rows(name, trajectory, samples)


def rows(name: str, trajectory: list[dict], samples: list[Sample]) -> list[list[str]]:
    out = []
    for step, sample in zip(trajectory, samples, strict=True):
        pred = step["rss"]
        err = (pred - sample.rss) / sample.rss
        out.append([name, str(step["request"]), f"{step['prompt_tokens']}+{step['generated_tokens']}",
                    str(step["cache_entries"]), f"{step['cache_bytes'] / MiB:.1f}", str(step["checkpoints"]),
                    f"{step['checkpoint_bytes'] / MiB:.2f}", f"{pred / MiB:.1f}", f"{sample.rss / MiB:.1f}",
                    f"{err * 100:+.1f}%"])
    return out


HEADER = ["scenario", "req", "tokens", "cached", "cache MiB", "ckpts", "ckpt MiB", "predicted MiB", "measured MiB",
          "error"]


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", metavar="NAME", help=f"scenarios (default all): {', '.join(SCENARIOS)}")
    p.add_argument("--record", type=Path, help="keep logs and samples here (tests/data/server-sessions)")
    args = p.parse_args(argv)
    table = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_models(Path(tmp))
        for name in args.names or list(SCENARIOS):
            got = run(name, paths, args.record, Path(tmp))
            table += got
            print("\n".join(aligned_lines([HEADER, *got])), flush=True)
    worst = max(table, key=lambda r: abs(float(r[-1].rstrip("%"))))
    print("\n".join(aligned_lines([HEADER, *table])))
    print(f"largest error: {worst[-1]} ({worst[0]}, request {worst[1]})")


if __name__ == "__main__":
    main(sys.argv[1:])
