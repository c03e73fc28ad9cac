"""The offline model catalogue: header-only skeletons of well-known public models.

Rule 1: every entry is a skeleton (header and tensor directory, no weights) written by
        `packaging/make_catalogue.py` from the model's published `config.json` with the
        tensor types llama.cpp's quantizer picks for the named quantization
        (`src/llama-quant.cpp`); the file says so in `general.name`/`general.description`.
Rule 2: each entry cites one real published GGUF file — its size in bytes and where it is
        published — and carries both in its metadata (`gguf_budget.published_file_bytes`,
        `gguf_budget.published_source`). The skeleton's tensor bytes stay within 1 % of that
        size; the rest of the published file is its header (tokenizer, chat template).
Rule 3: this table is the single source of truth: the regeneration script writes the files
        from it, the tests check the files against it, the CLI and GUI list it.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path


CATALOGUE_PACKAGE = "gguf_budget.resources"
CATALOGUE_FOLDER = "catalogue"
SKELETON_LABEL = "skeleton (header only) built from the published config"
PUBLISHED_BYTES_KEY = "gguf_budget.published_file_bytes"
PUBLISHED_SOURCE_KEY = "gguf_budget.published_source"
CONFIG_SOURCE_KEY = "gguf_budget.config_source"


@dataclass(frozen=True)
class CatalogueEntry:
    """One skeleton: what it models, how it is quantized, and the published file it stands for."""

    name: str
    title: str
    kind: str
    quant: str
    config_repo: str
    published_file_bytes: int
    published_source: str

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.strip().lower() or " " in self.name:
            raise ValueError(f"catalogue name must be lower-case without spaces: {self.name!r}")
        if self.published_file_bytes <= 0:
            raise ValueError(f"{self.name}: published size must be positive")

    @property
    def file(self) -> str:
        return f"{self.name}-{self.quant.lower()}.skeleton.gguf"

    @property
    def config_source(self) -> str:
        return f"{self.config_repo} config.json"

    @property
    def description(self) -> str:
        return (f"{SKELETON_LABEL[0].upper()}{SKELETON_LABEL[1:]} of {self.config_repo} with llama.cpp's "
                f"{self.quant} tensor types; no weights. Stands for the published file "
                f"{self.published_source}, {self.published_file_bytes} bytes.")


CATALOGUE: tuple[CatalogueEntry, ...] = (
    CatalogueEntry(
        name="llama-3.2-1b-instruct", title="Llama-3.2-1B-Instruct", kind="dense (~1B, tied embeddings)",
        quant="Q4_K_M", config_repo="meta-llama/Llama-3.2-1B-Instruct",
        published_file_bytes=807_694_464,
        published_source="bartowski/Llama-3.2-1B-Instruct-GGUF @067b946c Llama-3.2-1B-Instruct-Q4_K_M.gguf "
                         "(sha256 6f85a640a97c...)",
    ),
    CatalogueEntry(
        name="llama-3.1-8b-instruct", title="Llama-3.1-8B-Instruct", kind="dense",
        quant="Q4_K_M", config_repo="meta-llama/Llama-3.1-8B-Instruct",
        published_file_bytes=4_920_739_232,
        published_source="bartowski/Meta-Llama-3.1-8B-Instruct-GGUF @bf5b95e9 "
                         "Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf (sha256 7b064f5842bf...)",
    ),
    CatalogueEntry(
        name="llama-3.1-70b-instruct", title="Llama-3.1-70B-Instruct", kind="dense (80 layers)",
        quant="Q4_K_M", config_repo="meta-llama/Llama-3.1-70B-Instruct",
        published_file_bytes=42_520_000_000,
        published_source="bartowski/Meta-Llama-3.1-70B-Instruct-GGUF Meta-Llama-3.1-70B-Instruct-Q4_K_M.gguf "
                         "(model card: 42.52GB, rounded to 10 MB)",
    ),
    CatalogueEntry(
        name="qwen3-30b-a3b-instruct-2507", title="Qwen3-30B-A3B-Instruct-2507", kind="MoE (128 experts, 8 used)",
        quant="Q4_K_M", config_repo="Qwen/Qwen3-30B-A3B-Instruct-2507",
        published_file_bytes=18_556_686_752,
        published_source="unsloth/Qwen3-30B-A3B-Instruct-2507-GGUF Qwen3-30B-A3B-Instruct-2507-Q4_K_M.gguf "
                         "(sha256 6c997b8af17d...)",
    ),
    CatalogueEntry(
        name="gemma-3-4b-it", title="Gemma-3-4B-it", kind="sliding window (5 local : 1 global, window 1024)",
        quant="Q4_K_M", config_repo="google/gemma-3-4b-it",
        published_file_bytes=2_489_757_856,
        published_source="ggml-org/gemma-3-4b-it-GGUF @d0976223 gemma-3-4b-it-Q4_K_M.gguf "
                         "(sha256 882e8d2db44d...)",
    ),
    CatalogueEntry(
        name="lfm2-1.2b", title="LFM2-1.2B", kind="hybrid (10 short-conv + 6 attention layers)",
        quant="Q4_K_M", config_repo="LiquidAI/LFM2-1.2B",
        published_file_bytes=730_893_248,
        published_source="LiquidAI/LFM2-1.2B-GGUF LFM2-1.2B-Q4_K_M.gguf",
    ),
)


def catalogue_names() -> tuple[str, ...]:
    return tuple(e.name for e in CATALOGUE)


def find_entry(name: str) -> CatalogueEntry:
    """The entry called `name`; a ValueError naming the valid names otherwise."""
    for entry in CATALOGUE:
        if entry.name == name.strip().lower():
            return entry
    raise ValueError(f"no catalogue model {name!r}; choose one of: {', '.join(catalogue_names())}")


def catalogue_path(entry: CatalogueEntry) -> Path:
    """Where the shipped skeleton lives (resources are installed unzipped)."""
    return Path(str(files(CATALOGUE_PACKAGE) / CATALOGUE_FOLDER / entry.file))
