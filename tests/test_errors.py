"""One error family: every failure a person can act on is a BudgetError, and the CLI says it in one line (exit 2).

Tables, no mocks: each row is a real call into the core with a value out of bounds, or a
real command line.
"""

from __future__ import annotations

import ast
import builtins
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest
from gguf_factory import ArchDesc

from gguf_budget.core.plan.budget import Budget
from gguf_budget.core import (
    BudgetError, BudgetRequest, GGUFFormatError, ModelLoadError, PlanError, RequestError, budget_range, sweep_budgets,
)
from gguf_budget.core import errors as errors_module
from gguf_budget.core.errors import one_line
from gguf_budget.core.fit.placement.gpu_split import parse_tensor_split
from gguf_budget.core.fit.types import FitRequest, Reserves
from gguf_budget.core.machine.snapshot import GpuInfo, HardwareSnapshot, hypothetical_gpus
from gguf_budget.core.machine.presets import find_preset, parse_presets
from gguf_budget.core.model.catalogue import CatalogueEntry, find_entry
from gguf_budget.core.units import parse_size
from gguf_budget.gui.cli import main
from gguf_budget.gui.cli.commands.common import CommandError

CORE = Path(__file__).resolve().parents[1] / "core"
GIB = 1 << 30


@pytest.mark.parametrize(("error", "parent"), [
    (BudgetError, ValueError),
    (ModelLoadError, BudgetError),
    (GGUFFormatError, ModelLoadError),
    (RequestError, BudgetError),
    (PlanError, BudgetError),
    (CommandError, BudgetError),
])
def test_the_family_tree(error, parent):
    assert issubclass(error, parent)


def test_export_errors_belong_to_the_family():
    from gguf_budget.gui.qt.menus.export_files import ExportError

    assert issubclass(ExportError, BudgetError)


def _snapshot(**kw) -> HardwareSnapshot:
    fields = dict(captured_at=0.0, host_total=GIB, host_available=GIB, cgroup_limit=None, gpus=(),
                  gpu_error=None, source="hypothetical")
    return HardwareSnapshot(**{**fields, **kw})


def _entry(**kw) -> CatalogueEntry:
    fields = dict(name="tiny", title="Tiny", kind="dense", quant="Q8_0", config_repo="x/y",
                  published_file_bytes=1, published_source="https://example.org")
    return CatalogueEntry(**{**fields, **kw})


# Places the core validates a value it was given (each raised a bare ValueError before).
OUT_OF_BOUNDS: dict[str, Callable[[], object]] = {
    "budget below 1": lambda: Budget.of(0),
    "budget not a Budget": lambda: BudgetRequest(budget=0),
    "budget beyond 2^63-1": lambda: Budget.of(2**63),
    "ctx 0": lambda: BudgetRequest(ctx=0),
    "ctx_cap 0": lambda: BudgetRequest(ctx_cap=0),
    "nine buffers": lambda: BudgetRequest(n_buffers=9),
    "head mode": lambda: BudgetRequest(head_mode="sideways"),
    "request kv type": lambda: BudgetRequest(kv_type="q3_k"),
    "force not a bool": lambda: BudgetRequest(force=1),  # type: ignore[arg-type]
    "negative reserve": lambda: Reserves(host=-1),
    "fit ctx 0": lambda: FitRequest(ctx=0),
    "negative GPU layers": lambda: FitRequest(gpu_layers=-1),
    "fit kv type": lambda: FitRequest(kv_type="q3_k"),
    "GPU free above total": lambda: GpuInfo(index=0, name="gpu", total=1, free=2, used=0),
    "snapshot source": lambda: _snapshot(source="guess"),
    "host available above total": lambda: _snapshot(host_available=2 * GIB),
    "hypothetical GPU of 0 bytes": lambda: hypothetical_gpus(1, 0),
    "hypothetical GPU free above total": lambda: hypothetical_gpus(1, GIB, 2 * GIB),
    "not a size": lambda: parse_size("lots"),
    "size too large": lambda: parse_size("9999999P"),
    "range without a step": lambda: budget_range("1M:2M"),
    "range from 0": lambda: budget_range("0:1G:1M"),
    "range backwards": lambda: budget_range("2G:1G:1M"),
    "range too long": lambda: budget_range("1:1T:1"),
    "catalogue name": lambda: find_entry("no-such-model"),
    "catalogue entry name": lambda: _entry(name="Tiny Model"),
    "catalogue entry size": lambda: _entry(published_file_bytes=0),
    "tensor split share": lambda: parse_tensor_split("3,x"),
    "tensor split negative": lambda: parse_tensor_split("1,-1"),
    "preset name": lambda: find_preset("no such gpu"),
    "no preset named": lambda: parse_presets(" , "),
}


@pytest.mark.parametrize("call", OUT_OF_BOUNDS.values(), ids=OUT_OF_BOUNDS.keys())
def test_a_value_out_of_bounds_is_a_request_error_of_one_line(call):
    with pytest.raises(RequestError) as info:
        call()
    assert str(info.value) and "\n" not in str(info.value)


