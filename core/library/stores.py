"""Where users keep GGUF models: the folders of the tools that download them, and their own.

Rule 1: each store is found from its tool's own setting first (an environment variable, a
        settings file), then the tool's default folders under the user's home; folders that do
        not exist are left out, and a folder named twice (by two rules) is listed once.
Rule 2: Hugging Face: `HF_HUB_CACHE`, else `HF_HOME/hub`, else `~/.cache/huggingface/hub`
        (`XDG_CACHE_HOME` when set). LM Studio: `~/.lmstudio/models`, `~/.cache/lm-studio/models`
        and the `downloadsFolder` of its `settings.json`. Ollama: `OLLAMA_MODELS`, else
        `~/.ollama/models` and the system service's `/usr/share/ollama/.ollama/models`.
        llama.cpp: `LLAMA_CACHE`, else `~/.cache/llama.cpp`. GPT4All and Jan: their default data
        folders on Linux and macOS. Then the folders the user added.
Pure apart from reading the small LM Studio settings file (`core.regular_file`: a regular file of at
most 1 MiB, never a FIFO) and asking which folders exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from gguf_budget.core.vocab import TextEnum
from gguf_budget.core.errors import UnreadableFile
from gguf_budget.core.regular_file import FileKind, read_json


class StoreKind(TextEnum):
    """Which tool's layout a folder follows (it decides how entries are named)."""

    HUGGING_FACE = "huggingface"
    LM_STUDIO = "lmstudio"
    OLLAMA = "ollama"
    LLAMA_CPP = "llama.cpp"
    GPT4ALL = "gpt4all"
    JAN = "jan"
    USER = "folder"


@dataclass(frozen=True)
class StoreRoot:
    kind: StoreKind
    path: Path


def _cache_home(home: Path, env: Mapping[str, str]) -> Path:
    return Path(env["XDG_CACHE_HOME"]) if env.get("XDG_CACHE_HOME") else home / ".cache"


def _hugging_face(home: Path, env: Mapping[str, str]) -> list[Path]:
    if env.get("HF_HUB_CACHE"):
        return [Path(env["HF_HUB_CACHE"])]
    if env.get("HF_HOME"):
        return [Path(env["HF_HOME"]) / "hub"]
    return [_cache_home(home, env) / "huggingface" / "hub"]


def _lm_studio(home: Path, env: Mapping[str, str]) -> list[Path]:
    folders = [home / ".lmstudio" / "models", home / ".cache" / "lm-studio" / "models"]
    for settings in (home / ".lmstudio" / "settings.json", home / ".cache" / "lm-studio" / "settings.json"):
        try:
            data = read_json(settings, FileKind.SETTINGS)
        except UnreadableFile:
            continue
        chosen = data.get("downloadsFolder") if isinstance(data, dict) else None
        if isinstance(chosen, str) and chosen.strip():
            folders.append(Path(chosen).expanduser())
    return folders


def _ollama(home: Path, env: Mapping[str, str]) -> list[Path]:
    if env.get("OLLAMA_MODELS"):
        return [Path(env["OLLAMA_MODELS"])]
    return [home / ".ollama" / "models", Path("/usr/share/ollama/.ollama/models")]


def _llama_cpp(home: Path, env: Mapping[str, str]) -> list[Path]:
    return [Path(env["LLAMA_CACHE"])] if env.get("LLAMA_CACHE") else [_cache_home(home, env) / "llama.cpp"]


def _gpt4all(home: Path, env: Mapping[str, str]) -> list[Path]:
    return [home / ".local" / "share" / "nomic.ai" / "GPT4All",
            home / "Library" / "Application Support" / "nomic.ai" / "GPT4All"]


def _jan(home: Path, env: Mapping[str, str]) -> list[Path]:
    data = [home / ".local" / "share" / "Jan" / "data", home / "Library" / "Application Support" / "Jan" / "data"]
    return [home / "jan" / "models", *(d / "models" for d in data), *(d / "llamacpp" / "models" for d in data)]


_RULES = (
    (StoreKind.HUGGING_FACE, _hugging_face),
    (StoreKind.LM_STUDIO, _lm_studio),
    (StoreKind.OLLAMA, _ollama),
    (StoreKind.LLAMA_CPP, _llama_cpp),
    (StoreKind.GPT4ALL, _gpt4all),
    (StoreKind.JAN, _jan),
)


def _whole_system(real: Path) -> bool:
    """Rule 3: the filesystem's root, /proc or /sys: never a model folder, whoever names it."""
    return real == Path(real.anchor) or real.parts[:2] in (("/", "proc"), ("/", "sys"))


def store_roots(home: Path, env: Mapping[str, str], extra: Sequence[Path] = ()) -> tuple[StoreRoot, ...]:
    """Every existing model folder (Rule 1), tools' stores first, then the user's own."""
    candidates = [StoreRoot(kind, path) for kind, rule in _RULES for path in rule(home, env)]
    candidates += [StoreRoot(StoreKind.USER, Path(p).expanduser()) for p in extra]
    seen: set[Path] = set()
    roots = []
    for root in candidates:
        try:
            real = root.path.resolve()
            exists = root.path.is_dir()
        except OSError:
            continue
        if exists and real not in seen and not _whole_system(real):
            seen.add(real)
            roots.append(root)
    return tuple(roots)
