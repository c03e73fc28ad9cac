"""Published llama.cpp speed rows (benchmarks/data/llamacpp_published.csv) as the speed model sees them.

A row is one llama-bench figure on one device: its preset (bandwidth, compute, backend), its model
shape and file type, the test (ppN: prefill of N tokens; tgN: decode of N tokens from an empty
cache) and tokens/s, with the source it was read from. `decode_row` / `prefill_row` turn a row
into the x and t `core.speed.backend_speed` fits on; `estimate` gives the model's tokens/s.

The model shapes the rows ran, written as header-only GGUFs and typed as llama-quantize types them:

Each shape is the model's architecture (blocks, widths, heads, vocabulary) in the tests' factory
(`gguf_factory.ArchDesc`), written at F16 and then given the tensor types `llama-quantize` picks for
the row's file type (`core.quant.mix.quant_mix`, no imatrix) — so a row's bytes per token and
prompt FLOPs come from the same `TokenPrices` every estimate uses. `size_check` prints each shape's
tensor bytes beside the size llama-bench printed for the real file, where a row gave it.
"""

from __future__ import annotations

import csv
import functools
import re
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from gguf.constants import GGMLQuantizationType as T
from gguf_factory import ArchDesc, write_gguf

from gguf_budget.core.machine.backend import Backend, parse_backend
from gguf_budget.core.machine.presets import Preset, find_preset
from gguf_budget.core.model.kv import KVType, kv_price
from gguf_budget.core.model.loader import load_model
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.quant.file_types import find_file_type
from gguf_budget.core.quant.mix import quant_mix
from gguf_budget.core.speed.backend_speed import DecodeRow, Fitted, PrefillRow, apple_core_flops
from gguf_budget.core.speed.token_bytes import TokenPrices

ROWS = Path(__file__).resolve().parent.parent / "benchmarks" / "data" / "llamacpp_published.csv"

SHAPES: dict[str, ArchDesc] = {
    "llama2-7b": ArchDesc(name="Llama-2-7B-shaped", n_layer=32, n_embd=4096, n_ff=11008, n_head=32, n_head_kv=32,
                          n_vocab=32000, context_length=4096),
    "llama2-13b": ArchDesc(name="Llama-2-13B-shaped", n_layer=40, n_embd=5120, n_ff=13824, n_head=40, n_head_kv=40,
                           n_vocab=32000, context_length=4096),
    "llama3-8b": ArchDesc(name="Llama-3-8B-shaped", n_layer=32, n_embd=4096, n_ff=14336, n_head=32, n_head_kv=8,
                          n_vocab=128256, context_length=8192),
    "llama3.2-3b": ArchDesc(name="Llama-3.2-3B-shaped", n_layer=28, n_embd=3072, n_ff=8192, n_head=24, n_head_kv=8,
                            n_vocab=128256, context_length=131072, tied=True),
    "llama3-70b": ArchDesc(name="Llama-3-70B-shaped", n_layer=80, n_embd=8192, n_ff=28672, n_head=64, n_head_kv=8,
                           n_vocab=128256, context_length=8192),
    "qwen2.5-7b": ArchDesc(arch="qwen2", name="Qwen2.5-7B-shaped", n_layer=28, n_embd=3584, n_ff=18944, n_head=28,
                           n_head_kv=4, n_vocab=152064, context_length=32768, attn_bias=("attn_q", "attn_k", "attn_v")),
    "qwen2.5-14b": ArchDesc(arch="qwen2", name="Qwen2.5-14B-shaped", n_layer=48, n_embd=5120, n_ff=13824, n_head=40,
                            n_head_kv=8, n_vocab=152064, context_length=32768, attn_bias=("attn_q", "attn_k", "attn_v")),
    "gemma2-2b": ArchDesc(arch="gemma2", name="Gemma-2-2B-shaped", n_layer=26, n_embd=2304, n_ff=9216, n_head=8,
                          n_head_kv=4, head_dim=256, n_vocab=256000, context_length=8192, sliding_window=4096, tied=True,
                          post_norms=True),
    "qwen3-4b": ArchDesc(arch="qwen3", name="Qwen3-4B-shaped", n_layer=36, n_embd=2560, n_ff=9728, n_head=32, n_head_kv=8,
                         head_dim=128, n_vocab=151936, context_length=40960, tied=True, qk_norm=True),
    "gemma3-12b": ArchDesc(arch="gemma3", name="Gemma-3-12B-shaped", n_layer=48, n_embd=3840, n_ff=15360, n_head=16,
                           n_head_kv=8, head_dim=256, n_vocab=262144, context_length=131072, sliding_window=1024,
                           tied=True, qk_norm=True, post_norms=True),
}


