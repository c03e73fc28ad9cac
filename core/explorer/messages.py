"""What the window has told the person: the last messages, kept until read (issue 36, item 5).

Rule 1: a message stays on screen until the next one replaces it — never a tip that vanishes after a few
        seconds — and the last HISTORY messages stay listed, newest first, each with the time it came and
        its kind, so a refusal, an offline error or "measuring…" can be read after it has been replaced.
Rule 2: a message is one line: control characters escaped and long text cut (`safe_text`), as everywhere
        untrusted text is shown.
Rule 3: a message repeated at once is one entry (its time is the latest), so a storm of the same refusal
        does not push the rest out of the history.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from gguf_budget.core.safe_text import safe_text
from gguf_budget.core.vocab import TextEnum

HISTORY = 20
LONGEST = 400


class MessageKind(TextEnum):
    """How a message is drawn: news, work under way, or something refused or failed."""

    INFO = "info"
    BUSY = "busy"
    PROBLEM = "problem"


@dataclass(frozen=True)
class Message:
    """One line the window said, and when (seconds since the epoch)."""

    text: str
    kind: MessageKind
    at: float

    def stamped(self) -> str:
        """The line as the history lists it: its local time, then the text."""
        return f"{time.strftime('%H:%M:%S', time.localtime(self.at))}  {self.text}"


@dataclass(frozen=True)
class MessageLog:
    """Rules 1–3: the messages, newest first."""

    messages: tuple[Message, ...] = ()

    @property
    def latest(self) -> Message | None:
        return self.messages[0] if self.messages else None

    def said(self, text: str, kind: MessageKind = MessageKind.INFO, at: float | None = None) -> MessageLog:
        """This log with `text` as its newest message."""
        message = Message(safe_text(text, LONGEST), kind, time.time() if at is None else at)
        rest = self.messages[1:] if self.latest is not None and self.latest.text == message.text else self.messages
        return MessageLog((message, *rest)[:HISTORY])
