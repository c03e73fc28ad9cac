"""String arrays the header reader walked before: a library's quantizations share one vocabulary.

Walking a Llama-3 vocabulary and its merges (408k length-prefixed strings) is ~80% of reading
an 8B header (about 27 ms of the 34 here). Every quantization of a model family carries the same
bytes, so the walk of a file after the first one is a byte comparison instead.

Rule 1: an entry is the exact bytes of one walked array of at least `MIN_COUNT` strings, keyed
        by (string count, its first `PREFIX_BYTES` bytes). A later array with the same key is
        skipped only when its bytes equal the entry's — the same bytes walk the same way, so the
        answer (and every check the walk makes) is exactly that of walking them.
Rule 2: memory is bounded: at most `LIMIT_BYTES` of arrays, the one used longest ago dropped
        first; an array larger than the limit is never kept. The memo lives in the process (a
        library scan's worker keeps its own).
"""

from __future__ import annotations

from collections import OrderedDict

MIN_COUNT = 4096
PREFIX_BYTES = 64
LIMIT_BYTES = 32 << 20



def key(count: int, prefix: bytes) -> tuple[int, bytes] | None:
    """Rule 1's key, or None for an array too short to be worth remembering."""
    if count < MIN_COUNT or len(prefix) < PREFIX_BYTES:
        return None
    return count, bytes(prefix[:PREFIX_BYTES])


class SeenArrays:
    """Rule 2's bounded memo: key → the array's bytes, most recently used last."""

    def __init__(self, limit: int = LIMIT_BYTES):
        self._arrays: OrderedDict[tuple[int, bytes], bytes] = OrderedDict()
        self._held = 0
        self._limit = limit

    def recall(self, k: tuple[int, bytes]) -> bytes | None:
        found = self._arrays.get(k)
        if found is not None:
            self._arrays.move_to_end(k)
        return found

    def remember(self, k: tuple[int, bytes], walked: bytes) -> None:
        if len(walked) > self._limit or k in self._arrays:
            return
        self._arrays[k] = walked
        self._held += len(walked)
        while self._held > self._limit:
            _, dropped = self._arrays.popitem(last=False)
            self._held -= len(dropped)

    def clear(self) -> None:
        self._arrays.clear()
        self._held = 0


SEEN = SeenArrays()
"""The process's memo (Rule 2)."""
