"""What the window's model summary says about a file, each untrusted string escaped and truncated."""

from __future__ import annotations

from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.units import human_bytes

SUMMARY_FIELDS = ("Name", "Architecture", "Parameters", "File type", "File size", "Storage", "Layers",
                  "Context", "Embeddings")
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


def summary_rows(spec: ModelSpec) -> dict[str, str]:
    """One line per `SUMMARY_FIELDS` entry, in that order."""
    shards = f", {len(spec.shards)} shards" if len(spec.shards) > 1 else ""
    return {
        "Name": safe_text(spec.name or "(unnamed)", NAME_LIMIT),
        "Architecture": safe_text(spec.architecture, NAME_LIMIT),
        "Parameters": count_text(spec.n_params),
        "File type": safe_text(spec.file_type_name or "unknown", NAME_LIMIT),
        "File size": f"{human_bytes(spec.file_bytes)} on disk{shards}",
        "Storage": _storage(spec),
        "Layers": f"{spec.n_layer} blocks, largest {human_bytes(spec.largest_layer_bytes)}",
        "Context": "unknown" if spec.context_length is None else f"{spec.context_length:,} tokens",
        "Embeddings": "tied (the head reuses token_embd)" if spec.tied_embeddings else "separate output table",
    }
