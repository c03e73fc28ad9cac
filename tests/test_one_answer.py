"""One question, one answer: `plan`, `fit`, `quants` and the session the window draws agree, for any model and machine.

Hypothesis draws a real GGUF (the bundled demo, the Llama-3.1-8B skeleton, a factory model), a
machine from 1 to 2048 GiB with or without GPUs, a budget (or none: this machine's usable RAM),
an asked ctx, a cap and a host reserve. The CLI is run as a person would run it (`main([...])`,
JSON out); the session is driven as the window drives it. Their verdicts, ctx, GPU layers,
pinned counts and decode figures must be the same numbers.
"""

from __future__ import annotations

import io
import json
import math
import shutil
from contextlib import redirect_stderr, redirect_stdout
from importlib.resources import files
from pathlib import Path

import pytest
from gguf_factory import ArchDesc, write_gguf
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gguf_budget.core import load_model
from gguf_budget.core.explorer.model_key import model_key
from gguf_budget.core.explorer.session import (
    Controls, OpenModel, Session, SetBandwidths, SetBudget, SetCtx, SetCtxCap, SetMachine,
)
from gguf_budget.core.fit.types import Reserves
from gguf_budget.core.machine.bandwidth import with_typed
from gguf_budget.core.machine.snapshot import hypothetical_gpus, hypothetical_machine, what_if
from gguf_budget.core.machine.usable import DEFAULT_GPU_RESERVE, usable_ram
from gguf_budget.core.model.catalogue import catalogue_path, find_entry
from gguf_budget.core.plan.budget import Budget
from gguf_budget.core.speed.machine_speed import speed_figures
from gguf_budget.gui.cli import main

GiB, MiB = 1 << 30, 1 << 20
RAM_BW, DISK_BW, VRAM_BW = 20 * GiB, 2 * GiB, 400 * GiB
DEMO = Path(str(files("gguf_budget.resources") / "demo-tinyllama-1.1b-chat-q4_k_m.skeleton.gguf"))


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> list[Path]:
    """Each model alone in a folder, so `library --add FOLDER` lists it and nothing else."""
    paths = []
    for i, source in enumerate((DEMO, Path(catalogue_path(find_entry("llama-3.1-8b-instruct"))), None)):
        folder = tmp_path_factory.mktemp(f"one{i}")
        if source is None:
            paths.append(write_gguf(folder / "wide.gguf", ArchDesc(n_layer=12, n_embd=256), "header_only")[0])
        else:
            paths.append(Path(shutil.copy(source, folder / source.name)))
    return paths


def cli(*args: str, measure: bool = False) -> tuple[int, dict]:
    """`--no-measure`: every figure the estimates read is typed or kept, so both sides read the same."""
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        code = main([*args, "--json", *([] if measure else ["--no-measure"])])
    return code, json.loads(out.getvalue())


def size(n: int) -> str:
    return str(n)


machines = st.fixed_dictionaries({
    "host": st.integers(1, 2048).map(lambda g: g * GiB),
    "gpus": st.one_of(st.just(0), st.integers(1, 2)),
    "vram": st.integers(2, 96).map(lambda g: g * GiB),
})
asks = st.fixed_dictionaries({
    "budget": st.one_of(st.none(), st.integers(64, 65536).map(lambda m: m * MiB)),
    "ctx": st.one_of(st.none(), st.integers(1, 512).map(lambda k: k * 256)),
    "cap": st.one_of(st.none(), st.sampled_from([512, 2048, 4096, 8192, 100_000, 131_072, 200_000])),
    "reserve": st.integers(0, 8).map(lambda g: g * GiB),
})


def flags(m: dict, a: dict, *, budget: bool) -> list[str]:
    out = ["--host-available", size(m["host"]), "--host-reserve", size(a["reserve"])]
    if a["ctx"] is not None:
        out += ["--ctx", str(a["ctx"])]
    if a["cap"] is not None:
        out += ["--ctx-cap", str(a["cap"])]
    if budget and a["budget"] is not None:
        out += ["--budget", size(a["budget"])]
    return out


def gpu_flags(m: dict) -> list[str]:
    if not m["gpus"]:
        return ["--no-gpu"]
    return ["--gpu-total", size(m["vram"]), "--gpu-count", str(m["gpus"])]


