"""llama.cpp's own options on the command line: spelled as llama.cpp spells them, after `--`, or a whole command.

Rule 1: every priced llama.cpp option (`core.llama_words.options`) is an option of the commands that
        price a full load, under every llama.cpp spelling this tool does not already use for the same
        thing (`-ts`, `-np`, `--cache-ram`… are one option); the values are kept as typed and read by
        the core's one reader (`llama_words.reader`), never by argparse.
Rule 2: `COMMAND [options] MODEL -- LLAMA_ARGS…` reads everything after the first `--` as the program's
        own arguments (llama-server's, or `--runtime`'s program); `--command "llama-server -m M …"` reads a
        whole command, quoted as a shell quotes it; the model may come from its `-m`, `-mu` or `-hf`.
        Order: the --command, then what follows `--`, then the options given directly; a later value
        of one option wins, as in llama.cpp.
Rule 3: the reader is imported only when a command is given (`common` Rule 4): the options' table
        defines the arguments, the reader reads them.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from gguf_budget.core.errors import CommandError
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.llama_words.options import OPTIONS, Effect, Program

from gguf_budget.gui.cli.args import LLAMA_TAIL
from gguf_budget.gui.cli.commands.common import chosen_model, load_with_source

if TYPE_CHECKING:
    from gguf_budget.core.llama_words.reader import LlamaCommand

MODEL_SOURCES = frozenset({"model", "model_url", "hf_repo", "hf_file"})
LLAMA_ARGV = "llama_argv"
COMMAND_LINE = "llama_command_line"


class _Collect(argparse.Action):
    """Keep the option as llama.cpp would see it: its spelling, then its value (Rule 1)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        argv = list(getattr(namespace, LLAMA_ARGV, None) or [])
        argv.append(option_string or self.option_strings[0])
        argv += [values] if isinstance(values, str) else list(values or [])
        setattr(namespace, LLAMA_ARGV, argv)


def add_llama_arguments(p: argparse.ArgumentParser) -> None:
    """Rule 1, and `--command` (Rule 2)."""
    taken = set(p._option_string_actions)
    g = p.add_argument_group("llama.cpp options", "llama.cpp 0c1e570's own options that change memory, placement or "
                             "speed, as it spells them, with its defaults; or a whole command: after --, or --command")
    g.add_argument("--command", dest=COMMAND_LINE, metavar='"llama-server -m MODEL …"',
                   help="a whole llama.cpp command line as the question (llama-server, llama-cli or llama-completion)")
    p.set_defaults(**{LLAMA_ARGV: [], LLAMA_TAIL: []})
    for option in OPTIONS:
        if option.effect is not Effect.PRICED or option.detail in MODEL_SOURCES:
            continue
        for spellings, nargs in ((option.spellings, option.values), (option.negatives, 0)):
            free = [s for s in spellings if s not in taken]
            if not free:
                continue
            kind = "turns off" if nargs == 0 and spellings is option.negatives else "llama.cpp's"
            g.add_argument(*free, action=_Collect, nargs=nargs or 0, dest=f"llama_{option.detail}",
                           metavar="VALUE" if nargs else None, default=argparse.SUPPRESS,
                           help=f"{kind} {option.name}")
            taken.update(free)


def llama_command(args: argparse.Namespace, program: Program | None = None) -> LlamaCommand | None:
    """The llama.cpp command the arguments ask about (Rule 2); None when they give none."""
    command = getattr(args, COMMAND_LINE, None)
    tail, direct = list(getattr(args, LLAMA_TAIL, [])), list(getattr(args, LLAMA_ARGV, []))
    if command is None and not (tail or direct):
        return None
    from gguf_budget.core.llama_words.reader import read_llama_args, split_command  # Rule 3

    head = split_command(command) if command else []
    if command is not None and not head:
        raise CommandError("--command is empty: give a llama.cpp command line, such as \"llama-server -m MODEL -c 8192\"")
    if not (head or tail or direct):
        return None
    first = read_llama_args(head, program) if head else None
    named = first.program if first is not None else program
    own = head[1:] if first is not None and first.program is not None else head
    words = [*own, *tail, *direct]
    return read_llama_args(words, named)


def model_for(args: argparse.Namespace, command: LlamaCommand | None) -> ModelSpec:
    """FILE or --catalog as every model command reads them; else the model the llama.cpp command names (Rule 2)."""
    source = command.model_source if command is not None else None
    if args.file is None and args.catalog is None and source is not None:
        return load_with_source(source)[0]
    if source is not None and command is not None and command.settings.model is not None and args.file is not None:
        raise CommandError(f"two models: {args.file} and the command's -m {command.settings.model}; give one")
    return chosen_model(args).spec
