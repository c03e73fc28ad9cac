"""What `gguf-budget inspect` shows: one dict for JSON and a text view of the same numbers."""

from __future__ import annotations

from typing import Any

from gguf_budget.core.model.spec import LayerKind, ModelSpec
from gguf_budget.core.remote.source import RemoteSource
from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.model_summary import count_text, storage_text
from gguf_budget.core.views.table import aligned_text


def _uniform(values: tuple[int, ...] | None) -> int | list[int] | None:
    """A per-layer fact as one number when every layer agrees, else the list."""
    if values is None:
        return None
    return values[0] if values and len(set(values)) == 1 else list(values)


def inspect_dict(spec: ModelSpec) -> dict[str, Any]:
    g = spec.global_bytes
    return {
        "path": spec.path,
        "shards": list(spec.shards),
        "gguf_version": spec.gguf_version,
        "architecture": spec.architecture,
        "name": spec.name,
        "file_type": spec.file_type_name,
        "file_bytes": spec.file_bytes,
        "complete_file_bytes": spec.complete_file_bytes,
        "tensor_bytes": spec.tensor_bytes,
        "header_only": spec.header_only,
        "incomplete": spec.incomplete,
        "n_tensors": spec.n_tensors,
        "n_params": spec.n_params,
        "n_layer": spec.n_layer,
        "n_embd": spec.n_embd,
        "n_ff": _uniform(spec.n_ff),
        "n_head": _uniform(spec.n_head),
        "n_head_kv": _uniform(spec.n_head_kv),
        "head_dim_k": spec.head_dim_k,
        "head_dim_v": spec.head_dim_v,
        "n_vocab": spec.n_vocab,
        "context_length": spec.context_length,
        "tied_embeddings": spec.tied_embeddings,
        "layer_bytes": list(spec.layer_bytes),
        "global_bytes": {
            "token_embd": g.token_embd,
            "output": g.output,
            "output_norm": g.output_norm,
            "position_embd": g.position_embd,
            "other": g.other,
        },
        "sliding_window": spec.sliding_window,
        "swa_layers": spec.count_layers(LayerKind.SWA),
        "recurrent_layers": spec.count_layers(LayerKind.RECURRENT),
        "expert_count": spec.expert_count,
        "expert_used_count": spec.expert_used_count,
        "unknown": list(spec.unknown),
    }


def _where(spec: ModelSpec, source: RemoteSource | None) -> list[tuple[str, str]]:
    """The file and its size: a local path, or the remote reference and how much of it was read."""
    shards = f"{len(spec.shards)} shard(s), GGUF v{spec.gguf_version}"
    if source is None:
        return [("File", f"{safe_text(spec.path, 200)} ({shards})"),
                ("On disk", f"{human_bytes(spec.file_bytes)} — {storage_text(spec)}")]
    size = source.total_bytes if source.total_bytes is not None else spec.file_bytes
    return [("Source", f"{safe_text(source.ref, 200)} ({shards})"),
            ("File size", f"{human_bytes(size)} (the remote file) — {source.held()}")]


def inspect_text(spec: ModelSpec, source: RemoteSource | None = None) -> str:
    """The facts as text; `source` names a model read over the network by its URL or Hub reference."""
    d = inspect_dict(spec)
    g = spec.global_bytes
    rows = [
        ("Model", safe_text(spec.name or "(unnamed)")),
        ("Architecture", safe_text(spec.architecture)),
        *_where(spec, source),
        ("File type", spec.file_type_name or "unknown"),
        ("Tensors", f"{spec.n_tensors} tensors, {count_text(spec.n_params)} parameters, {human_bytes(spec.tensor_bytes)}"),
        ("Layers", f"{spec.n_layer} blocks, largest {human_bytes(spec.largest_layer_bytes)}"),
        ("Dims", f"n_embd {d['n_embd']}, n_ff {d['n_ff']}, heads {d['n_head']} (kv {d['n_head_kv']}), "
                 f"head dim k/v {d['head_dim_k']}/{d['head_dim_v']}"),
        ("Vocabulary", f"{d['n_vocab']}"),
        ("Context", f"{d['context_length']}"),
        ("Embeddings", f"token_embd {human_bytes(g.token_embd)}; output "
                       + ("tied to token_embd" if spec.tied_embeddings else human_bytes(g.output))),
    ]
    if spec.sliding_window:
        rows.append(("Sliding window", f"{spec.sliding_window} tokens on {d['swa_layers']} of {spec.n_layer} layers"))
    if d["recurrent_layers"]:
        rows.append(("Recurrent", f"{d['recurrent_layers']} layers, state {human_bytes(spec.recurrent_state_bytes)} each"))
    if spec.expert_count:
        rows.append(("Experts", f"{spec.expert_count} routed, {spec.expert_used_count} used per token, "
                                f"{human_bytes(spec.routed_expert_bytes)} of expert weights"))
    if spec.unknown:
        rows.append(("Unknown", ", ".join(spec.unknown) + " (not in the file)"))
    return aligned_text(rows)