def session_for(path: Path, m: dict, a: dict) -> Session:
    """The window's way: a machine, the typed bandwidths, the model, then what the person set."""
    model = load_model(path)
    gpus = hypothetical_gpus(m["gpus"], m["vram"], None) if m["gpus"] else ()
    machine = what_if(hypothetical_machine(m["host"]), gpus=gpus)
    session = Session()
    session.apply(SetMachine(machine, Reserves(a["reserve"], DEFAULT_GPU_RESERVE), None, None))
    base, _ = speed_figures(model.path, ("compute",), measure=False)
    session.apply(SetBandwidths(with_typed(base, ram=RAM_BW, disk=DISK_BW, vram=VRAM_BW)))
    session.apply(OpenModel(model, model_key(model)))
    chosen = () if a["budget"] is None else (SetBudget(Budget.of(a["budget"])),)
    session.apply(Controls((*chosen, SetCtx(a["ctx"]), SetCtxCap(a["cap"]))))
    return session


def same(x: float | None, y: float | None) -> bool:
    return (x is None) == (y is None) and (x is None or math.isclose(x, y, rel_tol=1e-9))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.integers(0, 2), m=machines, a=asks)
def test_plan_fit_quants_and_the_session_give_one_answer(models, which, m, a):
    path = models[which]
    assume(a["budget"] is not None or usable_ram(hypothetical_machine(m["host"]), a["reserve"]))
    view = session_for(path, m, a).view
    bw = ["--ram-bw", size(RAM_BW)]

    code, plan = cli("plan", str(path), *flags(m, a, budget=True), *bw, "--disk-bw", size(DISK_BW))
    assert view.plan is not None and code in (0, 3)
    assert (plan["budget"], plan["feasible"], plan["ctx"], plan["n_pinned"]) == (
        view.plan.budget.cli_bytes, view.plan.feasible, view.plan.ctx, view.plan.n_pinned)
    assert same(plan["tok_s_estimate"] and plan["tok_s_estimate"]["tok_s"],
                view.plan_speed.tok_s if view.plan_speed else None)

    code, fit = cli("fit", str(path), *flags(m, a, budget=False), *gpu_flags(m), *bw, "--vram-bw", size(VRAM_BW))
    load = view.full_load
    assert load is not None and code in (0, 3)
    assert (fit["ctx"], fit["ctx_reason"], fit["gpu_layers"], code == 0) == (
        load.ctx, load.choice.reason.value, load.fit.gpu_layers, load.fit.verdict.admitted)
    assert same(fit["tok_s_estimate"] and fit["tok_s_estimate"]["tok_s"], load.speed.tok_s if load.speed else None)

    if code == 0:
        assert fit["max_ctx"] is None or fit["max_ctx"] >= fit["ctx"]  # never below a ctx that fits

    if not m["gpus"] and a["ctx"] is None:  # the Library judges each model at llama.cpp's default ctx, host only
        budget = [] if a["budget"] is None else ["--budget", size(a["budget"])]
        cap = [] if a["cap"] is None else ["--ctx-cap", str(a["cap"])]
        _, library = cli("library", "--add", str(path.parent), "--host-available", size(m["host"]), "--no-gpu",
                         "--host-reserve", size(a["reserve"]), *budget, *cap, measure=True)
        (entry,) = [e for e in library["entries"] if e["path"] == str(path)]
        assert entry["full_load"] == {"verdict": fit["verdict"], "gpu_layers": fit["gpu_layers"], "ctx": fit["ctx"],
                                      "max_ctx": fit["max_ctx"]}
        assert (entry["budget_plan"]["ctx"], entry["budget_plan"]["pinned"]) == (view.plan.ctx, view.plan.n_pinned)

    code, quants = cli("quants", str(path), *flags(m, a, budget=False), *gpu_flags(m), *bw, "--vram-bw", size(VRAM_BW))
    (own,) = [row for row in quants["rows"] if row["source"]]
    assert (own["ctx"], own["ctx_reason"], own["gpu_layers"], own["verdict"]) == (
        fit["ctx"], fit["ctx_reason"], fit["gpu_layers"], fit["verdict"])
    assert same(own["tok_s_estimate"] and own["tok_s_estimate"]["tok_s"],
                fit["tok_s_estimate"] and fit["tok_s_estimate"]["tok_s"])


def test_no_text_a_person_reads_spells_the_default_ctx_itself():
    """One DEFAULT_CTX: help strings, tooltips and glossary interpolate it (three constants and two help strings
    each said 4096)."""
    import ast

    root = Path(__file__).resolve().parent.parent
    found = []
    for path in sorted([*root.joinpath("core").rglob("*.py"), *root.joinpath("gui").rglob("*.py")]):
        tree = ast.parse(path.read_text())
        docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}  # read in the code
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings \
                    and "4096" in node.value.replace(",", "").replace("_", ""):
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert found == []
