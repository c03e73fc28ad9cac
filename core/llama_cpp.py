"""Which llama.cpp the engine rules of this package follow — named once, cited everywhere.

Rules that copy llama.cpp (layer placement, tensor split, `--n-cpu-moe`, the command line a
fit prints) were read in this revision's source: the one vendored in llama-cpp-python 0.3.36.
The quantizer's type rules (`core/quant/rules.py`: `llama_tensor_get_type`) were read in the
later revision `QUANT_RULES_COMMIT` of src/llama-quant.cpp, the one the source index held;
tests check them against files published by bartowski (byte-exact tensor data).
"""

from __future__ import annotations

LLAMA_CPP_COMMIT = "0c1e57098bba43ac29e6e3b677cdceebdd22334f"
LLAMA_CPP_REVISION = LLAMA_CPP_COMMIT[:7]
LLAMA_CPP_SOURCE = f"llama.cpp {LLAMA_CPP_REVISION} (vendored in llama-cpp-python 0.3.36)"
QUANT_RULES_COMMIT = "007dbbf3fd17eefe9b47fee45f48f7ba5e62b714"
QUANT_RULES_SOURCE = f"llama.cpp {QUANT_RULES_COMMIT[:8]} src/llama-quant.cpp"
