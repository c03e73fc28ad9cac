"""Which llama.cpp the engine rules of this package follow — named once, cited everywhere.

Rules that copy llama.cpp (layer placement, tensor split, `--n-cpu-moe`, the command line a
fit prints) were read in this revision's source: the one vendored in llama-cpp-python 0.3.36.
"""

from __future__ import annotations

LLAMA_CPP_COMMIT = "0c1e57098bba43ac29e6e3b677cdceebdd22334f"
LLAMA_CPP_REVISION = LLAMA_CPP_COMMIT[:7]
LLAMA_CPP_SOURCE = f"llama.cpp {LLAMA_CPP_REVISION} (vendored in llama-cpp-python 0.3.36)"
