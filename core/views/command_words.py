"""The first word of a command line that is neither a command nor a model (issue 36, item 6).

Rule 1: `gguf-budget WORD …` opens the window on WORD unless WORD is a command; a WORD that is no file here,
        no remote model (`remote.refs.names_remote`) and does not name a `.gguf` is a mistyped command, and
        the line names it and the nearest command (`difflib`, as Python's own argparse suggests), or lists
        the commands when none is near — never "unrecognized arguments" about the words after it.
"""

from __future__ import annotations

import difflib
import os
from typing import Callable, Sequence

from gguf_budget.core.remote.refs import names_remote
from gguf_budget.core.safe_text import safe_text


def unknown_command(word: str, commands: Sequence[str], exists: Callable[[str], bool] = os.path.exists) -> str | None:
    """Rule 1: the one line for a mistyped command, or None when `word` may be the window's model."""
    if exists(word) or word.lower().endswith(".gguf") or word.startswith("-") or names_remote(word, exists):
        return None
    near = difflib.get_close_matches(word, commands, n=1)
    hint = f"did you mean '{near[0]}'?" if near else f"the commands are {', '.join(commands)}"
    return f"gguf-budget: unknown command '{safe_text(word, 60)}' and no such model file: {hint}"
