"""core/views words what the core computed (issue 38, item 5): a view module subtracts, sums, bounds or rounds
no number; that arithmetic lives in the package that owns the number (`units`, `plan.difference`,
`quant.would_fit`, `evidence.buffer_parts`, `plan.types.MemoryPlan.ctx_start`, `fit.server.band.peak_session_rss`,
`fit.placement.gpu_split.block_run`, …).

The rule, read from each module's syntax: no `-`, `%`, `**`, `<<` or `>>` between two values, no `sum`,
`max`, `min` or `abs`, and no `math`. `+` joins words and `*`, `/`, `//` scale a number into the unit a
line prints it in (a percentage, GB/s, whole GiB, ms per token), so they stay.

One named exception, layout: an expression that measures text — one with a `len(...)` in it, such as `table`'s
column widths (`max(len(cell) …)`) or a hanging indent (`len(line) - len(line.lstrip())`) — lays words out in
columns of characters; it computes no number the core owns, so it stays beside the words it lays out.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VIEWS = ROOT / "core" / "views"
FORBIDDEN_OPS = (ast.Sub, ast.Mod, ast.Pow, ast.LShift, ast.RShift)
FORBIDDEN_CALLS = {"sum", "max", "min", "abs"}


def _measures_text(node: ast.AST) -> bool:
    """The layout exception: `node` has a `len(...)` in it."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" for n in ast.walk(node))


def _computes(tree: ast.AST) -> list[str]:
    """Each place in `tree` the rule forbids, as `line: code`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.BinOp, ast.AugAssign, ast.Call)) and _measures_text(node):
            continue
        string_format = isinstance(node, ast.BinOp) and isinstance(node.left, ast.Constant) \
            and isinstance(node.left.value, str)
        if isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, FORBIDDEN_OPS) and not string_format:
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and "math" in (
                [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]):
            found.append(f"{node.lineno}: imports math")
    return found


def _modules() -> dict[str, list[str]]:
    return {p.stem: _computes(ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(VIEWS.glob("*.py"))}


def test_no_view_module_computes():
    computing = {name: found for name, found in _modules().items() if found}
    assert computing == {}, "move the arithmetic to the package that owns the number"


def test_the_rule_sees_a_difference_a_sum_and_a_bound():
    code = "def f(a, b):\n    return max(a - b, 0) + sum([a]) + a % 2\n"
    assert len(_computes(ast.parse(code))) == 4
    assert _computes(ast.parse("def g(x):\n    return 'size: ' + x + '%s' % x\n")) == []


def test_measuring_text_is_layout_but_a_bound_on_numbers_is_not():
    layout = "def f(rows, line):\n    return max(len(r) for r in rows), len(line) - len(line.lstrip()), len(rows) - 1\n"
    assert _computes(ast.parse(layout)) == []
    assert len(_computes(ast.parse("def g(end, n, start):\n    return min(end, n) - start\n"))) == 2
