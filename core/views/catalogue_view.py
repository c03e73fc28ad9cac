"""What the CLI and the Catalogue menu say about the bundled skeletons: JSON, text, menu labels."""

from __future__ import annotations

from typing import Any

from gguf_budget.core.model.catalogue import CATALOGUE, SKELETON_LABEL, CatalogueEntry
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.table import aligned_text


def entry_dict(entry: CatalogueEntry) -> dict[str, Any]:
    """What the CLI's JSON says about an entry."""
    return {
        "name": entry.name,
        "title": entry.title,
        "kind": entry.kind,
        "quant": entry.quant,
        "file": entry.file,
        "label": SKELETON_LABEL,
        "config_source": entry.config_source,
        "published_file_bytes": entry.published_file_bytes,
        "published_source": entry.published_source,
        "published_rounding": entry.published_rounding,
        "note": entry.note,
    }


def catalogue_text() -> str:
    """One line per entry: the name to pass to `--catalog`, what it is, the published size."""
    rows = [(e.name, f"{e.title} {e.quant}, {e.kind}; published file {human_bytes(e.published_file_bytes)}")
            for e in CATALOGUE]
    return "\n".join([aligned_text(rows), f"(each a {SKELETON_LABEL}; no weights)"])


def entry_text(entry: CatalogueEntry) -> str:
    """The lines `inspect --catalog` adds under the model's facts."""
    return aligned_text([
        ("Catalogue", f"{entry.name}: {SKELETON_LABEL}: {entry.config_source}"),
        ("Published", f"{human_bytes(entry.published_file_bytes)} ({entry.published_size_text}): "
                      f"{entry.published_source}"),
        *([("Note", entry.note)] if entry.note else []),
    ])


def entry_label(entry: CatalogueEntry) -> str:
    """The Catalogue menu's action text."""
    return f"{entry.title} {entry.quant} — {entry.kind} (skeleton)"


def entry_tooltip(entry: CatalogueEntry) -> str:
    """The Catalogue menu's tooltip: the full label and the published file the skeleton stands for."""
    return (f"{SKELETON_LABEL}: {entry.config_source}, llama.cpp {entry.quant} tensor types; no weights.\n"
            f"Stands for {entry.published_source}, {human_bytes(entry.published_file_bytes)}.")
