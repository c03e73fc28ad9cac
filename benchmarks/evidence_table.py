"""Issue #13's table: predicted against measured peak RSS and compute buffer, for every recorded llama.cpp run.

Each log of tests/data/llamacpp-logs (or `--logs DIR`, any folder of such logs) is compared
(`core.evidence.compare`, the call `gguf-budget evidence` makes) with the header-only skeleton
of its model (`tests/recorded_models.py`), at the log's own settings. Peak RSS is the
`/usr/bin/time -v` maximum resident set size attached to each llama-cli run; the llama-fit-params
dry runs have none and show only their compute buffer. Errors are (predicted − measured) / measured.
Decode: llama.cpp's `eval time` tokens/s beside the full load's calibrated estimate at the run's
position and the assumed RAM bandwidth (20 GiB/s, as `evidence --no-measure`), and the share of it
the run reached (benchmarks/speed_calibration.py measures this machine's figures and runs for that).
The last lines name the worst case of each. The bounds themselves are asserted by
tests/test_runtime_memory.py; this prints the numbers for a report.

Run: .venv/bin/python benchmarks/evidence_table.py [--logs DIR]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import bench_shapes  # noqa: F401  (puts tests/ on sys.path)
from recorded_models import LOGS, load_recorded_models, model_of

from gguf_budget.core.evidence.compare import Comparison, ComparisonRow, compare
from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.views.table import aligned_lines

MiB = 1024 * 1024
HEADER = ("log", "model", "ctx", "KV", "peak RSS pred", "measured", "error", "compute pred", "measured", "error",
          "tok/s", "estimate", "share")


def _mib(value: float | None) -> str:
    return "—" if value is None else f"{value / MiB:.2f} MiB"


def _error(row: ComparisonRow | None) -> str:
    return "—" if row is None or row.error is None else f"{row.error * 100:+.2f}%"


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _row(name: str, c: Comparison) -> tuple[str, ...]:
    peak = next((r for r in c.rows if r.name == "peak RSS"), None)
    compute, decode = c.row("compute"), c.row("decode")
    share = decode.share
    return (name, model_of(name), f"{c.request.ctx:,}", c.request.kv_type.value,
            _mib(peak and peak.estimated), _mib(peak and peak.measured), _error(peak),
            _mib(compute.estimated), _mib(compute.measured), _error(compute),
            _rate(decode.measured), _rate(decode.estimated), "—" if share is None else f"{share * 100:.0f}%")


def _worst(comparisons: dict[str, Comparison], component: str) -> str:
    errors = {name: r.error for name, c in comparisons.items() for r in c.rows
              if r.name == component and r.error is not None}
    name = max(errors, key=lambda n: abs(errors[n]))
    return f"worst {component}: {errors[name] * 100:+.2f}% ({name}; {len(errors)} runs)"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--logs", type=Path, default=LOGS, help="folder of llama.cpp logs (default: tests/data/llamacpp-logs)")
    folder = ap.parse_args().logs
    with tempfile.TemporaryDirectory() as tmp:
        specs = load_recorded_models(Path(tmp))
        comparisons = {p.name: compare(parse_llamacpp_log(p.read_text()), specs[model_of(p.name)])
                       for p in sorted(folder.glob("*.log"))}
    print("\n".join(line.rstrip() for line in aligned_lines([HEADER, *(_row(n, c) for n, c in comparisons.items())])))
    print()
    print(_worst(comparisons, "peak RSS"))
    print(_worst(comparisons, "compute"))


if __name__ == "__main__":
    main()
