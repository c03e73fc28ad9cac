"""The engine's output, read as it comes and kept within a cap: its head and its tail, the middle left out.

llama.cpp prints what evidence is read from in two places: the model load and the buffers at
the start, the timings, the memory breakdown and /usr/bin/time's block at the end. A run that
prints without end (a hostile engine, a runaway verbose log) must neither fill the disk nor the
memory, and must never stall: the pipe is read to its end by a thread of its own.

Rule 1: the first HEAD_BYTES and the last TAIL_BYTES are kept; anything between is dropped and
        replaced by one marker line saying how many bytes were left out (`OMITTED`). The cut is
        made at line ends, so no line is kept in part.
Rule 2: the text is UTF-8 with every byte that is not written as U+FFFD, decoded incrementally
        so a character split between two reads is kept whole.
Rule 3: `fresh()` gives what arrived since the last call (for progress), at most FRESH_BYTES of
        it — the newest — so a flood costs the progress reader nothing either.
"""

from __future__ import annotations

import codecs
import os
import threading

HEAD_BYTES = 8 << 20
TAIL_BYTES = 8 << 20
FRESH_BYTES = 1 << 20
_READ = 1 << 16
OMITTED = "[gguf-budget: {n:,} bytes of llama.cpp's output left out here]"


class OutputCapture(threading.Thread):
    """Reads a pipe's read end `fd` until end of file (Rules 1–3); the thread closes `fd`."""

    def __init__(self, fd: int, head_bytes: int = HEAD_BYTES, tail_bytes: int = TAIL_BYTES):
        super().__init__(daemon=True, name="llama.cpp output")
        self._fd, self._head_cap, self._tail_cap = fd, head_bytes, tail_bytes
        self._lock = threading.Lock()
        self._head = bytearray()
        self._tail = bytearray()
        self._dropped = 0
        self._fresh = bytearray()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def run(self) -> None:
        try:
            while chunk := os.read(self._fd, _READ):
                with self._lock:
                    self._take(chunk)
        except OSError:
            pass
        finally:
            os.close(self._fd)

    def _take(self, chunk: bytes) -> None:
        self._fresh += chunk[-FRESH_BYTES:]
        if len(self._fresh) > FRESH_BYTES:
            del self._fresh[:len(self._fresh) - FRESH_BYTES]
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        self._tail += chunk
        if len(self._tail) > 2 * self._tail_cap:
            cut = len(self._tail) - self._tail_cap
            self._dropped += cut
            del self._tail[:cut]

    def fresh(self) -> str:
        """Rule 3: the text that arrived since the last call."""
        with self._lock:
            data = bytes(self._fresh)
            self._fresh.clear()
        return self._decoder.decode(data)

    def text(self) -> str:
        """Everything kept (Rules 1–2); call after the thread has ended."""
        with self._lock:
            head, tail, dropped = bytes(self._head), bytes(self._tail), self._dropped
        if len(tail) > self._tail_cap:
            dropped += len(tail) - self._tail_cap
            tail = tail[-self._tail_cap:]
        if dropped:
            head_end = head.rfind(b"\n") + 1
            tail_start = tail.find(b"\n") + 1
            dropped += len(head) - head_end + tail_start
            marker = OMITTED.format(n=dropped).encode()
            return (head[:head_end] + marker + b"\n" + tail[tail_start:]).decode("utf-8", errors="replace")
        return (head + tail).decode("utf-8", errors="replace")
