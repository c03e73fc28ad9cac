"""The package installs under one namespace and the core/GUI boundary holds (import-linter)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_only_the_gguf_budget_namespace_is_installed(tmp_path):
    probe = "import importlib.util as u; print([u.find_spec(n) is not None for n in ('gguf_budget.core', 'core', 'gui')])"
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[True, False, False]"


def test_import_linter_contracts_hold():
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    contracts = (ROOT / "pyproject.toml").read_text(encoding="utf-8").count("[[tool.importlinter.contracts]]")
    assert f"{contracts} kept, 0 broken" in result.stdout
