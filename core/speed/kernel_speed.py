"""How fast llama.cpp's CPU matrix multiply runs each weight type, relative to Q8_0: prefill's FLOPs weighed.

Rule 1: a prompt token's matrix multiplies take, per weight type, 2 × elements FLOPs at the
        compute rate × that type's relative speed (`PREFILL_TYPE_SPEED`, Q8_0 = 1); attention
        over the cached tokens runs at F16's (the KV cache's type). A type not in the table runs
        at 1. `TokenPrices.prompt_work` sums this "Q8_0-equivalent" work; the calibration
        (`core.speed.calibration`) then fits the machine's rate to it, so the table only says how
        the types compare, never how fast a machine is.
Rule 2: the table is measured, not modelled: `benchmarks/kernel_speeds.py` runs one zero-weight
        shape (24 blocks of 768, every type doing the same FLOPs) in llama.cpp 0c1e570 on 2
        threads of an x86-64 AMD EPYC with AVX-512 VNNI: the mean of two sweeps (the fastest of 3,
        then of 5, prompt evals of ~960 tokens per type; the sweeps agreed within 15% a type). Repacking (`core.fit.buffers.repack`: Q4_0, Q4_K, IQ4_NL, MXFP4 with AVX2) is in
        the figures. Why it matters: a SmolLM2-135M Q4_1 prefilled at 398 tok/s where a
        Gemma-3-270M Q4_K_M of the same FLOPs a token did 850, and an 8B-shaped Q4_K_M reached
        twice the probe's float32 rate; FLOPs alone put the three 4.4× apart. Arm and other x86
        CPUs order the types differently; their own runs still calibrate the overall rate.
"""

from __future__ import annotations

from gguf_budget.core.gguf.constants import GGMLQuantizationType as Q

ATTENTION_TYPE = Q.F16

PREFILL_TYPE_SPEED: dict[Q, float] = {
    Q.F32: 1.09, Q.F16: 1.31, Q.BF16: 1.68, Q.Q8_0: 1.0,
    Q.Q4_0: 1.55, Q.Q4_1: 0.51, Q.Q5_0: 0.84, Q.Q5_1: 0.43,
    Q.Q2_K: 1.10, Q.Q3_K: 1.55, Q.Q4_K: 1.35, Q.Q5_K: 1.73, Q.Q6_K: 1.61,
    Q.IQ4_NL: 1.68, Q.IQ4_XS: 1.97, Q.IQ3_S: 1.84, Q.IQ3_XXS: 2.00,
    Q.IQ2_XXS: 1.73, Q.IQ2_XS: 1.65, Q.IQ2_S: 1.62, Q.IQ1_S: 1.92, Q.MXFP4: 1.07,
}
"""Rule 2: prompt-eval speed relative to Q8_0, per weight type (benchmarks/kernel_speeds.py)."""


def type_speed(ggml_type: Q) -> float:
    """Rule 1: the relative speed of a matrix multiply over weights of `ggml_type`."""
    return PREFILL_TYPE_SPEED.get(ggml_type, 1.0)
