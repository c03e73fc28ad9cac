"""How each store names its models — pure functions over paths and manifest text.

Rule 1: Hugging Face hub cache: `models--OWNER--REPO/snapshots/REV/PATH` is "OWNER/REPO" and PATH
        (the snapshot file is a symbolic link to `blobs/…`; the scanner resolves it).
Rule 2: Ollama: a manifest at `manifests/REGISTRY/NAMESPACE/MODEL/TAG` is "MODEL:TAG" for the
        default registry's `library` namespace, "NAMESPACE/MODEL:TAG" for others of that registry,
        else "REGISTRY/NAMESPACE/MODEL:TAG"; its layer of media type
        `application/vnd.ollama.image.model` is the GGUF blob `blobs/sha256-HEX`.
Rule 3: a split model (`NAME-00001-of-0000N.gguf`) is one entry, opened from its first shard;
        the other shards are not listed again.
Rule 4: everything else is named by its file name.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePath

from gguf_budget.core.gguf.shards import SHARD_NAME

OLLAMA_MODEL_MEDIA_TYPE = "application/vnd.ollama.image.model"
OLLAMA_DEFAULT_REGISTRY = "registry.ollama.ai"
_DIGEST = re.compile(r"^sha256:([0-9a-f]{64})$")


def hf_name(relative: PurePath) -> tuple[str, str] | None:
    """Rule 1: ("OWNER/REPO", "PATH") for a path relative to the hub cache, or None if not a snapshot file."""
    parts = relative.parts
    if len(parts) < 4 or not parts[0].startswith("models--") or parts[1] != "snapshots":
        return None
    owner_repo = parts[0][len("models--"):].split("--", 1)
    if len(owner_repo) != 2:
        return None
    return "/".join(owner_repo), "/".join(parts[3:])


def ollama_name(relative: PurePath) -> str | None:
    """Rule 2: the model:tag a manifest path (relative to `manifests/`) stands for."""
    parts = relative.parts
    if len(parts) != 4:
        return None
    registry, namespace, model, tag = parts
    if registry == OLLAMA_DEFAULT_REGISTRY:
        return f"{model}:{tag}" if namespace == "library" else f"{namespace}/{model}:{tag}"
    return f"{registry}/{namespace}/{model}:{tag}"


def ollama_model_blob(manifest_text: str) -> str | None:
    """Rule 2: the blob file name (`sha256-HEX`) of the manifest's GGUF layer, or None."""
    try:
        manifest = json.loads(manifest_text)
        layers = manifest.get("layers", [])
    except (ValueError, AttributeError, RecursionError):  # RecursionError: nested deeper than json can follow
        return None
    for layer in layers if isinstance(layers, list) else []:
        if isinstance(layer, dict) and layer.get("mediaType") == OLLAMA_MODEL_MEDIA_TYPE:
            match = _DIGEST.match(str(layer.get("digest", "")))
            return f"sha256-{match[1]}" if match else None
    return None


def shard_role(name: str) -> tuple[int, int] | None:
    """Rule 3: (shard number, count) for a shard's file name, else None."""
    match = SHARD_NAME.match(name)
    return (int(match["no"]), int(match["count"])) if match else None


def is_listed(name: str) -> bool:
    """Rule 3: a GGUF file that gets its own entry (not a second or later shard)."""
    if not name.lower().endswith(".gguf"):
        return False
    role = shard_role(name)
    return role is None or role[0] == 1
