"""The format's names and numbers from `gguf.constants`, without importing the rest of the gguf package.

Rule 1: the core takes every name and number of the format (quantization types and their block
        sizes, key names, value types) from gguf-py's `gguf/constants.py`, and only through this
        module (an import-linter contract in pyproject.toml forbids `gguf` everywhere else).
Rule 2: `import gguf.constants` runs the package's `__init__`, which imports gguf-py's reader,
        writer, quantizers and vocabulary code and with them numpy and yaml: ~0.2 s of CPU on a
        2-core machine before a header is read, against ~10 ms for `constants.py` alone (which
        imports only `enum` and `typing`); `benchmarks/bench_cli.py` shows what a command costs.
        So `constants.py` is loaded from its file and registered as `gguf.constants`: it is the
        module object a later `import gguf` uses (its `__init__` star-imports `.constants`, found
        in `sys.modules`), so there is one `GGMLQuantizationType`, never two.
Rule 3: when gguf is already imported, or its `constants.py` is not a file on disk (a frozen
        bundle keeps it in an archive), the ordinary import is used: slower, never wrong.
Caveat: a `gguf` package imported after this module lacks the attribute `gguf.constants`
        (Python sets it only when it loads the submodule itself); import the module by name
        (`from gguf.constants import …`, `sys.modules`), as gguf-py's own code does.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

GGUF_CONSTANTS = "gguf.constants"


def _load_alone() -> None:
    """Rule 2 and Rule 3: put gguf's constants module in `sys.modules` without gguf's `__init__`."""
    if GGUF_CONSTANTS in sys.modules or "gguf" in sys.modules:
        return
    package = importlib.util.find_spec("gguf")
    locations = package.submodule_search_locations if package is not None else None
    path = Path(next(iter(locations), "")) / "constants.py" if locations else None
    if path is None or not path.is_file():
        return
    spec = importlib.util.spec_from_file_location(GGUF_CONSTANTS, path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules[GGUF_CONSTANTS] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[GGUF_CONSTANTS]
        raise


_load_alone()

from gguf.constants import (  # after the loader above, by design
    GGML_QUANT_SIZES,
    GGUF_DEFAULT_ALIGNMENT,
    GGUF_MAGIC,
    GGMLQuantizationType,
    GGUFValueType,
    Keys,
    LlamaFileType,
)

__all__ = [
    "GGML_QUANT_SIZES",
    "GGUF_DEFAULT_ALIGNMENT",
    "GGUF_MAGIC",
    "GGMLQuantizationType",
    "GGUFValueType",
    "Keys",
    "LlamaFileType",
]
