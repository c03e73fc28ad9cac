"""Library scan of 1,000 model files: wall time and peak RSS.

The tree is 1,000 copies of the bundled catalogue skeletons (real headers, no weights), half in a
Hugging Face cache layout (snapshot links into blobs) and half in an added folder, so the scan
walks both layouts and reads every header. Run: `python benchmarks/bench_library.py [--files N]`.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

from gguf_budget.core.library.scan import scan
from gguf_budget.core.library.stores import store_roots
from gguf_budget.resources import resource_path


def build_tree(top: Path, n: int) -> Path:
    skeletons = sorted(resource_path("catalogue").glob("*.gguf"))
    home = top / "home"
    hub = home / ".cache" / "huggingface" / "hub"
    mine = top / "mine"
    for i in range(n):
        source = skeletons[i % len(skeletons)]
        if i % 2:
            repo = hub / f"models--owner--repo{i}"
            (repo / "blobs").mkdir(parents=True)
            (repo / "snapshots" / "rev").mkdir(parents=True)
            shutil.copyfile(source, repo / "blobs" / "blob")
            os.symlink("../../blobs/blob", repo / "snapshots" / "rev" / source.name)
        else:
            folder = mine / f"d{i // 50}"
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, folder / f"{i}-{source.name}")
    return home


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        top = Path(scratch)
        home = build_tree(top, args.files)
        roots = store_roots(home, {}, [top / "mine"])
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        result = scan(roots, assess=lambda spec: spec.n_layer)
        took = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        errors = sum(1 for e in result.entries if e.error)
        print(f"library scan: {len(result.entries)} entries ({errors} unreadable) in {took:.2f} s, "
              f"{took / max(len(result.entries), 1) * 1000:.2f} ms per file; peak RSS {peak / 1024:.1f} MiB "
              f"(+{(peak - before) / 1024:.1f} MiB during the scan)")


if __name__ == "__main__":
    main()
