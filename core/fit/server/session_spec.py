"""A described llama-server session: what requests arrive, in what order — the one spelling `fit --session` reads.

Rule 1: the spelling is a comma-separated list of groups, run in order. A group is
        `[N x] (P+G[+Ki])[*T]`: N conversations (default 1), one after the other, each of T turns
        (default 1); every turn sends P new prompt tokens (after the conversation so far) and
        generates G; `+Ki` puts K images in the turn's first message (`+i` is one). The
        parentheses may be left out of a lone `P+G`. Counts take `k` (`2k` = 2000).
        `8x(2000+300)` is eight separate requests of 2,000 prompt tokens and 300 generated;
        `4x(500+200)*4` four chats of four turns, the last turn's prompt 2,600 tokens.
Rule 2: turn t of a conversation sends its whole history: every earlier turn's P + G, then
        its own P (a chat client resends the conversation), so its prompt shares that prefix with
        what the slot already holds. Conversations share no prefix with each other.
Rule 3: without `--session` the tool assumes `TYPICAL_CHAT` and says so: four chats of four
        turns, 500 prompt tokens and 200 generated a turn.
Rule 4: a spelling that does not parse, or asks for more than `MAX_REQUESTS` requests, is one
        line (`RequestError`); token counts run from 1 (prompt) or 0 (generated) to `MAX_TOKENS`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gguf_budget.core.errors import RequestError

MAX_REQUESTS = 4096
MAX_TOKENS = 1 << 24
MAX_IMAGES = 64
_COUNT = r"\d{1,9}k?"
_GROUP = re.compile(rf"^\s*(?:(?P<n>{_COUNT})\s*[xX×]\s*)?(?P<open>\()?\s*(?P<p>{_COUNT})\s*\+\s*(?P<g>{_COUNT})"
                    rf"(?:\s*\+\s*(?P<i>\d{{0,3}})\s*(?:i|img|images?))?\s*(?P<close>\))?"
                    rf"(?:\s*\*\s*(?P<t>{_COUNT}))?\s*$")
SPELLING = ("[N x] (PROMPT+GENERATED[+K img])[*TURNS], …: '8x(2000+300)' is 8 separate requests; "
            "'4x(500+200)*4' is 4 chats of 4 turns")


def _count(text: str) -> int:
    return int(text[:-1]) * 1000 if text.endswith("k") else int(text)


@dataclass(frozen=True)
class Turns:
    """One group of Rule 1: `conversations` chats of `turns` turns each, every turn `prompt` new tokens + `generated`."""

    conversations: int
    turns: int
    prompt: int
    generated: int
    images: int = 0

    def __post_init__(self) -> None:
        if not (1 <= self.prompt <= MAX_TOKENS and 0 <= self.generated <= MAX_TOKENS):
            raise RequestError(f"a turn is 1 to {MAX_TOKENS:,} prompt tokens and 0 to {MAX_TOKENS:,} generated")
        if not (1 <= self.conversations and 1 <= self.turns and 0 <= self.images <= MAX_IMAGES):
            raise RequestError(f"a session group has at least one conversation and one turn, at most {MAX_IMAGES} images")

    @property
    def text(self) -> str:
        images = f"+{self.images}img" if self.images else ""
        n = f"{self.conversations}x" if self.conversations > 1 else ""
        t = f"*{self.turns}" if self.turns > 1 else ""
        return f"{n}({self.prompt}+{self.generated}{images}){t}"


@dataclass(frozen=True)
class Request:
    """One request as llama-server sees it (Rule 2): the conversation it continues, its whole prompt, what it adds."""

    conversation: int
    turn: int
    prompt: int
    new: int
    generated: int
    images: int


@dataclass(frozen=True)
class SessionSpec:
    """A whole session: its groups, in order (Rule 1)."""

    groups: tuple[Turns, ...]
    assumed: bool = False

    def __post_init__(self) -> None:
        if not self.groups:
            raise RequestError("a session needs at least one request: " + SPELLING)
        if sum(g.conversations * g.turns for g in self.groups) > MAX_REQUESTS:
            raise RequestError(f"a session is at most {MAX_REQUESTS:,} requests")

    @classmethod
    def parse(cls, text: str) -> SessionSpec:
        """Rule 1's spelling, or one line saying how to spell it (Rule 4)."""
        parts = text.split(",", MAX_REQUESTS)
        if len(parts) > MAX_REQUESTS:
            raise RequestError(f"a session is at most {MAX_REQUESTS:,} requests")
        groups = []
        for part in parts:
            m = _GROUP.match(part)
            if not m or bool(m["open"]) != bool(m["close"]) or m["t"] and not m["open"]:
                raise RequestError(f"a session is {SPELLING}: {part.strip()[:40]!r} is not one")
            images = (int(m["i"]) if m["i"] else 1) if m["i"] is not None else 0
            groups.append(Turns(_count(m["n"] or "1"), _count(m["t"] or "1"), _count(m["p"]), _count(m["g"]), images))
        return cls(tuple(groups))

    @property
    def text(self) -> str:
        return ",".join(g.text for g in self.groups)

    def requests(self) -> tuple[Request, ...]:
        """Rule 2: every request in order, each with its whole prompt."""
        out: list[Request] = []
        conversation = 0
        for g in self.groups:
            for _ in range(g.conversations):
                history = 0
                for turn in range(g.turns):
                    out.append(Request(conversation, turn, history + g.prompt, g.prompt, g.generated,
                                       g.images if turn == 0 else 0))
                    history += g.prompt + g.generated
                conversation += 1
        return tuple(out)


TYPICAL_CHAT = SessionSpec((Turns(4, 4, 500, 200),), assumed=True)
"""Rule 3."""
