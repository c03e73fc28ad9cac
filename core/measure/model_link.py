"""The model path llama.cpp is given: the user's own, or a link of a plain name to it.

llama.cpp prints the model's path into the log the evidence is read from (`loaded meta data …
from PATH`, and /usr/bin/time's `Command being timed`). A file name holding a newline could
forge log lines (a `Maximum resident set size` of one byte), and one that is not UTF-8 prints
bytes the log cannot hold.

Rule 1: a path that `safe_text` leaves as it is (no control character, bidi control or byte
        that is not UTF-8) is given to llama.cpp unchanged.
Rule 2: any other is linked from the run's scratch folder under a plain name — `model.gguf`,
        or `model-0000i-of-0000N.gguf` for every shard of a split model, so llama.cpp finds
        the siblings — and llama.cpp is given the link. The stored record keeps the real path.
Rule 3: where a link cannot be made (Windows without the privilege), the measurement is refused
        in one line naming the reason, rather than run on a name that can forge its evidence.
"""

from __future__ import annotations

import os
from pathlib import Path

from gguf_budget.core.errors import UnlinkableModel
from gguf_budget.core.gguf.shards import SHARD_NAME, shard_paths
from gguf_budget.core.safe_text import safe_text

PLAIN_NAME = "model.gguf"


def engine_model_path(model_path: str, folder: Path) -> str:
    """The path to give llama.cpp for `model_path`, linking into `folder` when Rules 2–3 ask."""
    if safe_text(model_path, None) == model_path:
        return model_path
    path = Path(model_path)
    match = SHARD_NAME.match(path.name)
    try:
        if match is None:
            link = folder / PLAIN_NAME
            os.symlink(path.resolve(), link)
            return str(link)
        count, number = int(match["count"]), int(match["no"])
        for i, shard in enumerate(shard_paths(path), 1):
            os.symlink(shard.resolve(), folder / f"model-{i:05d}-of-{count:05d}.gguf")
    except OSError as e:
        raise UnlinkableModel(f"cannot give llama.cpp a plain name for {safe_text(model_path)} (its name holds characters "
                          f"that would forge log lines): {e.strerror or e}") from None
    return str(folder / f"model-{number:05d}-of-{count:05d}.gguf")
