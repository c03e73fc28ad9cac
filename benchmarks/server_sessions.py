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

Run: .venv/bin/python benchmarks/server_sessions.py [NAME…] [--record DIR | --from-recorded DIR]
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
from pathlib import Path

import bench_shapes  # noqa: F401  (puts tests/ on sys.path)
from server_support import Sample, drive_session, keep_as_fixture, png, serving
from session_scenarios import SCENARIOS, Scenario, fit_args, write_models

from gguf_budget.core.fit.server.session_spec import SessionSpec
from gguf_budget.core.views.table import aligned_lines
from gguf_budget.gui.cli import main as cli

MiB = 1024 * 1024


def _cli(*args: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli(list(args))
    assert code == 0, (args, code)
    return out.getvalue()


def predicted(s: Scenario, paths: dict[str, str]) -> tuple[dict, str]:
    """The fit's JSON and its printed command for the scenario."""
    args = fit_args(s, paths)
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


def recorded(name: str, paths: dict[str, str], folder: Path) -> list[list[str]]:
    """The table for a recorded run: today's prediction beside the samples kept."""
    rec = json.loads((folder / f"{name}.json").read_text())
    fit, _ = predicted(SCENARIOS[name], paths)
    return rows(name, fit["server"]["session"]["trajectory"], [Sample(**x) for x in rec["samples"]])


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="*", metavar="NAME", help=f"scenarios (default all): {', '.join(SCENARIOS)}")
    p.add_argument("--record", type=Path, help="keep logs and samples here (tests/data/server-sessions)")
    p.add_argument("--from-recorded", type=Path, metavar="DIR",
                   help="no llama-server: today's prediction beside the samples recorded in DIR")
    args = p.parse_args(argv)
    table = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_models(Path(tmp))
        for name in args.names or list(SCENARIOS):
            got = (recorded(name, paths, args.from_recorded) if args.from_recorded
                   else run(name, paths, args.record, Path(tmp)))
            table += got
            print("\n".join(aligned_lines([HEADER, *got])), flush=True)
    worst = max(table, key=lambda r: abs(float(r[-1].rstrip("%"))))
    print("\n".join(aligned_lines([HEADER, *table])))
    print(f"largest error: {worst[-1]} ({worst[0]}, request {worst[1]})")


if __name__ == "__main__":
    main(sys.argv[1:])
