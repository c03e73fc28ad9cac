"""A model read over the network is run from where it came, not from the header this tool keeps of it.

Rule 1: the header cache holds a remote model's header only (`remote.source` Rule 3), so
        `-m <cache file>` cannot run. The command names the model as llama-server fetches it
        (common/arg.cpp: `-mu/--model-url`, `-hf/--hf-repo owner/repo[:quant]`, `-hfr` with
        `-hff/--hf-file`): a URL as `-mu URL` (credentials left out, as everywhere it is shown),
        `owner/repo:QUANT` as `-hf owner/repo:QUANT`, one Hub file as `-hfr owner/repo -hff
        PATH` — or, at a revision other than main, as `-mu` with its download URL.
Rule 2: Ollama pulls `hf.co/owner/repo:QUANT` itself, so its Modelfile says `FROM
        hf.co/owner/repo:QUANT`; a URL or a single Hub file it cannot pull: `FROM` keeps the
        file's name and a note says to download it first.
Rule 3: nothing else in the command changes; a local model's command is returned as it is.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import PurePosixPath

from gguf_budget.core.errors import RemoteError
from gguf_budget.core.fit.command import RunCommand
from gguf_budget.core.remote.refs import HubFile, HubQuant, PlainUrl, RemoteRef, parse_ref
from gguf_budget.core.remote.source import cached_source


def _server_flags(ref: RemoteRef) -> tuple[str, ...]:
    """Rule 1."""
    if isinstance(ref, HubQuant):
        return ("-hf", ref.describe())
    if isinstance(ref, HubFile) and ref.revision == "main":
        return ("-hfr", ref.repo, "-hff", ref.path)
    if isinstance(ref, HubFile):
        return ("-mu", f"https://huggingface.co/{ref.repo}/resolve/{ref.revision}/{ref.path}")
    return ("-mu", ref.describe())


def _ollama(c: RunCommand, ref: RemoteRef) -> tuple[str, tuple[str, ...]]:
    """Rule 2: the Modelfile and its notes."""
    lines = c.ollama_modelfile.splitlines()
    if isinstance(ref, HubQuant):
        return "\n".join([f"FROM hf.co/{ref.repo}:{ref.quant}", *lines[1:]]) + "\n", c.ollama_notes
    name = PurePosixPath(ref.path).name if isinstance(ref, HubFile) else PurePosixPath(ref.describe()).name
    note = f"Ollama cannot pull {ref.describe()}: download it, then point FROM at the file"
    return "\n".join([f"FROM ./{name}", *lines[1:]]) + "\n", (*c.ollama_notes, note)


def runnable(c: RunCommand | None) -> RunCommand | None:
    """Rules 1–3: the command as it runs, for a model opened from anywhere."""
    if c is None or len(c.argv) < 3 or c.argv[1] != "-m":
        return c
    source = cached_source(c.argv[2])
    if source is None:
        return c
    try:
        ref = parse_ref(source.ref, exists=lambda _: False)
    except RemoteError:
        return c
    if not isinstance(ref, (PlainUrl, HubFile, HubQuant)):
        return c
    modelfile, notes = _ollama(c, ref)
    return replace(c, argv=(c.argv[0], *_server_flags(ref), *c.argv[3:]), ollama_modelfile=modelfile,
                   ollama_notes=notes)
