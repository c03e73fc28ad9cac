"""How a fit's run command is shown: one dict for JSON, rows for the text, one text per program for the side panel.

Rule 1: the llama-server line is shown exactly as a shell takes it (already quoted), so a
        person can copy it whole; Ollama's equivalents follow, with what Ollama cannot express.
Rule 2: every view shows the command as it runs (`remote_command.runnable`): a model read over
        the network by where it came from, never by the header this tool keeps.
Rule 3: the command is the program's the full load is for (`llama_words.programs.for_program`): llama-cli,
        llama-completion or a llama-cpp-python `Llama(...)` call, with what it cannot say named; the
        llama-server line stays beside it in JSON.
Rule 4: the programs a person may copy a command for are `PROGRAMS`: the four llama.cpp ones and Ollama, whose
        text is the Modelfile (`num_ctx`, `num_gpu`), with `ollama create` and what Ollama cannot say as notes.
Rule 5: a priced quantization whose repository is unknown has no command in any program
        (`remote_command` Rule 4): its text is empty and its one note says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gguf_budget.core.fit.command import RunCommand
from gguf_budget.core.fit.runtime_types import DEFAULT_RUNTIME, Runtime
from gguf_budget.core.fit.types import FitEstimate
from gguf_budget.core.views.remote_command import no_command_reason, runnable

if TYPE_CHECKING:  # the option table and its reader: only when a command is printed for another program
    from gguf_budget.core.llama_words.programs import ProgramCommand

REALISES = {"layers": "the layer split above", "n_cpu_moe": "the MoE expert offload (--n-cpu-moe)"}
OLLAMA = "Ollama"
PROGRAMS = (*(r.value for r in Runtime), OLLAMA)


@dataclass(frozen=True)
class ProgramText:
    """What to run in one program (`text`, what Copy copies; empty when there is none) and its notes."""

    program: str
    text: str
    notes: tuple[str, ...]


def program_text(c: RunCommand, program: str) -> ProgramText:
    """Rules 4–5: the command for `program` (one of `PROGRAMS`)."""
    run = runnable(c)
    if run is None:
        return ProgramText(program, "", (no_command_reason(c),))
    if program == OLLAMA:
        env = tuple(f"Ollama server: {k}={v}" for k, v in run.ollama_env)
        return ProgramText(program, run.ollama_modelfile, (*run.ollama_create.splitlines(), *env, *run.ollama_notes))
    shown = program_command(run, Runtime(program))
    return ProgramText(program, shown.text, (f"{program} takes no: {' '.join(shown.dropped)}",) if shown.dropped else ())


def program_command(c: RunCommand, runtime: Runtime) -> ProgramCommand:
    """Rule 3: what to run for `runtime` (the option table is read only when a command is printed)."""
    from gguf_budget.core.llama_words.programs import for_program

    return for_program((runnable(c) or c).argv, runtime)


def command_dict(c: RunCommand | None, runtime: Runtime = DEFAULT_RUNTIME) -> dict[str, Any] | None:
    c = runnable(c)
    if c is None:
        return None
    program = program_command(c, runtime)
    return {
        "realises": c.realises,
        "llama_server": c.shell,
        "argv": list(c.argv),
        "program": {"runtime": runtime.value, "text": program.text, "not_said": list(program.dropped)},
        "ollama": {"modelfile": c.ollama_modelfile, "env": dict(c.ollama_env), "create": c.ollama_create,
                   "notes": list(c.ollama_notes)},
    }


def command_rows(e: FitEstimate) -> list[tuple[str, str]]:
    c = runnable(e.recommended)
    if c is None:
        return [] if e.recommended is None else [("Command", f"none — {no_command_reason(e.recommended)}")]
    rows = [("Command", f"{c.shell}  (realises {REALISES[c.realises]})")]
    runtime = e.request.engine.runtime
    if runtime is not Runtime.LLAMA_SERVER:
        program = program_command(c, runtime)
        rows += [(str(runtime), line) for line in program.text.splitlines()[:1]]
        rows += [("", line) for line in program.text.splitlines()[1:]]
        rows += [("", f"{runtime} takes no: {' '.join(program.dropped)}")] if program.dropped else []
    rows.append(("Ollama", " · ".join(c.ollama_modelfile.splitlines())))
    rows += [("", f"server: {k}={v}") for k, v in c.ollama_env]
    rows += [("", n) for n in c.ollama_notes]
    if e.claims.header_only:
        rows.append(("", "this file is header-only (no weights): run the command on the complete model it describes"))
    return rows
