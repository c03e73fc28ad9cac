"""One llama.cpp run recorded as the recorded-run folders keep it (`tests/data/llamacpp-rpc/record.py`,
`tests/data/llamacpp-vulkan/record.py`).

Rule 1: the run starts in a scratch folder holding `models/` (a link to the models), so the command names
        `models/NAME.gguf` as the recorded command line does.
Rule 2: the log keeps its command (first line, `+ …`), its exit (`rc=`), every line the log reader reads and
        the lines with any of `keep_words`; it is refused when the kept lines do not read back as the whole log.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log, reads_line


def recorded_log(argv: Sequence[str], command: str, bin_dir: Path, models: Path, keep_words: Sequence[str],
                 env: Mapping[str, str] | None = None) -> str:
    """Rules 1–2: `argv` run from `bin_dir` (`command`: how the log's first line spells it)."""
    with tempfile.TemporaryDirectory(prefix="llamacpp-run-") as tmp:
        folder = Path(tmp)
        (folder / "models").symlink_to(models)
        done = subprocess.run([str(bin_dir / argv[0]), *argv[1:]], cwd=folder, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, errors="replace", timeout=600,
                              env=None if env is None else dict(env))
    text = "\n".join([f"+ {command}", (done.stdout + done.stderr).rstrip("\n"), f"rc={done.returncode}"])
    kept = "".join(line + "\n" for line in text.splitlines()
                   if line.startswith(("+ ", "rc=")) or any(w in line for w in keep_words) or reads_line(line))
    if parse_llamacpp_log(kept) != parse_llamacpp_log(text):
        raise RuntimeError(f"{command}: the kept lines do not read back as the whole log")
    return kept
