"""Models whose headers match the recorded llama.cpp logs in ../shared/llamacpp-logs (copied to tests/data).

`SMOLLM2` has the shape the smollm2 logs print (llama, 30 blocks, tied embeddings, 272
tensors) and `GEMMA3` the gemma3 ones (18 blocks with q/k and post norms, 236 tensors), so
those logs are evidence for them and not for each other.
"""

from __future__ import annotations

from pathlib import Path

from gguf.constants import GGMLQuantizationType as T
from gguf_factory import ArchDesc

LOGS = Path(__file__).parent / "data" / "llamacpp-logs"
SMOLLM2_LOG = LOGS / "smollm2-135m-instruct-q4_1_ctx2048_f16.log"
SMOLLM2_Q8_LOG = LOGS / "smollm2-135m-instruct-q4_1_ctx512_q8_0.log"
GEMMA3_LOG = LOGS / "gemma3-270m-q4_k_m_ctx2048_f16.log"

GEMMA3 = ArchDesc(arch="gemma3", name="gemma3-270m-shape", n_layer=18, n_embd=640, n_ff=2048, n_head=4, n_head_kv=1,
                  head_dim=256, n_vocab=262144, context_length=32768, tied=True, qk_norm=True, post_norms=True,
                  sliding_window=512, weight_type=T.Q8_0)
SMOLLM2 = ArchDesc(name="smollm2-135m-shape", n_layer=30, n_embd=576, n_ff=1536, n_head=9, n_head_kv=3,
                   n_vocab=49152, context_length=8192, tied=True, weight_type=T.Q4_1, embd_type=T.Q8_0)
