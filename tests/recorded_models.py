"""The two real models of tests/data/llamacpp-logs, as header-only skeletons written with the gguf package.

Their facts are the logs' own (`llama_model_loader` type counts, `print_info` sizes, the
`repack` lines): tensor for tensor the same shapes and types, so weights come to the logs'
92.10 and 235.16 MiB.

- smollm2-135m-instruct Q4_1: llama, 30 blocks of 576, FFN 1536, 9 heads / 3 KV heads, 49,152
  tokens, tied embeddings in Q8_0; 61 f32, 210 q4_1, 1 q8_0 tensors; its blocks in the file in the order of
  their names (blk.0, blk.1, blk.10, …), as the real file has them.
- gemma3-270m Q4_K_M: gemma3, 18 blocks of 640, FFN 2048, 4 heads / 1 KV head of 256, Q/K norms
  and post norms, window 512, 262,144 tokens, tied Q8_0 embeddings; every attn_output and half
  the ffn_down Q4_K (the 27 repacked tensors), the other ffn_down Q6_K, their layers' attn_v
  Q8_0, the rest Q5_0; 109 f32, 81 q5_0, 10 q8_0, 27 q4_K, 9 q6_K tensors.
"""

from __future__ import annotations

from pathlib import Path

from gguf.constants import GGMLQuantizationType as T
from gguf_factory import ArchDesc, write_gguf

from gguf_budget.core.model.loader import load_model
from gguf_budget.core.model.spec import ModelSpec

LOGS = Path(__file__).parent / "data" / "llamacpp-logs"
GEMMA3_HIGH_PRECISION_LAYERS = (0, 1, 4, 7, 10, 13, 15, 16, 17)

SMOLLM2 = ArchDesc(arch="llama", name="Smollm2 135M 8k Lc100K Mix1 Ep2", n_layer=30, n_embd=576, n_ff=1536, n_head=9,
                   n_head_kv=3, n_vocab=49152, context_length=8192, tied=True, weight_type=T.Q4_1, embd_type=T.Q8_0,
                   file_type=3, blocks_in_name_order=True)
GEMMA3 = ArchDesc(arch="gemma3", name="Gemma 3 270m", n_layer=18, n_embd=640, n_ff=2048, n_head=4, n_head_kv=1,
                  head_dim=256, n_vocab=262144, context_length=32768, tied=True, weight_type=T.Q5_0, embd_type=T.Q8_0,
                  qk_norm=True, post_norms=True, sliding_window=512, file_type=15,
                  mix={"attn_output": T.Q4_K, "ffn_down": T.Q4_K},
                  layer_mix={il: {"ffn_down": T.Q6_K, "attn_v": T.Q8_0} for il in GEMMA3_HIGH_PRECISION_LAYERS})
MODELS = {"smollm2": SMOLLM2, "gemma3": GEMMA3}


def model_of(log_name: str) -> str:
    return "gemma3" if log_name.startswith(("gemma3", "fitparams_gemma3")) else "smollm2"


def write_recorded_models(folder: Path) -> dict[str, Path]:
    """Both skeletons under the names the logs loaded them by."""
    names = {"smollm2": "smollm2-135m-instruct-q4_1.gguf", "gemma3": "gemma3-270m-q4_k_m.gguf"}
    folder.mkdir(parents=True, exist_ok=True)
    return {key: write_gguf(folder / names[key], desc, "header_only")[0] for key, desc in MODELS.items()}


def load_recorded_models(folder: Path) -> dict[str, ModelSpec]:
    return {key: load_model(path) for key, path in write_recorded_models(folder).items()}


def load_run_models(folder: Path) -> dict[str, ModelSpec]:
    """Both skeletons and the zero-weight Llama-3.1-8B-shaped file of tests/data/llamacpp-runs (`llama8b`)."""
    from runnable_model import write_llama31_8b_q4_k_m

    out = load_recorded_models(folder)
    out["llama8b"] = load_model(write_llama31_8b_q4_k_m(folder / "llama31-8b-shaped-q4_k_m.gguf"))
    return out
