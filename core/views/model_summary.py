"""What the window's model summary says about a file, each untrusted string escaped and truncated.

A model read over the network is named by its URL or Hub reference, sized by the remote file, and
said to be held as a header only (`core.remote.source` Rules 1–2).
"""

from __future__ import annotations

from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.remote.source import RemoteSource
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.units import human_bytes

SUMMARY_FIELDS = ("Name", "Source", "Architecture", "Parameters", "File type", "File size", "Storage", "Layers",
                  "Context", "Embeddings")
SOURCE_LIMIT = 200
NAME_LIMIT = 60
_COUNT_UNITS = (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3))


def count_text(n: int) -> str:
    """1_100_048_384 → '1.10 B' (parameter counts are decimal, as model cards print them)."""
    for unit, scale in _COUNT_UNITS:
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return str(n)


def storage_text(spec: ModelSpec) -> str:
    """Complete, a header-only skeleton, or a file that stops inside its data (a partial download?)."""
    complete = human_bytes(spec.complete_file_bytes)
    if spec.incomplete:
        return (f"incomplete file? it stops inside its tensor data, {human_bytes(spec.file_bytes)} of {complete} "
                f"(a partial download?); sizes are those of the complete file")
    if spec.header_only:
        return f"header only (tensor data absent; the complete file is {complete})"
    return "complete"


def _storage(spec: ModelSpec) -> str:
    if spec.incomplete:
        return storage_text(spec)  # says "incomplete file?" as inspect does
    if spec.header_only:
        return f"header only — the complete file is {human_bytes(spec.complete_file_bytes)}"
    return "complete file"


def summary_rows(spec: ModelSpec, source: RemoteSource | None = None) -> dict[str, str]:
    """One line per `SUMMARY_FIELDS` entry, in that order; `source` when the model was read over the network."""
    shards = f", {len(spec.shards)} shards" if len(spec.shards) > 1 else ""
    remote_size = source.total_bytes if source is not None and source.total_bytes is not None else spec.file_bytes
    return {
        "Name": safe_text(spec.name or "(unnamed)", NAME_LIMIT),
        "Source": "local file" if source is None else safe_text(source.ref, SOURCE_LIMIT),
        "Architecture": safe_text(spec.architecture, NAME_LIMIT),
        "Parameters": count_text(spec.n_params),
        "File type": safe_text(spec.file_type_name or "unknown", NAME_LIMIT),
        "File size": (f"{human_bytes(spec.file_bytes)} on disk{shards}" if source is None
                      else f"{human_bytes(remote_size)} (the remote file{shards})"),
        "Storage": _storage(spec) if source is None else source.held(),
        "Layers": f"{spec.n_layer} blocks, largest {human_bytes(spec.largest_layer_bytes)}",
        "Context": "unknown" if spec.context_length is None else f"{spec.context_length:,} tokens",
        "Embeddings": "tied (the head reuses token_embd)" if spec.tied_embeddings else "separate output table",
    }