@functools.lru_cache(maxsize=None)
def shape(name: str, file_type: str) -> ModelSpec:
    """The shape `name` with the tensor types llama-quantize gives `file_type` (F16 as written)."""
    desc = replace(SHAPES[name], weight_type=T.F16, file_type=1)
    with tempfile.TemporaryDirectory() as tmp:
        f16 = load_model(write_gguf(Path(tmp) / "f16.gguf", desc, "header_only")[0])
        if file_type == "F16":
            return f16
        mix = quant_mix(f16, find_file_type(file_type), imatrix=False)
        typed = replace(desc, file_type=int(find_file_type(file_type).llama_ftype),
                        tensor_types={t.name: t.ggml_type for t in mix.tensors})
        return load_model(write_gguf(Path(tmp) / "typed.gguf", typed, "header_only")[0])


@dataclass(frozen=True, kw_only=True)
class Published:
    """One row of the CSV."""

    device: str
    backend: Backend
    model: str
    quant: str
    test: str
    tok_s: float
    source: str
    build: str
    note: str

    @property
    def preset(self) -> Preset:
        return find_preset(self.device)

    @property
    def decode(self) -> bool:
        return self.test.startswith("tg")

    @property
    def tokens(self) -> int:
        return int(re.sub(r"\D", "", self.test))

    @property
    def prices(self) -> TokenPrices:
        return prices(self.model, self.quant)


@functools.lru_cache(maxsize=None)
def prices(model: str, quant: str) -> TokenPrices:
    return TokenPrices.of(shape(model, quant))


def read_rows(path: Path = ROWS) -> list[Published]:
    with open(path, newline="", encoding="utf-8") as f:
        return [Published(device=r["device"], backend=parse_backend(r["backend"]), model=r["model"], quant=r["quant"],
                          test=r["test"], tok_s=float(r["tok_s"]), source=r["source"], build=r["build"], note=r["note"])
                for r in csv.DictReader(f)]


@functools.lru_cache(maxsize=None)
def decode_bytes(row: Published) -> int:
    """What a token of a tgN run reads on average: every weight and the KV of N/2 cached tokens (an empty cache at
    the start, as llama-bench runs it)."""
    model = shape(row.model, row.quant)
    return TokenPrices.of(model).read_per_token(kv_price(model, KVType.F16).at(row.tokens // 2))


@functools.lru_cache(maxsize=None)
def decode_row(row: Published) -> DecodeRow:
    return DecodeRow(device=row.device, x=decode_bytes(row) / row.preset.bandwidth, t=1 / row.tok_s, hbm=row.preset.hbm,
                     main_type=row.prices.main_type or T.F16, group=f"{row.device} {row.backend.value} {row.source}",
                     vendor=row.preset.vendor)


@functools.lru_cache(maxsize=None)
def prefill_row(row: Published) -> PrefillRow:
    """x: FLOPs per prompt token over the GPU's FP16 rate (an Apple GPU's: over its cores)."""
    p, prices = row.preset, row.prices
    flops = prices.prompt_flops(row.tokens) / row.tokens
    per = p.gpu_cores if p.fp16_flops is None else p.fp16_flops
    assert per, f"{p.name} has no compute figure"
    return PrefillRow(device=row.device, main_type=prices.main_type or T.F16, x=flops / per, t=1 / row.tok_s,
                      generation=p.generation)


def estimate(row: Published, fitted: Fitted) -> float | None:
    """The model's tokens/s for the row with `fitted` figures; None when the device has no compute figure."""
    speed = fitted.speed(row.backend)
    if row.decode:
        return 1 / speed.decode_seconds(decode_bytes(row), row.preset.bandwidth, hbm=row.preset.hbm,
                                        ggml_type=row.prices.main_type or T.F16, vendor=row.preset.vendor)
    p, prices = row.preset, row.prices
    peak = p.fp16_flops
    if peak is None and p.generation is not None and p.gpu_cores:
        rate = apple_core_flops(p.generation, fitted.apple)
        peak = None if rate is None else rate * p.gpu_cores
    if not peak:
        return None
    flops = prices.prompt_flops(row.tokens) / row.tokens
    return peak * speed.prefill * speed.speed_of(prices.main_type) / flops
