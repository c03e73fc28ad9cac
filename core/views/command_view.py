"""How a fit's run command is shown: one dict for JSON, rows for the text, one block for the side panel.

Rule 1: the llama-server line is shown exactly as a shell takes it (already quoted), so a
        person can copy it whole; Ollama's equivalents follow, with what Ollama cannot express.
Rule 2: every view shows the command as it runs (`remote_command.runnable`): a model read over
        the network by where it came from, never by the header this tool keeps.
"""

from __future__ import annotations

from typing import Any

from gguf_budget.core.fit.command import RunCommand
from gguf_budget.core.fit.types import FitEstimate
from gguf_budget.core.views.remote_command import runnable

REALISES = {"layers": "the layer split above", "n_cpu_moe": "the MoE expert offload (--n-cpu-moe)"}


def command_dict(c: RunCommand | None) -> dict[str, Any] | None:
    c = runnable(c)
    if c is None:
        return None
    return {
        "realises": c.realises,
        "llama_server": c.shell,
        "argv": list(c.argv),
        "ollama": {"modelfile": c.ollama_modelfile, "env": dict(c.ollama_env), "create": c.ollama_create,
                   "notes": list(c.ollama_notes)},
    }


def command_text(c: RunCommand) -> str:
    """The block the side panel shows (its Copy button copies the first line): the command, then Ollama's way."""
    c = runnable(c) or c
    ollama = "\n".join(f"#   {line}" for line in c.ollama_modelfile.splitlines())
    env = "".join(f"\n# Ollama server: {k}={v}" for k, v in c.ollama_env)
    notes = "".join(f"\n# note: {n}" for n in c.ollama_notes)
    return f"{c.shell}\n# Ollama (Modelfile):\n{ollama}{env}{notes}"


def command_rows(e: FitEstimate) -> list[tuple[str, str]]:
    c = runnable(e.recommended)
    if c is None:
        return []
    rows = [("Command", f"{c.shell}  (realises {REALISES[c.realises]})"),
            ("Ollama", " · ".join(c.ollama_modelfile.splitlines()))]
    rows += [("", f"server: {k}={v}") for k, v in c.ollama_env]
    rows += [("", n) for n in c.ollama_notes]
    if e.claims.header_only:
        rows.append(("", "this file is header-only (no weights): run the command on the complete model it describes"))
    return rows
