"""Loopback HTTP servers for remote-header tests: a file server with Range, and its bad cousins.

Every server here listens on 127.0.0.1 only and serves files the test wrote.
"""

from __future__ import annotations

import re
import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from werkzeug import Request, Response

_RANGE = re.compile(r"bytes=(\d+)-(\d*)")


@dataclass
class Served:
    """A file served with or without Range support; counts the body bytes it sent. `etag` False serves
    no ETag and no commit (a plain server), then `last_modified` is the only validator, if any."""

    path: Path
    ranges: bool = True
    commit: str = "0123456789abcdef0123456789abcdef01234567"
    sent: int = 0
    requests: list[str] = field(default_factory=list)
    etag: bool = True
    last_modified: str | None = None

    def handler(self, request: Request) -> Response:
        size = self.path.stat().st_size
        etag = f'"{size:x}-{self._read(0, 64).hex()[:16]}"'
        asked = request.headers.get("Range", "")
        self.requests.append(asked)
        headers = {"Accept-Ranges": "bytes" if self.ranges else "none"}
        if self.etag:
            headers.update({"ETag": etag, "X-Repo-Commit": self.commit})
        if self.last_modified is not None:
            headers["Last-Modified"] = self.last_modified
        match = _RANGE.fullmatch(asked)
        if not self.ranges or match is None:
            data = self.path.read_bytes()
            self.sent += len(data)
            return Response(data, 200, headers=headers)
        start = int(match[1])
        end = min(int(match[2]) if match[2] else size - 1, size - 1)
        if start >= size:
            return Response(b"", 416, headers={**headers, "Content-Range": f"bytes */{size}"})
        body = self._read(start, end + 1 - start)
        self.sent += len(body)
        return Response(body, 206, headers={**headers, "Content-Range": f"bytes {start}-{end}/{size}"})

    def _read(self, start: int, count: int) -> bytes:
        """Only the bytes asked for: a sparse "40 GB" file is served by range without being read whole."""
        with self.path.open("rb") as f:
            f.seek(start)
            return f.read(count)


class DroppingServer:
    """Accepts a connection, reads the request, sends half a response and hangs up — `drops` times,
    then hands every later connection to `after` (or keeps dropping)."""

    def __init__(self, drops: int, after: Callable[[socket.socket, bytes], None] | None = None):
        self.drops, self.after = drops, after
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while self.sock.fileno() != -1:
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                request = conn.recv(65536)
                self.connections += 1
                if self.connections <= self.drops or self.after is None:
                    conn.sendall(b"HTTP/1.1 206 Partial Content\r\nContent-Length: 1000\r\n"
                                 b"Content-Range: bytes 0-999/5000\r\n\r\n" + b"GGUF" + b"\0" * 10)
                else:
                    self.after(conn, request)

    def close(self) -> None:
        self.sock.close()
        self.thread.join(timeout=2)


class RawServer:
    """A loopback server that hands each connection (and the request it read) to `answer`, one thread
    per connection, so a test can send anything: a drip, a malformed head, a body that lies.

    `requests` lists the request heads received; `sent` counts the bytes `send` got onto the wire
    before the client hung up (a client that gives up early leaves it short)."""

    def __init__(self, answer: Callable[[RawServer, socket.socket, bytes], None]):
        self.answer = answer
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.requests: list[bytes] = []
        self.sent = 0
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def url(self, path: str = "/m/model.gguf") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def send(self, conn: socket.socket, data: bytes) -> bool:
        """Send `data`; False once the client has gone."""
        try:
            conn.sendall(data)
        except OSError:
            return False
        with self.lock:
            self.sent += len(data)
        return True

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while self.sock.fileno() != -1:
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(10)
            head = b""
            try:
                while b"\r\n\r\n" not in head and len(head) < 65536:
                    piece = conn.recv(65536)
                    if not piece:
                        return
                    head += piece
            except OSError:
                return
            with self.lock:
                self.requests.append(head)
            try:
                self.answer(self, conn, head)
            except OSError:
                return

    def close(self) -> None:
        self.sock.close()
        self.thread.join(timeout=2)


def asked_range(head: bytes) -> tuple[int, int] | None:
    """The byte range a request head asks for (`Range: bytes=S-E`), or None."""
    match = re.search(rb"\r\nrange: bytes=(\d+)-(\d+)", head, re.IGNORECASE)
    return (int(match[1]), int(match[2])) if match else None
