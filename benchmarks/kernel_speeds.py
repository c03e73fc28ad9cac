"""How fast llama.cpp's CPU matrix multiply runs each weight type, relative to Q8_0: the table behind
`core.speed.kernel_speed.PREFILL_TYPE_SPEED`.

One model shape (24 blocks of 768, FFN 2048, 12 heads / 4 KV heads: every row a multiple of 256, so
every k-quant is valid; 49,152-token vocabulary), written once per type by the tests' factory with
zero weights (sparse: no disk used; llama.cpp's kernels do not look at the values), is run by the
CI-built `llama-completion` on a prompt of about 1,000 tokens, `--repeat` times; the fastest prompt
eval is kept (a busy neighbour only ever slows a run). Every type does the same FLOPs, so the ratio
of prompt-eval rates is the ratio of the kernels' speeds (repacking included where the CPU has it).

Run: .venv/bin/python benchmarks/kernel_speeds.py --llama ~/.cache/gguf-budget-ci/llama.cpp-0c1e570/bin
         [--threads 2] [--repeat 3] [--types Q4_0,Q4_K,...]
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

import bench_shapes  # noqa: F401  (puts tests/ on sys.path)
from gguf_factory import write_gguf
from runnable_model import UNUSED, _vocabulary, runnable_desc

from gguf_budget.core.gguf.constants import GGMLQuantizationType as T
from gguf_budget.core.speed.kernel_speed import PREFILL_TYPE_SPEED

WORDS = "the quick brown fox jumps over a lazy dog and then runs far away into the green hills".split()
RATE = re.compile(r"prompt eval time =.*?([0-9.]+) tokens per second")
VOCAB = 49_152
REFERENCE = T.Q8_0
TYPES = ("Q8_0", "F16", "BF16", "F32", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K",
         "IQ4_NL", "IQ4_XS", "IQ3_S", "IQ3_XXS", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ1_S", "MXFP4")


def _model(folder: Path, ggml_type: T) -> Path:
    tokens, kinds = _vocabulary()
    pad = VOCAB - len(tokens)
    base = runnable_desc()
    desc = replace(base, name=f"kernel-speed {ggml_type.name}", n_layer=24, n_embd=768, n_ff=2048, n_head=12,
                   n_head_kv=4, n_vocab=VOCAB, context_length=8192, weight_type=ggml_type, tied=True,
                   extra_kv={**base.extra_kv, "tokenizer.ggml.tokens": [*tokens, *(f"<unused{i}>" for i in range(pad))],
                             "tokenizer.ggml.scores": [0.0] * VOCAB, "tokenizer.ggml.token_type": [*kinds, *[UNUSED] * pad]})
    return write_gguf(folder / f"{ggml_type.name.lower()}.gguf", desc, "sparse")[0]


def _prefill(binary: Path, model: Path, threads: int) -> float:
    prompt = " ".join(itertools.islice(itertools.cycle(WORDS), 200))  # ~5 byte tokens a word
    done = subprocess.run([str(binary), "-m", str(model), "-c", "4096", "-t", str(threads), "-p", prompt, "-n", "4",
                           "-no-cnv", "--ignore-eos", "--temp", "0"], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, errors="replace", timeout=600, check=False)
    m = RATE.search(done.stdout + done.stderr)
    if done.returncode != 0 or m is None:
        raise RuntimeError(f"{model.name}: llama.cpp exited {done.returncode}")
    return float(m[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--llama", type=Path, required=True, help="folder holding llama-completion (or the binary itself)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--types", default=",".join(TYPES))
    args = ap.parse_args()
    binary = args.llama / "llama-completion" if args.llama.is_dir() else args.llama
    types = [T[name.strip().upper()] for name in args.types.split(",")]
    if REFERENCE not in types:
        types.insert(0, REFERENCE)
    load = os.getloadavg()
    best: dict[T, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for ggml_type in types:
            path = _model(Path(tmp), ggml_type)
            best[ggml_type] = max(_prefill(binary, path, args.threads) for _ in range(args.repeat))
            path.unlink()
    after = os.getloadavg()
    print(f"llama.cpp {binary}, -t {args.threads}, best of {args.repeat}; load average {load[0]:.2f} → {after[0]:.2f}")
    print(f"{'type':8} {'prompt tok/s':>12} {'vs Q8_0':>8} {'shipped':>8}")
    for ggml_type, rate in best.items():
        shipped = PREFILL_TYPE_SPEED.get(ggml_type)
        print(f"{ggml_type.name:8} {rate:12.1f} {rate / best[REFERENCE]:8.2f} "
              f"{'—' if shipped is None else f'{shipped:.2f}':>8}")


if __name__ == "__main__":
    main()
