"""Write docs/llama-options.md: every llama.cpp option that moves memory, placement or speed, where llama.cpp
defines it and where this tool prices it.

Run with the path of llama.cpp 0c1e570's common/arg.cpp (in the llama-cpp-python 0.3.36 sdist,
vendor/llama.cpp/common/arg.cpp) to find each option's line:

    .venv/bin/python docs/make_llama_options.py PATH/TO/common/arg.cpp

tests/test_llama_options_doc.py checks that the page names every priced and unpriced option of the table.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gguf_budget.core.llama_words.options import OPTIONS, Effect

HERE = Path(__file__).parent
PRICED_IN = {
    "ctx": ("cparams.n_ctx (src/llama-context.cpp)", "fit/auto_ctx.py, model/kv.py"),
    "batch": ("cparams.n_batch", "fit/runtime_memory.py (reserve, checkpoints)"),
    "ubatch": ("cparams.n_ubatch", "fit/runtime_memory.py, fit/compute_graph.py, model/kv.py (SWA cells)"),
    "swa_full": ("llama_kv_cache_iswa (src/llama-kv-cache-iswa.cpp)", "model/kv.py Rule 5"),
    "ctx_checkpoints": ("server slot checkpoints (tools/server)", "fit/checkpoints.py"),
    "cache_ram": ("server_prompt_cache (tools/server)", "fit/prompt_cache.py"),
    "kv_unified": ("cparams.kv_unified", "fit/slots.py"),
    "flash_attn": ("cparams.flash_attn_type", "fit/runtime_memory.py, fit/cpu_work.py"),
    "threads": ("cparams.n_threads (ggml-cpu work buffer)", "fit/cpu_work.py, speed/"),
    "threads_batch": ("cparams.n_threads_batch", "fit/engine_options.py (carried)"),
    "kv_offload": ("cparams.offload_kqv (src/llama-kv-cache.cpp)", "fit/runtime_types.py EngineSettings.kv_offload"),
    "repack": ("mparams.use_extra_bufts (ggml-cpu repack)", "fit/repack.py"),
    "op_offload": ("cparams.op_offload (ggml_backend_sched)", "fit/runtime_types.py EngineSettings.op_offload"),
    "cache_type_k": ("cparams.type_k", "model/kv.py Rule 1"),
    "cache_type_v": ("cparams.type_v", "model/kv.py Rule 1 (`v_type`)"),
    "parallel": ("n_parallel / n_seq_max (tools/server/server.cpp)", "fit/slots.py"),
    "mmproj": ("mtmd_init_from_file (tools/mtmd)", "fit/projector.py"),
    "mmproj_offload": ("mtmd_context_params.use_gpu", "fit/server.py"),
    "load_mode": ("mparams.load_mode (src/llama-model-loader.cpp)", "fit/engine_options.py LoadMode, fit/runtime_memory.py Rule 1"),
    "device": ("mparams.devices (src/llama.cpp)", "fit/gpu_split.py Rule 8"),
    "override_tensor": ("mparams.tensor_buft_overrides (src/llama-model.cpp)", "fit/runtime_types.py TensorOverride"),
    "cpu_moe": ("llm_ffn_exps_cpu_override (common/common.h)", "fit/moe.py, fit/estimate.py"),
    "n_cpu_moe": ("llm_add_n_cpu_ffn_overrides (common/common.h)", "fit/moe.py, fit/estimate.py"),
    "n_cpu_ffn": ("llm_add_n_cpu_ffn_overrides (common/common.h)", "llama_words/reader.py (as -ot overrides)"),
    "gpu_layers": ("mparams.n_gpu_layers (src/llama-model.cpp load_tensors)", "fit/gpu_split.py Rule 1"),
    "split_mode": ("mparams.split_mode (src/llama.cpp)", "fit/gpu_split.py Rule 8, fit/split_mode.py"),
    "tensor_split": ("mparams.tensor_split", "fit/gpu_split.py Rule 3"),
    "main_gpu": ("mparams.main_gpu", "fit/gpu_split.py Rule 8"),
    "fit": ("common_fit_params (common/fit.cpp)", "fit/auto_ctx.py Rule 7"),
    "fit_target": ("params.fit_params_target (common/fit.cpp)", "explorer/llama_question.py (per-GPU reserves)"),
    "fit_ctx": ("params.fit_params_min_ctx (common/fit.cpp)", "fit/auto_ctx.py Rules 2, 7"),
    "model": ("params.model.path", "the model read"),
    "model_url": ("params.model.url", "the model read (header only)"),
    "hf_repo": ("params.model.hf_repo", "the model read (header only)"),
    "hf_file": ("params.model.hf_file", "the model read (header only)"),
    "draft_type_k": ("params.speculative.cache_type_k", "fit/draft.py"),
    "draft_type_v": ("params.speculative.cache_type_v", "fit/draft.py (priced as K's)"),
    "draft_device": ("params.speculative.devices", "fit/draft.py"),
    "draft_gpu_layers": ("params.speculative.n_gpu_layers", "fit/draft.py"),
    "draft_model": ("params.speculative.model", "fit/draft.py"),
}


def line_of(source: list[str], spelling: str) -> int | None:
    quoted = f'"{spelling}"'
    return next((i + 1 for i, line in enumerate(source) if quoted in line and "{" in line), None)


def page(arg_cpp: list[str]) -> str:
    out = ["# llama.cpp's options and what this tool does with them", "",
           "Every option of llama-server, llama-cli and llama-completion of llama.cpp 0c1e570 that changes memory,",
           "placement or speed, with the line of `common/arg.cpp` that defines it, what it sets in llama.cpp and where",
           "this tool prices it (paths under `core/`). Options that change nothing this tool prices (sampling, chat,",
           "logging, the server's network…) are read and listed as ignored; the whole table, all 282 options, is",
           "`core/llama_words/options.py`, held against each program's `--help` by `tests/test_llama_words.py`.",
           "Made by `docs/make_llama_options.py`.", "",
           "## Priced", "", "| option | arg.cpp | in llama.cpp | priced in |", "|---|---|---|---|"]
    for o in OPTIONS:
        if o.effect is Effect.PRICED:
            where, ours = PRICED_IN[o.detail]
            spell = ", ".join(f"`{s}`" for s in (*o.spellings, *o.negatives))
            out.append(f"| {spell} | {line_of(arg_cpp, o.spellings[0]) or '—'} | {where} | {ours} |")
    out += ["", "Older spellings that published commands carry are read too: `--no-mmap` (`-lm none`), `--mmap`,",
            "`--mlock` (`-lm mmap+mlock`, or `mlock` beside `--no-mmap`), `-dio`; a bare `-fa` or `--color` (once",
            "flags) is `on`; `main` is llama-completion and `server` llama-server.", "",
            "## Changes memory, not priced here", "",
            "Each is named, with this reason, in every answer to a command that gives it.", "",
            "| option | arg.cpp | why it is not priced |", "|---|---|---|"]
    for o in OPTIONS:
        if o.effect is Effect.UNPRICED:
            spell = ", ".join(f"`{s}`" for s in (*o.spellings, *o.negatives))
            out.append(f"| {spell} | {line_of(arg_cpp, o.spellings[0]) or '—'} | {o.detail} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    (HERE / "llama-options.md").write_text(page(Path(sys.argv[1]).read_text().splitlines()))
