"""The offline model catalogue: header-only skeletons of well-known public models.

Rule 1: every entry is a skeleton (header and tensor directory, no weights) written by
        `packaging/make_catalogue.py` from the model's published `config.json` with the
        tensor types llama.cpp's quantizer picks for the named quantization
        (`src/llama-quant.cpp`); the file says so in `general.name`/`general.description`.
Rule 2: each entry cites one real published GGUF file — its size in bytes and where it is
        published — and carries both in its metadata (`gguf_budget.published_file_bytes`,
        `gguf_budget.published_source`). The skeleton's tensor bytes stay within 1 % of that
        size; the rest of the published file is its header (tokenizer, chat template). A size
        only found rounded says so (`published_rounding`); a file made by an older llama.cpp
        whose rules differ says by how much (`note`).
Rule 3: this table is the single source of truth: the regeneration script writes the files
        from it, the tests check the files against it, the CLI and GUI list it.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from gguf_budget.core.errors import RequestError

CATALOGUE_PACKAGE = "gguf_budget.resources"
CATALOGUE_FOLDER = "catalogue"
SKELETON_LABEL = "skeleton (header only) built from the published config"
PUBLISHED_BYTES_KEY = "gguf_budget.published_file_bytes"
PUBLISHED_SOURCE_KEY = "gguf_budget.published_source"
CONFIG_SOURCE_KEY = "gguf_budget.config_source"


@dataclass(frozen=True, kw_only=True)
class CatalogueEntry:
    """One skeleton: what it models, how it is quantized, and the published file it stands for.

    `published_rounding` is 0 when `published_file_bytes` is the exact byte count; otherwise the
    cited size is a rounded listing (e.g. "16.5 GB") and this is how far it may be off. `note`
    says where the skeleton knowingly differs from the published file.
    """

    name: str
    title: str
    kind: str
    quant: str
    config_repo: str
    published_file_bytes: int
    published_source: str
    published_rounding: int = 0
    note: str = ""

    def __post_init__(self) -> None:
        if not self.name or self.name != self.name.strip().lower() or " " in self.name:
            raise RequestError(f"catalogue name must be lower-case without spaces: {self.name!r}")
        if self.published_file_bytes <= 0:
            raise RequestError(f"{self.name}: published size must be positive")
        if self.published_rounding < 0:
            raise RequestError(f"{self.name}: rounding cannot be negative")

    @property
    def file(self) -> str:
        return f"{self.name}-{self.quant.lower()}.skeleton.gguf"

    @property
    def config_source(self) -> str:
        return f"{self.config_repo} config.json"

    @property
    def published_size_text(self) -> str:
        if self.published_rounding:
            return f"about {self.published_file_bytes} bytes (a rounded listing, ±{self.published_rounding})"
        return f"{self.published_file_bytes} bytes"

    @property
    def description(self) -> str:
        note = f" {self.note}" if self.note else ""
        return (f"{SKELETON_LABEL[0].upper()}{SKELETON_LABEL[1:]} of {self.config_repo} with llama.cpp's "
                f"{self.quant} tensor types; no weights. Stands for the published file "
                f"{self.published_source}, {self.published_size_text}.{note}")


HUB = "(Hub size in bytes as listed in a public model catalogue)"
LFS = "(size from the file's Git LFS pointer on the Hub)"
OLDER_RULES = ("Published with an older llama.cpp whose rules left {tensor} off the attention-V rules; at "
               "the cited llama.cpp revision those tensors get Q6_K on the use_more_bits layers, {delta} "
               "more than the published file.")

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
        published_file_bytes=42_520_398_400,
        published_source="bartowski/Meta-Llama-3.1-70B-Instruct-GGUF commit c90b0dc "
                         f"Meta-Llama-3.1-70B-Instruct-Q4_K_M.gguf (sha256 f775c87029be...) {LFS}",
    ),
    CatalogueEntry(
        name="qwen2.5-3b-instruct", title="Qwen2.5-3B-Instruct", kind="dense (GQA 8:1, q/k/v biases, tied)",
        quant="Q4_K_M", config_repo="Qwen/Qwen2.5-3B-Instruct",
        published_file_bytes=1_929_903_264,
        published_source="bartowski/Qwen2.5-3B-Instruct-GGUF commit 254600e Qwen2.5-3B-Instruct-Q4_K_M.gguf "
                         f"(sha256 9c9f56a391a3...) {LFS}",
    ),
    CatalogueEntry(
        name="qwen3-8b", title="Qwen3-8B", kind="dense", quant="Q4_K_M", config_repo="Qwen/Qwen3-8B",
        published_file_bytes=5_027_783_488,
        published_source=f"Qwen/Qwen3-8B-GGUF Qwen3-8B-Q4_K_M.gguf {HUB}",
    ),
    CatalogueEntry(
        name="qwen3-14b", title="Qwen3-14B", kind="dense", quant="Q4_K_M", config_repo="Qwen/Qwen3-14B",
        published_file_bytes=9_001_752_960,
        published_source=f"Qwen/Qwen3-14B-GGUF Qwen3-14B-Q4_K_M.gguf {HUB}",
    ),
    CatalogueEntry(
        name="qwen3-32b", title="Qwen3-32B", kind="dense (64 layers)", quant="Q4_K_M", config_repo="Qwen/Qwen3-32B",
        published_file_bytes=19_762_149_024,
        published_source=f"Qwen/Qwen3-32B-GGUF @938a7432 Qwen3-32B-Q4_K_M.gguf (sha256 efd971561896...) {HUB}",
    ),
    CatalogueEntry(
        name="qwen3-30b-a3b-instruct-2507", title="Qwen3-30B-A3B-Instruct-2507", kind="MoE (128 experts, 8 used)",
        quant="Q4_K_M", config_repo="Qwen/Qwen3-30B-A3B-Instruct-2507",
        published_file_bytes=18_556_686_752,
        published_source="unsloth/Qwen3-30B-A3B-Instruct-2507-GGUF Qwen3-30B-A3B-Instruct-2507-Q4_K_M.gguf "
                         "(sha256 6c997b8af17d...)",
    ),
    CatalogueEntry(
        name="mistral-small-3.2-24b-instruct-2506", title="Mistral-Small-3.2-24B-Instruct-2506", kind="dense",
        quant="Q4_K_M", config_repo="mistralai/Mistral-Small-3.2-24B-Instruct-2506",
        published_file_bytes=14_333_922_848,
        published_source="unsloth/Mistral-Small-3.2-24B-Instruct-2506-GGUF "
                         f"Mistral-Small-3.2-24B-Instruct-2506-Q4_K_M.gguf {HUB}",
    ),
    CatalogueEntry(
        name="gemma-3-4b-it", title="Gemma-3-4B-it", kind="sliding window (5 local : 1 global, window 1024)",
        quant="Q4_K_M", config_repo="google/gemma-3-4b-it",
        published_file_bytes=2_489_757_856,
        published_source="ggml-org/gemma-3-4b-it-GGUF @d0976223 gemma-3-4b-it-Q4_K_M.gguf "
                         "(sha256 882e8d2db44d...)",
    ),
    CatalogueEntry(
        name="gemma-3-12b-it", title="Gemma-3-12B-it", kind="sliding window (5 local : 1 global, window 1024)",
        quant="Q4_K_M", config_repo="google/gemma-3-12b-it",
        published_file_bytes=7_300_575_264,
        published_source=f"bartowski/google_gemma-3-12b-it-GGUF google_gemma-3-12b-it-Q4_K_M.gguf {HUB}",
    ),
    CatalogueEntry(
        name="gemma-3-27b-it", title="Gemma-3-27B-it", kind="sliding window (5 local : 1 global, window 1024)",
        quant="Q4_K_M", config_repo="google/gemma-3-27b-it",
        published_file_bytes=16_500_000_000, published_rounding=50_000_000,
        published_source="ggml-org/gemma-3-27b-it-GGUF gemma-3-27b-it-Q4_K_M.gguf (the Hub lists \"16.5 GB\"; "
                         "its exact byte count was not found in the sources searched)",
    ),
    CatalogueEntry(
        name="phi-4", title="Phi-4", kind="dense (fused qkv and gate|up)", quant="Q4_K_M",
        config_repo="microsoft/phi-4", published_file_bytes=9_053_114_816,
        published_source=f"bartowski/phi-4-GGUF phi-4-Q4_K_M.gguf {HUB}",
        note=OLDER_RULES.format(tensor="attn_qkv (then Q5_K throughout)", delta="6,144,000 bytes"),
    ),
    CatalogueEntry(
        name="gpt-oss-20b", title="gpt-oss-20b",
        kind="MoE (32 experts, 4 used; MXFP4 experts, attention sinks, sliding window 128 on alternate layers)",
        quant="MXFP4_MOE", config_repo="openai/gpt-oss-20b",
        published_file_bytes=12_109_566_624,
        published_source=f"ggml-org/gpt-oss-20b-GGUF gpt-oss-20b-MXFP4.gguf {HUB}",
    ),
    CatalogueEntry(
        name="deepseek-v2-lite", title="DeepSeek-V2-Lite",
        kind="MoE (64 experts, 6 used, 2 shared) with MLA (kv_lora_rank 512)",
        quant="Q4_K_M", config_repo="deepseek-ai/DeepSeek-V2-Lite",
        published_file_bytes=10_364_416_736,
        published_source=f"mradermacher/DeepSeek-V2-Lite-GGUF DeepSeek-V2-Lite.Q4_K_M.gguf {HUB}",
        note=OLDER_RULES.format(tensor="attn_kv_b (then Q4_K throughout)", delta="7,028,736 bytes"),
    ),
    CatalogueEntry(
        name="granite-4.0-h-tiny", title="Granite-4.0-H-Tiny",
        kind="hybrid (36 Mamba-2 + 4 attention layers) MoE (64 experts, 6 used, shared expert)",
        quant="Q4_K_M", config_repo="ibm-granite/granite-4.0-h-tiny",
        published_file_bytes=4_230_976_352,
        published_source="ibm-granite/granite-4.0-h-tiny-GGUF granite-4.0-h-tiny-Q4_K_M.gguf "
                         f"(sha256 5a38b08c441a...) {HUB}",
    ),
    CatalogueEntry(
        name="lfm2-1.2b", title="LFM2-1.2B", kind="hybrid (10 short-conv + 6 attention layers)",
        quant="Q4_K_M", config_repo="LiquidAI/LFM2-1.2B",
        published_file_bytes=730_893_248,
        published_source="LiquidAI/LFM2-1.2B-GGUF LFM2-1.2B-Q4_K_M.gguf",
    ),
    CatalogueEntry(
        name="llama-4-scout-17b-16e-instruct", title="Llama-4-Scout-17B-16E-Instruct",
        kind="large MoE (109B, 16 experts, 1 used + shared; chunked attention 8192 on 3 of 4 layers)",
        quant="Q3_K_S", config_repo="meta-llama/Llama-4-Scout-17B-16E-Instruct",
        published_file_bytes=46_740_372_480,
        published_source="unsloth/Llama-4-Scout-17B-16E-Instruct-GGUF "
                         f"Llama-4-Scout-17B-16E-Instruct-Q3_K_S.gguf {HUB}",
    ),
)


def catalogue_names() -> tuple[str, ...]:
    return tuple(e.name for e in CATALOGUE)


def find_entry(name: str) -> CatalogueEntry:
    """The entry called `name`; a RequestError naming the valid names otherwise."""
    for entry in CATALOGUE:
        if entry.name == name.strip().lower():
            return entry
    raise RequestError(f"no catalogue model {name!r}; choose one of: {', '.join(catalogue_names())}")


def catalogue_path(entry: CatalogueEntry) -> Path:
    """Where the shipped skeleton lives (resources are installed unzipped)."""
    return Path(str(files(CATALOGUE_PACKAGE) / CATALOGUE_FOLDER / entry.file))
