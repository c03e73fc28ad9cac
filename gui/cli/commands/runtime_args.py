"""`--runtime`: which llama.cpp program the peak-RSS band is for (`fit`), one definition for every command.

The program changes what llama.cpp reserves and holds (output rows, context checkpoints, its own
process); the numbers are the core's (`core.fit.runtime_memory`), this module only names the flag.
"""

from __future__ import annotations

import argparse

from gguf_budget.core.fit.runtime_types import DEFAULT_RUNTIME, Runtime

RUNTIME_HELP = (f"the llama.cpp program the peak RSS band is for: {', '.join(r.value for r in Runtime)} "
                f"(default {DEFAULT_RUNTIME}; llama-cli runs llama-server's engine in-process)")


def add_runtime_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runtime", choices=[r.value for r in Runtime], help=RUNTIME_HELP)


def runtime_from(args: argparse.Namespace) -> Runtime:
    """The program asked for; a llama.cpp command's own program when only it names one; else llama-server."""
    return Runtime(args.runtime) if args.runtime is not None else DEFAULT_RUNTIME


def asked_runtime(args: argparse.Namespace) -> Runtime | None:
    """`--runtime` only when given (a llama.cpp command's program stands otherwise)."""
    return Runtime(args.runtime) if args.runtime is not None else None
