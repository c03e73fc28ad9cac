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
Rule 4: a priced quantization (`RunCommand.priced_type`) is not the file its command names: it is fetched
        from its source's Hub repository as `-hf owner/repo:TYPE` (Ollama: `FROM hf.co/owner/repo:TYPE`)
        when that repository is known — the model was opened from the Hub, or lies in the Hugging Face
        cache (`library.discover.hf_name`) — else there is no command, and `no_command_reason` says why.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import PurePath, PurePosixPath

from gguf_budget.core.errors import RemoteError
from gguf_budget.core.fit.command import RunCommand
from gguf_budget.core.library.discover import hf_name
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


def _remote_ref(path: str) -> RemoteRef | None:
    """Where the file at `path` came from over the network, if it did (a file of the header cache)."""
    source = cached_source(path)
    if source is None:
        return None
    try:
        ref = parse_ref(source.ref, exists=lambda _: False)
    except RemoteError:
        return None
    return ref if isinstance(ref, (PlainUrl, HubFile, HubQuant)) else None


def source_repo(path: str) -> str | None:
    """Rule 4: the Hub repository the file at `path` came from — opened from the Hub, or a file of the Hugging Face
    cache (`…/models--OWNER--REPO/snapshots/REV/FILE`) — else None."""
    ref = _remote_ref(path)
    if isinstance(ref, (HubFile, HubQuant)):
        return ref.repo
    parts = PurePath(path).parts
    starts = [i for i, part in enumerate(parts) if part.startswith("models--")]
    named = hf_name(PurePath(*parts[starts[-1]:])) if starts else None
    return None if named is None else named[0]


def no_command_reason(c: RunCommand) -> str:
    """Rule 4: why a priced quantization has no command (its source's repository is unknown)."""
    return (f"{c.priced_type} is priced, not downloaded, and the repository {PurePath(c.argv[2]).name} came from is "
            f"unknown: download a {c.priced_type} file and open it")


def _priced(c: RunCommand) -> RunCommand | None:
    """Rule 4."""
    repo = source_repo(c.argv[2])
    if repo is None or c.priced_type is None:
        return None
    ref = HubQuant(repo, c.priced_type)
    modelfile, notes = _ollama(c, ref)
    return replace(c, argv=(c.argv[0], *_server_flags(ref), *c.argv[3:]), ollama_modelfile=modelfile,
                   ollama_notes=notes, priced_type=None)


def runnable(c: RunCommand | None) -> RunCommand | None:
    """Rules 1–4: the command as it runs, for a model opened from anywhere; None for a priced quantization whose
    repository is unknown (`no_command_reason`)."""
    if c is None or len(c.argv) < 3 or c.argv[1] != "-m":
        return c
    if c.priced_type is not None:
        return _priced(c)
    ref = _remote_ref(c.argv[2])
    if ref is None:
        return c
    modelfile, notes = _ollama(c, ref)
    return replace(c, argv=(c.argv[0], *_server_flags(ref), *c.argv[3:]), ollama_modelfile=modelfile,
                   ollama_notes=notes)