def test_a_sweep_budget_below_one_byte_is_a_request_error(model):
    with pytest.raises(RequestError, match="whole bytes"):
        sweep_budgets(model(ArchDesc()), [0], BudgetRequest())


def _bare_value_errors(path: Path) -> list[int]:
    """Lines of `raise ValueError…` in one source file."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Raise) and node.exc is not None:
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(raised, ast.Name) and raised.id == "ValueError":
                lines.append(node.lineno)
    return lines


def test_the_core_raises_no_bare_value_error():
    found = {str(p.relative_to(CORE)): lines for p in sorted(CORE.rglob("*.py")) if (lines := _bare_value_errors(p))}
    assert found == {}


def test_one_line_is_the_first_line_or_the_type():
    assert one_line(RequestError("first\nsecond")) == "first"
    assert one_line(TypeError()) == "TypeError"


@pytest.fixture
def files(gguf_file, tmp_path) -> dict[str, str]:
    garbage = tmp_path / "garbage.gguf"
    garbage.write_bytes(b"GGUF" + b"\xff" * 64)
    return {"model": str(gguf_file(ArchDesc(), "header_only")), "tied": str(gguf_file(ArchDesc(tied=True),
            "header_only", name="tied.gguf")), "missing": str(tmp_path / "missing.gguf"), "garbage": str(garbage)}


# A member of each branch of the family, raised by the core inside a command and met by `main` alone.
COMMAND_LINES = [
    (["fit", "{model}", "--host-available", "8G", "--gpu-total", "1G", "--gpu-free", "2G"], "free memory"),
    (["plan", "{tied}", "--budget", "64M", "--head", "stream"], "tied"),
    (["sweep", "{missing}", "--budgets", "1M:2M:1M"], "missing.gguf"),
    (["inspect", "{garbage}"], "garbage.gguf"),
    (["inspect", "--catalog", "no-such-model"], "choose one of"),
    (["plan", "{model}", "--budget", "64M", "--json", "--format", "md"], "disagree"),
]


@pytest.mark.parametrize(("args", "fragment"), COMMAND_LINES)
def test_main_says_every_budget_error_in_one_line_exit_2(capsys, files, args, fragment):
    assert main([a.format(**files) for a in args]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith(f"gguf-budget {args[0]}: ")
    assert captured.err.count("\n") == 1 and fragment in captured.err


def test_a_number_out_of_range_is_refused_at_the_option_in_one_line_exit_2(capsys, files):
    """The CLI checks each number's range before the core sees it (the core's RequestError is the backstop)."""
    with pytest.raises(SystemExit) as stop:
        main(["plan", files["model"], "--budget", "64M", "--ctx", str(2**63)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1 and "argument --ctx" in err


def test_the_real_command_prints_no_traceback(files):
    result = subprocess.run([sys.executable, "-m", "gguf_budget.gui.cli", "fit", files["model"],
                             "--host-available", "8G", "--gpu-total", "1G", "--gpu-free", "2G"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


# Control flow inside one module, never raised past it: not errors a person sees.
PRIVATE_SIGNALS = {("core/library/scan.py", "_WalkLimit"), ("core/remote/fetch.py", "_Retry"),
                   ("gui/cli/stop_signals.py", "Stopped")}  # SIGTERM/SIGHUP raised as Ctrl-C's KeyboardInterrupt
EXCEPTION_BASES = {name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)}


def _exception_classes(root: Path) -> set[tuple[str, str]]:
    """(file, class) for every class in core/ and gui/ whose base is a built-in exception or a family member."""
    family = {name for name, value in vars(errors_module).items() if isinstance(value, type)
              and issubclass(value, BaseException)}
    found = set()
    for path in sorted([*(root / "core").rglob("*.py"), *(root / "gui").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
                         for b in node.bases}
                if bases & (EXCEPTION_BASES | family):
                    found.add((str(path.relative_to(root)), node.name))
    return found


def test_every_error_class_is_declared_in_core_errors():
    package = CORE.parent
    declared = {(str(p), name) for p, name in _exception_classes(package) if p != "core/errors.py"}
    assert declared == PRIVATE_SIGNALS


def _documented_tree() -> dict[str, str | None]:
    """class → parent, as the module docstring draws the family (Rule 3)."""
    parents: dict[str, str | None] = {}
    lineage: list[str] = []
    for line in errors_module.__doc__.splitlines():
        drawn = re.match(r"^ {8}([│ ]*)([├└]── )?([A-Z]\w+) ", line)
        if drawn is None or (drawn.group(1) and not drawn.group(2)):
            continue  # prose, or a description's second line
        depth = len(drawn.group(1)) // 4 + bool(drawn.group(2))
        lineage[depth:] = [drawn.group(3)]
        parents[drawn.group(3)] = lineage[depth - 1] if depth else None
    return parents


def test_the_documented_tree_is_the_real_family():
    real = {name: (value.__bases__[0].__name__ if value is not BudgetError else None)
            for name, value in vars(errors_module).items()
            if isinstance(value, type) and issubclass(value, BudgetError)}
    assert _documented_tree() == real
