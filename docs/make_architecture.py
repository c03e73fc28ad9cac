"""Write the picture in docs/architecture.md: the sub-packages in the layers pyproject.toml's import contracts
hold, and what each one imports, read from the code with `ast`.

    .venv/bin/python docs/make_architecture.py

It rewrites the block between the two markers of docs/architecture.md and leaves the text around it;
tests/test_architecture_doc.py checks that the page's picture is the one the code makes now.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
START, END = "<!-- made by docs/make_architecture.py -->", "<!-- end of the picture -->"
GUI = ("gui.qt", "gui.cli")


def core_layers() -> list[list[str]]:
    """The core's layers, top first, as the import contract names them ('a | b': one layer of two)."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    layered = next(c for c in contracts if c.get("containers") == ["gguf_budget.core"])
    return [[f"core.{name.strip()}" for name in layer.split("|")] for layer in layered["layers"]]


def _package_of(path: Path) -> str:
    """'core.fit' for core/fit/x.py, 'gui.qt' for anything under gui/qt, 'core' for core/units.py."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:2]) if len(parts) > 2 else parts[0]


def _imported(tree: ast.AST) -> set[str]:
    """The app's packages a module imports ('gguf_budget.core.fit.x' → 'core.fit'; a core top module → 'core')."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    found = set()
    for name in names:
        parts = name.split(".")
        if parts[0] != "gguf_budget" or len(parts) < 3:
            continue
        package = ".".join(parts[1:3])
        if (ROOT / parts[1] / parts[2]).is_dir():
            found.add(package)
        elif (ROOT / parts[1] / f"{parts[2]}.py").is_file():
            found.add(parts[1])
    return found


def imports() -> dict[str, set[str]]:
    """Each package → the other packages its modules import."""
    graph: dict[str, set[str]] = {}
    for path in sorted([*(ROOT / "core").rglob("*.py"), *(ROOT / "gui").rglob("*.py")]):
        if path == ROOT / "core" / "__init__.py":
            continue  # the core's public names, gathered for the CLI and the tests: not a layer of its own
        package = _package_of(path)
        graph.setdefault(package, set()).update(_imported(ast.parse(path.read_text(encoding="utf-8"))))
    for package, targets in graph.items():
        targets.discard(package)
    return graph


def picture() -> str:
    """The layers top to bottom, each package with what it imports; an arrow only ever points down."""
    graph = imports()
    rows = [list(GUI), *core_layers(), ["core"]]
    width = max(len(p) for row in rows for p in row)
    lines = ["```text", "what a person does enters at the top; every import points down", ""]
    for i, row in enumerate(rows):
        for package in row:
            below = sorted(graph.get(package, set()) - set(GUI) - {package},
                           key=lambda p: (next((j for j, r in enumerate(rows) if p in r), len(rows)), p))
            shown = package if package != "core" else "core (errors, ranges, units, …)"
            lines.append(f"{shown:<{width + 2}} → {', '.join(p.removeprefix('core.') for p in below) or '(nothing)'}")
        if i < len(rows) - 1:
            lines.append(f"{'':<{width // 2}}│")
    lines.append("```")
    return "\n".join(lines)


def written(page: str) -> str:
    """`page` with its picture made again."""
    head, rest = page.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{picture()}\n{END}{tail}"


def main() -> int:
    DOC.write_text(written(DOC.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
