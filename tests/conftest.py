"""Shared test set-up: Qt runs offscreen (set here, before any Qt import), and models are
real GGUF files written by `gguf_factory` into a temporary folder."""

from __future__ import annotations

import os
import subprocess
import sys

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Python keeps what it compiles, in this run and in every process a test starts (the app, the CLI, a fresh venv's
# commands, the workers: they inherit this environment). With PYTHONDONTWRITEBYTECODE set, each of those processes
# compiled every module it imported again: core/ and gui/ alone are ~0.35 s of CPU a process.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

from pathlib import Path  # noqa: E402
from typing import Callable  # noqa: E402

import pytest  # noqa: E402
from filelock import FileLock  # noqa: E402
from gguf_factory import ArchDesc, Mode, write_gguf  # noqa: E402

from gguf_budget.core import ModelSpec, load_model  # noqa: E402
from gguf_budget.core.model.catalogue import catalogue_path, find_entry  # noqa: E402

# The GUI fixtures (settings_store, write_model, make_window) for every test module.
pytest_plugins = ["gui_support"]


@pytest.fixture(autouse=True)
def private_data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own app folders (data, config, cache: `core.paths`), never the user's; returns the data one."""
    for variable, name in (("GGUF_BUDGET_CONFIG_DIR", "config"), ("GGUF_BUDGET_CACHE_DIR", "cache")):
        monkeypatch.setenv(variable, str(tmp_path_factory.mktemp(name)))
    folder = tmp_path_factory.mktemp("data")
    monkeypatch.setenv("GGUF_BUDGET_DATA_DIR", str(folder))
    return folder


@pytest.fixture(scope="session")
def machine_record(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """This machine's speed record as a first measuring command leaves it (RAM and compute, by the real probes),
    measured once a worker."""
    from gguf_budget.core.machine.bandwidth_store import machine_bandwidths, record_path

    folder = tmp_path_factory.mktemp("machine")
    machine_bandwidths(None, ("ram", "compute"), folder=folder)
    return record_path(folder).read_bytes()


@pytest.fixture
def measured_machine(private_data_dir: Path, machine_record: bytes) -> Path:
    """The test's data folder holds the run's one record of this machine's figures, as after an earlier command:
    a command that measures when nothing is kept (fit, plan, evidence without --no-measure) reads it instead of
    probing again in every test's fresh folder (the RAM probe is ~1.8 s of CPU, the compute one ~0.2 s). For
    files whose tests ask commands for answers, not about measuring; returns the record's path."""
    from gguf_budget.core.machine.bandwidth_store import record_path

    path = record_path(private_data_dir)
    path.write_bytes(machine_record)
    return path


def pytest_configure(config: pytest.Config) -> None:
    """CI runs `-n auto --dist loadfile`: each file whole on one worker, handed out in order. xdist's own order (most
    tests first) handed the slow files (a few tests, minutes each) out last, so one worker ran them alone at the
    end; the collection's order (`pytest_collection_modifyitems`) is kept instead."""
    if getattr(config.option, "dist", "no") == "loadfile":
        config.option.loadscopereorder = False


LONGEST = (
    "test_readme.py", "test_packaging_bundle.py", "test_server_real.py", "test_packaging_wheel.py", "test_quant_ladder.py",
    "test_tune.py", "test_llama_words.py", "test_tune_work.py", "test_tune_ot.py",
    "test_calibration_guard.py", "test_gui_quants.py", "test_cli_quants.py", "test_one_answer.py",
    "test_fit_auto_search.py", "test_fact_relations.py", "test_cli_imports.py", "test_remote.py", "test_static_checks.py",
    "test_gui_library.py", "test_fuzz_net_facts.py", "test_cli_fit.py", "test_largest_ctx_search.py",
)
"""The costliest files, costliest first, by the CPU each takes alone (user + sys of pytest and its children, this
2-core machine): the slow ones 84 (the README's venv and commands), 56, 54, 17, 17, 10, 9, 9 and 8 s; then the
others over 8 s (the calibration guard's real probes 20-28, the Quants dock 21 ... the largest-ctx search 9). Wall
time on a shared machine is that times the load over the cores."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files with a test marked `slow` first, then the other LONGEST files, each in LONGEST's order: both workers
    start on the long ones and share the short files at the end, so no worker is left alone with a long file
    (xdist hands a worker its next file when it is nearly done with one). Every file's tests stay together and in
    their order (a stable sort by file)."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}

    def rank(item: pytest.Item) -> tuple[int, int]:
        name = item.path.name
        return (item.path not in slow, LONGEST.index(name) if name in LONGEST else len(LONGEST))

    items.sort(key=rank)


@pytest.fixture(scope="module")
def llama70b() -> ModelSpec:
    """The catalogue's Llama-3.1-70B skeleton (80 layers, 128k trained context), read once a module."""
    return load_model(catalogue_path(find_entry("llama-3.1-70b-instruct")))


@pytest.fixture(scope="module")
def llama8b() -> ModelSpec:
    """The catalogue's Llama-3.1-8B skeleton, read once a module."""
    return load_model(catalogue_path(find_entry("llama-3.1-8b-instruct")))


@pytest.fixture(scope="session")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel packaging/build_bundle.py builds, once a run: its own tests check it, the bundle is frozen from it.
    Under `-n` the workers share one: the first to ask builds it, under a lock, in the run's folder they all sit in."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    shared = tmp_path_factory.getbasetemp().parent if worker else tmp_path_factory.mktemp("run")
    out = shared / "wheel"
    with FileLock(str(shared / "wheel.lock")):
        if not list((out / "dist").glob("*.whl")):
            build = Path(__file__).resolve().parent.parent / "packaging" / "build_bundle.py"
            cmd = [sys.executable, str(build), "--wheel-only", "--dist", str(out / "dist"), "--work", str(out / "work")]
            subprocess.run(cmd, check=True, capture_output=True, text=True)
    (wheel,) = (out / "dist").glob("*.whl")
    return wheel


@pytest.fixture
def gguf_file(tmp_path: Path) -> Callable[..., Path]:
    """Write a model; returns the path of its (first) file."""

    def write(desc: ArchDesc | None = None, mode: Mode = "complete", name: str = "model.gguf", **kw) -> Path:
        return write_gguf(tmp_path / name, desc or ArchDesc(), mode, **kw)[0]

    return write


@pytest.fixture
def model(gguf_file: Callable[..., Path]) -> Callable[..., ModelSpec]:
    """Write a model and load it back as a ModelSpec."""

    def make(desc: ArchDesc | None = None, mode: Mode = "header_only", **kw) -> ModelSpec:
        return load_model(gguf_file(desc, mode, **kw))

    return make


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every header the scan reads in this process, by file name."""
    import gguf_budget.core.gguf.shards as shards_module

    seen: list[str] = []
    real = shards_module.read_header

    def counted(path: str, *args, **kwargs):
        seen.append(Path(path).name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(shards_module, "read_header", counted)
    return seen
