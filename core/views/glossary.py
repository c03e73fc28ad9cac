"""The glossary: every term the screens, the reports and the manual use, defined in plain words.

Rule 1: one text for every reader: Help ▸ Glossary shows `glossary_markdown()`, and docs/glossary.md
        is the same Markdown (a test keeps them equal).
Rule 2: a ledger line's entry is that line's tooltip (`ledger_names.LINE_NAMES`), so the chart,
        the reports and the glossary say one thing; the Quants rule is `RECOMMENDED_RULE`.
Rule 3: terms are listed alphabetically (case-insensitive), each once.
"""

from __future__ import annotations

from dataclasses import dataclass

from gguf_budget.core.model.context import DEFAULT_CTX
from gguf_budget.core.views.ledger_names import LINE_NAMES
from gguf_budget.core.views.quant_report import RECOMMENDED_RULE
from gguf_budget.core.views.run_it import FORCE_FLAG


@dataclass(frozen=True)
class Term:
    term: str
    definition: str


def _line(key: str, extra: str = "") -> Term:
    words = LINE_NAMES[key]
    return Term(words.name, f"A line of the ledger. {words.tooltip}{extra}")


_TERMS: tuple[Term, ...] = (
    Term("Admission estimate", "The Full load's verdict: whether the model's weights and KV cache fit the memory "
         "this machine has free now, after the reserves. It is worked out from the file's header, so it is an "
         "estimate — not a guarantee, and not a measurement."),
    _line("attn"),
    Term("Auto ctx", f"With the context on \"auto\" the Budget plan chooses it, speed first: up to {DEFAULT_CTX} "
         f"tokens it keeps as many layers pinned as it can, and beyond {DEFAULT_CTX} it grows the context only while every layer "
         "stays pinned (up to the ctx cap). \"Prefer context\" instead takes the largest context that fits, "
         "pinning fewer layers."),
    Term("Bandwidth", "How many bytes per second a memory tier (RAM, VRAM, disk) can read. Each figure says where "
         "it came from: measured on this machine (once, with its date; Measure again re-measures), reported by a "
         "GPU's driver, cited from a maker's spec sheet, typed in, or assumed (a typical value)."),
    Term("Best fit", "In the Quants table: the highest-precision quantization whose Full load runs fully on the "
         "GPU at the chosen context, else fully in RAM."),
    Term("Bits per weight", "The size of a quantization: the bits of the model's tensors divided by its number of "
         "weights — 16 for BF16 and F16, about 8.5 for Q8_0, about 4.9 for Q4_K_M."),
    Term("Budget plan", "The answer for a layer-streaming runtime under a RAM budget you choose. Every byte that "
         "counts toward peak memory is priced (the ledger), and the plan keeps the total under the budget by "
         "choosing the context, whether the output head streams and how many layers stay pinned in RAM; the "
         "other layers stream from disk (or the page cache) for every token. Its runtime takes `--ram-budget` "
         "and `--ctx`."),
    Term("Catalogue skeleton", "A header-only GGUF file shipped with the app: the shapes and tensor types of a "
         "published model, without its weights. It plans and fits like the real file."),
    Term("Cheapest fix", "What the headline suggests for a load that is tight or won't fit: the first of fewer "
         "server slots (-np 1), an 8-bit KV cache (-ctk q8_0 -ctv q8_0), a smaller context, or a smaller "
         "quantization that fits, each priced as a full load, with what it costs."),
    Term("Context (ctx)", "How many tokens the model keeps in view — the prompt and the answer together. The KV "
         "cache, the attention scores and the residual stream grow with it."),
    Term("Context tiers", "The strip under the headline: the Full load at 4k, 8k, 16k, 32k, 64k and 128k tokens (up "
         "to the trained context) and at the largest context that fits — its peak RAM, GPU layers and decode "
         "speed each, the same figures as `gguf-budget fit --ctx N`. Clicking a tier sets the context."),
    Term("Ctx cap", "The largest context an auto ctx may choose; by default the model's trained context."),
    Term("Decode estimate", "Tokens per second while generating, from the bytes each token reads from each memory "
         "tier and that tier's bandwidth, times the share of that rate real llama.cpp runs reach (the "
         "calibration: from runs on this machine once there are some, else the default). Shown as \"≈ N tok/s\" "
         "at the start of a conversation and with a full context, never a measurement."),
    _line("embeddings"),
    Term("FEASIBLE, FEASIBLE — SLOW, IMPOSSIBLE, OVERRIDDEN, UNLIMITED", "The Budget plan's verdicts: it fits "
         "under the budget; it fits but its decode estimate is under the slow threshold (2 tok/s unless you "
         "set another), whether or not it streams weights; not even its minimum configuration fits; forced to run over the budget anyway; budget 0, "
         "no limit — everything resident."),
    Term("File size", "The model file's size on disk. It is storage only: by itself it says nothing about RAM "
         "or VRAM."),
    Term("First token (time to first token)", "How long a prompt of N tokens takes before the first answer token: "
         "the prompt's arithmetic over this machine's measured compute rate, calibrated like the decode estimate. "
         "An estimate, for 1,000 tokens unless you set the prompt length."),
    Term("Fits on GPU, fits split, fits CPU-only, does not fit", "The Full load's verdicts: every layer on the "
         "GPUs; some layers on the GPUs and the rest in host RAM; everything in host RAM; or more than the "
         "machine has."),
    Term("Fits, tight, won't", "The three tiers of each answer. Tight: it fits with under 10 % of the memory left, or "
         "only because the kernel can page the mapped weights back in (its peak is above the RAM available). "
         "Won't: it does not fit. A tight or won't answer names its cheapest fix."),
    Term("Full load", "llama.cpp loading the whole model the usual way, on this machine or a hypothetical one: "
         "which layers go to which GPU, what stays in host RAM, the KV cache, and whether it all fits."),
    Term("GPU layers (-ngl)", "How many of the model's layers llama.cpp puts on the GPUs — the output layer "
         "first, then the last blocks. \"auto\" takes as many as fit."),
    Term("Header", "The start of a GGUF file, which describes the model: its architecture, its sizes and the list "
         "of its tensors. The app reads only the header, never the weights."),
    Term("Heavy quality loss", "Marked on quantizations below 3 bits per weight. llama.cpp's own measurements put "
         "Q2_K's loss (added perplexity) at twenty times Q4_K_M's."),
    Term("Hypothetical machine", "A machine typed in or chosen from the presets (such as \"RTX 4090\") instead of "
         "probed: its figures are what you typed, not measurements."),
    _line("kv", " Its type (f16 by default; q8_0 or q4_0 to halve or quarter it) sets that width."),
    Term("Ledger", "The itemized list of everything that counts toward the Budget plan's peak memory, drawn as "
         "the stacked bars against the budget line."),
    _line("logits"),
    Term("Mandatory memory", "The ledger lines no knob but the context can shrink: process overhead, scratch "
         "buffers, logits, attention scores, residual stream and KV cache."),
    Term("Minimum configuration", "The smallest Budget plan the model can run as: the lowest context, a streamed "
         "output head, a one-buffer streaming ring and no pinned layers. When even this exceeds the budget the "
         "plan is IMPOSSIBLE."),
    Term("MoE expert offload (--n-cpu-moe)", "For mixture-of-experts models: the expert weights of the first N "
         "layers stay in host RAM while everything else goes to the GPU."),
    _line("lm_head", " \"Resident\" keeps it in RAM; \"streamed\" reads it like an unpinned layer."),
    _line("out_norm"),
    Term("Page cache", "The operating system's copy of recently read file data, kept in spare RAM. Streamed "
         "layers read from it — much faster than disk — when the RAM beyond the budget can hold them."),
    Term("Peak RSS", "The most RAM a process held at once (its resident set size), measured by a real run. "
         "Predicted, it is one figure per program at each end of the band — after a short prompt, and once the "
         "context has filled (for llama-server with the prompt cache and checkpoints its verdict counts); the "
         "side panel, `fit` and `fit --json` (`peak_memory`) give the same one."),
    _line("pinned", " A pinned layer is one kept in RAM."),
    Term("Priced, not downloaded", "A quantization sized from the model's tensor shapes exactly as llama.cpp's "
         "quantizer would write it, without the file being here."),
    _line("base"),
    Term("Quantization (file type)", "The number format a model's weights are stored in: BF16, Q8_0, Q4_K_M, "
         "…. Fewer bits per weight make a smaller, faster file that answers less well."),
    Term("Recommended", f"In the Quants table. {RECOMMENDED_RULE}"),
    Term("Reserve", "Memory kept back from the model for everything else: 6 GiB of host RAM and 1.5 GiB on the "
         "first GPU unless you set others."),
    _line("resid"),
    Term("Ring depth", "How many buffers the streaming ring has (1–8). The plan may use another depth than the "
         "one asked for, and says why."),
    Term("Run it", "The headline's last line: what to run for each answer on screen, each with Copy. For the "
         f"Budget plan, its runtime's flags — `--ram-budget SIZE --ctx N`, and `{FORCE_FLAG}` when forced; for the "
         "Full load, the `llama-server` command. A configuration that does not fit gets no command: the line says "
         "what would fit instead (a budget, a smaller context, a smaller quantization, or how much memory is "
         "missing)."),
    Term("Runtime evidence", "What a real llama.cpp run measured — its buffers, peak RSS and tokens per second — "
         "from File ▸ Measure or an imported log. Only a real run gives it."),
    _line("scratch"),
    Term("Sliding window", "Attention layers that look back only a fixed number of tokens: their KV cache stops "
         "growing at the window."),
    Term("Snapshot", "This machine's RAM and GPUs as probed at one moment (or as typed in)."),
    _line("ring"),
    Term("Tensor split (-ts)", "How the GPU layers are shared between several GPUs: by free memory unless you "
         "give shares."),
    Term("Trained context", "The longest context the model was trained for (from its header). Beyond it the "
         "model may answer poorly."),
    Term("Usable RAM", "Available RAM minus the host reserve: what the Full load may use, and the Budget plan's "
         "budget until you choose one."),
    Term("Weight ceiling", "In a feasible Budget plan: the budget minus the mandatory memory — what is left for "
         "weights (output norm, embedding rows, output head, streaming ring and pinned layers)."),
)
GLOSSARY: tuple[Term, ...] = tuple(sorted(_TERMS, key=lambda t: t.term.casefold()))


def matching(typed: str) -> tuple[Term, ...]:
    """The terms whose name or definition contains `typed` (any case; every term for blank text)."""
    needle = typed.strip().casefold()
    return tuple(t for t in GLOSSARY if needle in f"{t.term} {t.definition}".casefold())


def glossary_markdown(terms: tuple[Term, ...] = GLOSSARY) -> str:
    """Rule 1: the glossary (or some of its terms) as a Markdown list, one term per item."""
    if not terms:
        return "No term matches.\n"
    return "\n".join(f"- **{t.term}**: {t.definition}" for t in terms) + "\n"
