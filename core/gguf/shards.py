"""Split models: `name-00001-of-00003.gguf` … opened from any shard, merged into one view.

Rule 1: a file whose name follows the shard pattern brings all its siblings; each must exist.
Rule 2: every shard's `split.no` / `split.count` must be integers (`Metadata`) that agree with
        its name.
Rule 3: metadata comes from the first shard (llama.cpp writes it there); tensors from all,
        and a tensor name may appear in one shard only.
"""

from __future__ import annotations

import re
from pathlib import Path

from gguf_budget.core.gguf.constants import Keys

from gguf_budget.core.errors import GGUFFormatError, ModelLoadError
from gguf_budget.core.gguf.header import GGUFHeader, read_header
from gguf_budget.core.gguf.metadata import Metadata
from gguf_budget.core.regular_file import is_missing

SHARD_NAME = re.compile(r"^(?P<prefix>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$")
MAX_SHARDS = 9999


def shard_paths(path: str | Path) -> list[Path]:
    """All shard paths of the model `path` belongs to (just `[path]` when not split)."""
    path = Path(path)
    m = SHARD_NAME.match(path.name)
    if not m:
        return [path]
    count = int(m.group("count"))
    if not 1 <= count <= MAX_SHARDS or not 1 <= int(m.group("no")) <= count:
        raise ModelLoadError(f"{path.name}: shard number out of range in its name")
    prefix = m.group("prefix")
    return [path.with_name(f"{prefix}-{i:05d}-of-{count:05d}.gguf") for i in range(1, count + 1)]


def read_shards(path: str | Path) -> list[GGUFHeader]:
    """Read the header of every shard of the model, checked for consistency."""
    paths = shard_paths(path)
    missing = [p.name for p in paths if is_missing(str(p))]
    if len(paths) == 1 and missing:
        raise ModelLoadError(f"no such file: {paths[0]}")
    if missing:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        raise ModelLoadError(f"missing shard {shown} of {len(paths)} (looked in {paths[0].parent})")
    return check_shards([read_header(str(p)) for p in paths])


def check_shards(headers: list[GGUFHeader]) -> list[GGUFHeader]:
    """Rules 2–3: the headers of one model's shards, in order, checked as one model (and returned)."""
    for i, h in enumerate(headers):
        _check_split_keys(h, i, len(headers))
    _check_unique_tensors(headers)
    return headers


def _check_split_keys(h: GGUFHeader, index: int, count: int) -> None:
    meta = Metadata(h)
    file_count = meta.count(Keys.Split.LLM_KV_SPLIT_COUNT)
    file_no = meta.count(Keys.Split.LLM_KV_SPLIT_NO)
    if count == 1 and file_count not in (None, 0, 1):
        raise GGUFFormatError(
            f"says it is shard {file_no or 0} of {file_count} but its name lacks "
            f"the -0000N-of-0000M.gguf pattern, so its siblings cannot be found",
            meta.offsets.get(Keys.Split.LLM_KV_SPLIT_COUNT), h.path)
    if count > 1 and (file_count != count or file_no != index):
        key = Keys.Split.LLM_KV_SPLIT_NO if file_no != index else Keys.Split.LLM_KV_SPLIT_COUNT
        raise GGUFFormatError(f"split keys say shard {file_no} of {file_count}, its name says {index} of {count}",
                              meta.offsets.get(key), h.path)


def _check_unique_tensors(headers: list[GGUFHeader]) -> None:
    seen: dict[str, str] = {}
    for h in headers:
        shard = Path(h.path).name
        for t in h.tensors:
            if t.name in seen:
                raise ModelLoadError(f"tensor {t.name!r} is in both {seen[t.name]} and {shard}")
            seen[t.name] = shard
