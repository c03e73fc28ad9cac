"""The README and the manual in docs/ are true: the README's contents list points at its sections, every
page is short enough to read (≤ 300 lines), the manual lists every benchmark, and every command line in
their `sh` blocks runs as written in a fresh venv of a fresh copy of the checkout.

A command line is run the way a reader would type it (through bash, in the copy's root), after
three changes a reader makes too: placeholders become the repository's own files (MODEL.gguf and
OTHER.gguf catalogue skeletons, LOG a recorded llama.cpp log, whose model — a skeleton written by
tests/recorded_models.py — sits where the log says it loaded it), optional `[…]` parts are left out,
and a line a reader could not run here is excluded with its reason (EXCLUDED: each names the test
that covers it instead). `a && b` lines are run segment by segment. Exit codes are the documented
ones ("0 ok, 2 bad input, 3 plan impossible"; `fit`, `quants` and `tune` exit 3 when nothing fits, which
depends on this machine); stderr never carries a traceback. The app's folders and HOME are private
to the run (pip keeps the real HOME: its configuration lives there). pip compiles no installed module
ahead of time (PIP_COMPILE=0: PIP_NO_COMPILE=1 sets `--no-compile`'s destination to true, so it compiles): most
are never imported by a README line (mypy, PyInstaller, hypothesis), and compiling them was a fifth of the
setup's CPU. A setup line the pages repeat (`python3 -m venv .venv`) is run once, where a reader first meets it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from recorded_models import write_recorded_models

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MANUAL = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
MOST_LINES = 300

SUBSTITUTIONS = (
    ("MODEL.gguf|--catalog NAME", "MODEL.gguf"),
    ("MODEL.gguf", "resources/catalogue/llama-3.1-8b-instruct-q4_k_m.skeleton.gguf"),
    ("OTHER.gguf", "resources/catalogue/qwen3-8b-q4_k_m.skeleton.gguf"),
    (" LOG", " tests/data/llamacpp-logs/smollm2-135m-instruct-q4_1_ctx2048_f16.log"),
)
EXCLUDED = {  # a segment's start → why it is not run here
    ".venv/bin/python -m pytest": "the whole test suite, this test included (CI runs it as `.ci/run`)",
    ".venv/bin/pip install -e '.[test,packaging]'": "installs the test tools for that suite's run (`.ci/run` "
                                                    "installs them the same way)",
    ".ci/build_llamacpp.sh": "builds llama.cpp for minutes; tests/test_ci_llamacpp_build.py runs it",
    ".venv/bin/python packaging/build_bundle.py": "freezes the PyInstaller bundle; tests/test_packaging_bundle.py "
                                                  "builds and runs it",
    "dist/gguf-budget/gguf-budget": "the frozen app's window (needs the bundle); tests/test_packaging_bundle.py "
                                    "runs the bundle with --screenshot",
    ".venv/bin/python packaging/install_desktop.py --bundle": "needs the bundle; tests/test_packaging_desktop.py "
                                                              "runs the installer",
    ".venv/bin/gguf-budget measure": "runs llama.cpp on a model with weights; tests/test_measure_real.py does",
}
WINDOW = ".venv/bin/gguf-budget"  # alone, it opens the window and waits for a person: tests/test_gui_launch.py
SETUP = ("python3 -m venv", ".venv/bin/pip ")
EXITS = {"fit": {0, 3}, "plan": {0, 3}, "quants": {0, 3}, "tune": {0, 3}}


def sh_lines(text: str) -> list[str]:
    """Every command line of the fenced `sh` blocks: continuations joined, comments dropped."""
    lines, block, pending = [], False, ""
    for raw in text.splitlines():
        if raw.startswith("```"):
            block = raw.strip() == "```sh"
            continue
        if not block:
            continue
        line = re.sub(r"\s+#.*$", "", raw).strip() if not raw.lstrip().startswith("#") else ""
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        if pending + line:
            lines.append(" ".join((pending + line).split()))
        pending = ""
    return lines


def without_optional(segment: str) -> str:
    """The segment without its optional parts: a ` [` outside quotes up to its matching `]`
    (`'.[test]'` is a pip extra, not an option)."""
    kept, depth, quote = [], 0, ""
    for i, c in enumerate(segment):
        if depth == 0 and c in "'\"":
            quote = "" if quote == c else (quote or c)
        if c == "[" and not quote and (depth or (i > 0 and segment[i - 1] == " ")):
            depth += 1
            continue
        if depth:
            depth -= c == "]"
            continue
        kept.append(c)
    return " ".join("".join(kept).split())


def runnable(segment: str) -> str:
    """A segment as run here: optional parts left out, placeholders replaced."""
    segment = without_optional(segment)
    for placeholder, value in SUBSTITUTIONS:
        segment = segment.replace(placeholder, value)
    return segment.strip()


def excluded(segment: str) -> str | None:
    if segment == WINDOW:
        return "opens the window and waits for a person; tests/test_gui_launch.py launches it"
    return next((why for start, why in EXCLUDED.items() if segment.startswith(start)), None)


def segments() -> list[str]:
    return [s.strip() for line in sh_lines(MANUAL) for s in line.split("&&")]


RUN = [runnable(s) for s in segments() if excluded(runnable(s)) is None]
SETUP_COMMANDS = list(dict.fromkeys(c for c in RUN if c.startswith(SETUP)))
COMMANDS = [c for c in RUN if not c.startswith(SETUP)]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_contents_list_points_at_every_section():
    headings = re.findall(r"^## (.+)$", README, re.MULTILINE)
    contents = README.split("**Contents:**", 1)[1].split("\n\n", 1)[0]
    links = re.findall(r"\]\(#([^)]+)\)", contents)
    assert set(links) == {_slug(h) for h in headings if h != "Contents"}


def test_every_benchmark_script_is_listed():
    scripts = {p.name for p in (ROOT / "benchmarks").glob("*.py")}
    assert scripts and all(f"benchmarks/{name}" in MANUAL for name in scripts)


def test_every_page_reads_in_one_sitting():
    long = {page.name: n for page in PAGES if (n := len(page.read_text(encoding="utf-8").splitlines())) > MOST_LINES}
    assert not long, f"pages over {MOST_LINES} lines: {long}"


def test_every_page_the_readme_links_exists():
    linked = re.findall(r"\]\((docs/[^)#]+)", README)
    assert linked and all((ROOT / name).is_file() for name in linked)


def test_every_exclusion_names_a_readme_line_and_no_line_is_left_unclassified():
    runnable_segments = [runnable(s) for s in segments()]
    assert all(any(s.startswith(start) for s in runnable_segments) for start in EXCLUDED), "a stale exclusion"
    assert WINDOW in runnable_segments
    assert all(s.startswith((".venv/bin/", "python3 ", ".ci/", "dist/")) for s in runnable_segments)
    assert not any("[" in c or "MODEL" in c or "OTHER" in c for c in COMMANDS)


def _run(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A copy of the checkout (tracked and unignored files), set up by the README's own setup lines (the
    venv and the pip installs, in README order, with the real HOME: pip's configuration lives there)."""
    copy = tmp_path_factory.mktemp("readme") / "gguf-budget"
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    write_recorded_models(copy / "models")                # where the recorded logs loaded their models from
    home = copy.parent / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
           "XDG_DATA_HOME": str(home / ".local/share"), "XDG_CACHE_HOME": str(home / ".cache")}
    env.pop("QT_QPA_PLATFORM", None)                      # --screenshot must need no display of its own
    for command in SETUP_COMMANDS:  # pip byte-compiles nothing: a module is compiled when a command imports it
        done = _run(command, copy, {**os.environ, "PIP_COMPILE": "0"})
        assert done.returncode == 0, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return copy, env


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
def test_each_readme_command_runs_as_written(fresh, command):
    copy, env = fresh
    done = _run(command, copy, env)
    words = command.split()
    subcommand = words[1] if len(words) > 1 and words[0].endswith("gguf-budget") else ""
    assert done.returncode in EXITS.get(subcommand, {0}), f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
