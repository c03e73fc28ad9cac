"""Predicted against measured peak RSS and compute buffer, for every recorded llama.cpp run (issues #13, #22).

Each log of tests/data/llamacpp-logs (the shared llama-cli runs) and tests/data/llamacpp-runs
(every program, short prompts and full contexts; or the logs of `--logs DIR …`) is compared
(`core.evidence.compare`, the call `gguf-budget evidence` makes) with the header-only skeleton of
its model (`tests/recorded_models.py`; the zero-weight 8B-shaped file is written sparse), at the
log's own settings, program and tokens. Peak RSS is the `/usr/bin/time -v` maximum resident set
size of each run; the llama-fit-params dry runs have none and show only their compute buffer.
Errors are (predicted − measured) / measured. `fit` marks the runs the process constants were
fitted on (`core.fit.runtime_memory` Rule 10); every other run is judged. Decode: llama.cpp's
`eval time` tokens/s beside the full load's calibrated estimate at the run's position and the
assumed RAM bandwidth (20 GiB/s, as `evidence --no-measure`), and the share of it the run reached
(benchmarks/speed_calibration.py measures this machine's figures and runs for that). The last
lines name the worst case of each, fitted and judged apart. The bounds themselves are asserted by
tests/test_peak_rss_band.py; this prints the numbers for a report.

Run: .venv/bin/python benchmarks/evidence_table.py [--logs DIR …]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import bench_shapes  # noqa: F401  (puts tests/ on sys.path)
from recorded_models import LOGS, load_recorded_models, model_of
from runnable_model import write_llama31_8b_q4_k_m

from gguf_budget.core.evidence.compare import Comparison, ComparisonRow, compare
from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.model.loader import load_model
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.views.table import aligned_lines

MiB = 1024 * 1024
RUNS = LOGS.parent / "llamacpp-runs"
FITTED = {"smollm2_completion_short.log", "smollm2_python_short.log"}  # and every shared llama-cli run
HEADER = ("log", "program", "prompt", "ctx", "KV", "fit", "peak RSS pred", "measured", "error", "compute pred",
          "measured", "error", "touched", "tok/s", "estimate", "share")


def _mib(value: float | None) -> str:
    return "—" if value is None else f"{value / MiB:.2f} MiB"


def _error(row: ComparisonRow | None) -> str:
    return "—" if row is None or row.error is None else f"{row.error * 100:+.2f}%"


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _fitted(path: Path) -> bool:
    return path.parent == LOGS or path.name in FITTED


def _row(path: Path, c: Comparison) -> tuple[str, ...]:
    peak = next((r for r in c.rows if r.name == "peak RSS"), None)
    compute, decode = c.row("compute"), c.row("decode")
    share = decode.share
    m, s = c.estimate.memory, c.request.engine
    return (path.name, str(s.runtime), f"{s.short.prompt:,}", f"{c.request.ctx:,}", c.request.kv_type.value,
            "fit" if _fitted(path) else "", _mib(peak and peak.estimated), _mib(peak and peak.measured), _error(peak),
            _mib(compute.estimated), _mib(compute.measured), _error(compute),
            _mib(m.short.compute if m and m.short else None),
            _rate(decode.measured), _rate(decode.estimated), "—" if share is None else f"{share * 100:.0f}%")


def _worst(comparisons: dict[Path, Comparison], component: str, fitted: bool | None = None) -> str:
    errors = {p: r.error for p, c in comparisons.items() for r in c.rows
              if r.name == component and r.error is not None and (fitted is None or _fitted(p) == fitted)}
    if not errors:
        return f"worst {component}: no runs"
    worst = max(errors, key=lambda p: abs(errors[p]))
    which = "" if fitted is None else (" (fitted runs)" if fitted else " (judged runs)")
    return f"worst {component}{which}: {errors[worst] * 100:+.2f}% ({worst.name}; {len(errors)} runs)"


def _model(name: str, specs: dict[str, ModelSpec], folder: Path) -> ModelSpec:
    if name.startswith("llama8b"):
        if "llama8b" not in specs:
            specs["llama8b"] = load_model(write_llama31_8b_q4_k_m(folder / "llama31-8b-shaped-q4_k_m.gguf"))
        return specs["llama8b"]
    return specs[model_of(name)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--logs", type=Path, nargs="+", default=[LOGS, RUNS],
                    help="folders of llama.cpp logs (default: tests/data/llamacpp-logs and tests/data/llamacpp-runs)")
    folders = ap.parse_args().logs
    with tempfile.TemporaryDirectory() as tmp:
        specs = load_recorded_models(Path(tmp))
        comparisons = {p: compare(parse_llamacpp_log(p.read_text()), _model(p.name, specs, Path(tmp)))
                       for folder in folders for p in sorted(folder.glob("*.log"))}
    print("\n".join(line.rstrip() for line in aligned_lines([HEADER, *(_row(p, c) for p, c in comparisons.items())])))
    print()
    print(_worst(comparisons, "peak RSS", fitted=True))
    print(_worst(comparisons, "peak RSS", fitted=False))
    print(_worst(comparisons, "compute"))


if __name__ == "__main__":
    main()
