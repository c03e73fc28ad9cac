"""Finding a model's runtime evidence again when it is opened (runs off the GUI thread, but should not lag).

1. `header_fingerprint` of a Llama-3-8B-shaped file (128,256 tokens, 280,147 merges: a header of
   several MB, written sparse): median time.
2. `stored_evidence` for a model with one stored real llama.cpp log (tests/data, ~5,000 lines):
   fingerprint + read + parse, median time.

Run: .venv/bin/python benchmarks/bench_evidence.py [--runs 15]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench_shapes import LLAMA3_8B, median_seconds
from gguf_factory import write_gguf

from gguf_budget.core.gguf.fingerprint import header_fingerprint
from gguf_budget.core.gguf.shards import read_shards
from gguf_budget.core.measure.record import EvidenceRecord, Origin
from gguf_budget.core.measure.session import stored_evidence
from gguf_budget.core.measure.store import EvidenceStore

LOG = Path(__file__).resolve().parent.parent / "tests" / "data" / "llamacpp-logs" / "smollm2-135m-instruct-q4_1_ctx2048_f16.log"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = write_gguf(Path(tmp) / "llama3-8b.gguf", LLAMA3_8B, "sparse")[0]
        key = header_fingerprint(model)
        store = EvidenceStore(Path(tmp) / "data")
        store.save(EvidenceRecord(model_key=key, model_path=str(model), origin=Origin.IMPORTED, recorded_at=0.0,
                                  log_name="pending", source=str(LOG)), LOG.read_text())
        fingerprint = median_seconds(lambda: header_fingerprint(model), args.runs)
        lookup = median_seconds(lambda: stored_evidence(str(model), store), args.runs)
        header_mib = sum(h.data_offset for h in read_shards(model)) / 2**20
        print(f"header fingerprint, Llama-3-8B shape ({header_mib:.1f} MiB header): {fingerprint * 1000:.1f} ms median")
        print(f"stored evidence lookup (fingerprint + one {LOG.stat().st_size / 2**20:.2f} MiB log parsed): "
              f"{lookup * 1000:.1f} ms median")


if __name__ == "__main__":
    main()
