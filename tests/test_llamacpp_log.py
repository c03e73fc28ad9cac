"""Reading llama.cpp logs: every recorded run, the older line formats, and text that is not a log.

The recorded logs (tests/data/llamacpp-logs, made as their README says) are read back line for
line: each `buffer size =` and cache `size =` line is reproduced exactly by its record, and the
figures below were copied from the logs by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from gguf_budget.core.errors import BudgetError
from gguf_budget.core.evidence.llamacpp_log import NOT_A_LOG, LlamaCppLogError, parse_llamacpp_log
from gguf_budget.core.evidence.log_records import BufferKind as K, BuildInfo

LOGS = Path(__file__).parent / "data" / "llamacpp-logs"
LOG_FILES = sorted(p.name for p in LOGS.glob("*.log"))


def _normal(line: str) -> str:
    """Whitespace collapsed, no space after '(' — how llama.cpp's padded numbers read."""
    return re.sub(r"\(\s+", "(", " ".join(line.split()))


def test_every_recorded_log_is_here():
    assert len(LOG_FILES) == 14


@pytest.mark.parametrize("name", LOG_FILES)
def test_buffer_and_cache_lines_are_reproduced_exactly(name):
    text = (LOGS / name).read_text()
    log = parse_llamacpp_log(text)
    buffer_lines = [_normal(ln) for ln in text.splitlines() if "buffer size = " in ln]
    records = [b for ld in log.loads for b in ld.buffers]
    assert len(records) == len(buffer_lines) > 0
    for line, record in zip(buffer_lines, records, strict=True):
        assert line.endswith(record.render()), (line, record.render())
    cache_lines = [_normal(ln) for ln in text.splitlines() if "llama_kv_cache: size = " in ln]
    caches = [c for ld in log.loads for c in ld.caches]
    assert len(caches) == len(cache_lines) > 0
    for line, cache in zip(cache_lines, caches, strict=True):
        assert line.endswith(cache.render()), (line, cache.render())


# log, model buffers, KV buffers, output, compute (MiB as printed), n_ctx, n_ubatch, flash_attn,
# type_k, swa_full, Maximum resident set size (kB), eval tokens/s — of the run that allocated.
EXPECTED = [
    ("fitparams_gemma3-270m-q4_k_m_ctx8192_f16.log", ("0.00", "0.00"), ("0.00", "0.00"), ("1.00",), ("514.50",),
     8192, 512, "auto", "f16", False, None, None),
    ("fitparams_smollm2-135m-instruct-q4_1_ctx2048_f16.log", ("0.00",), ("0.00",), ("0.19",), ("102.51",),
     2048, 512, "auto", "f16", False, None, None),
    ("gemma3-270m-q4_k_m_ctx2048_f16.log", ("235.16", "12.66"), ("6.00", "15.00"), ("1.00",), ("20.77",),
     2048, 512, "auto", "f16", False, 347920, 45.27),
    ("gemma3-270m-q4_k_m_ctx2048_f16_swafull.log", ("235.16", "12.66"), ("6.00", "30.00"), ("1.00",), ("21.77",),
     2048, 512, "auto", "f16", True, 362916, 46.76),
    ("gemma3-270m-q4_k_m_ctx2048_q8_0.log", ("235.16", "12.66"), ("3.19", "7.97"), ("1.00",), ("21.30",),
     2048, 512, "enabled", "q8_0", False, 339932, 45.98),
    ("gemma3-270m-q4_k_m_ctx512_f16.log", ("235.16", "12.66"), ("1.50", "7.50"), ("1.00",), ("18.77",),
     512, 512, "auto", "f16", False, 336596, 45.46),
    ("gemma3-270m-q4_k_m_ctx512_f16_swafull.log", ("235.16", "12.66"), ("1.50", "7.50"), ("1.00",), ("18.77",),
     512, 512, "auto", "f16", True, 336660, 45.16),
    ("gemma3-270m-q4_k_m_ctx512_q8_0.log", ("235.16", "12.66"), ("0.80", "3.98"), ("1.00",), ("19.30",),
     512, 512, "enabled", "q8_0", False, 331548, 45.48),
    ("gemma3-270m-q4_k_m_ctx8192_f16.log", ("235.16", "12.66"), ("24.00", "15.00"), ("1.00",), ("26.77",),
     8192, 512, "auto", "f16", False, 368888, 45.72),
    ("smollm2-135m-instruct-q4_1_ctx2048_f16.log", ("92.10",), ("45.00",), ("0.19",), ("15.51",),
     2048, 512, "auto", "f16", False, 180648, 94.0),
    ("smollm2-135m-instruct-q4_1_ctx2048_q8_0.log", ("92.10",), ("23.91",), ("0.19",), ("14.42",),
     2048, 512, "enabled", "q8_0", False, 159096, 94.05),
    ("smollm2-135m-instruct-q4_1_ctx512_f16.log", ("92.10",), ("11.25",), ("0.19",), ("14.01",),
     512, 512, "auto", "f16", False, 146280, 92.07),
    ("smollm2-135m-instruct-q4_1_ctx512_q8_0.log", ("92.10",), ("5.98",), ("0.19",), ("12.92",),
     512, 512, "enabled", "q8_0", False, 140728, 95.13),
    ("smollm2-135m-instruct-q4_1_ctx8192_f16.log", ("92.10",), ("180.00",), ("0.19",), ("21.51",),
     8192, 512, "auto", "f16", False, 319388, 90.43),
]


@pytest.mark.parametrize("name, model, kv, output, compute, n_ctx, n_ubatch, fa, type_k, swa_full, rss_kb, tps",
                         EXPECTED)
def test_recorded_run_figures(name, model, kv, output, compute, n_ctx, n_ubatch, fa, type_k, swa_full, rss_kb, tps):
    log = parse_llamacpp_log((LOGS / name).read_text())
    run = log.run
    assert tuple(b.mib for b in run.buffers if b.kind is K.MODEL) == model
    assert tuple(b.mib for b in run.buffers if b.kind is K.KV) == kv
    assert tuple(b.mib for b in run.buffers if b.kind is K.OUTPUT) == output
    assert tuple(b.mib for b in run.buffers if b.kind is K.COMPUTE) == compute
    s = run.settings
    assert (s.n_ctx, s.n_ubatch, s.flash_attn, s.type_k, s.type_v, s.swa_full) == (n_ctx, n_ubatch, fa, type_k, type_k,
                                                                                   swa_full)
    assert log.peak_rss == (rss_kb * 1024 if rss_kb else None)
    assert (log.eval.tokens_per_second if log.eval else None) == tps
    assert run.dry_run is name.startswith("fitparams")


def test_a_cli_run_is_a_dry_fit_pass_then_the_real_load():
    log = parse_llamacpp_log((LOGS / "gemma3-270m-q4_k_m_ctx2048_f16.log").read_text())
    dry, real = log.loads
    assert (dry.dry_run, dry.load_mode, real.dry_run, real.load_mode, real.mmap) == (True, "none", False, "mmap", True)
    assert log.run is real
    assert log.build == BuildInfo(1, "0c1e570") and log.build.render() == "b1-0c1e570"
    assert {"AVX2", "AVX512", "REPACK"} <= log.cpu_features and "AMX_INT8" not in log.cpu_features
    assert log.n_threads == 2
    assert log.command == "llama-cli -m models/gemma3-270m-q4_k_m.gguf -c 2048 -t 2 -p The capital of France is -n 8 -st -v"
    m = real.model
    assert (m.path, m.n_tensors, m.n_kv_pairs, m.architecture, m.name) == (
        "models/gemma3-270m-q4_k_m.gguf", 236, 33, "gemma3", "Gemma 3 270m")
    assert (m.n_layer, m.n_vocab, m.n_embd, m.n_ctx_train, m.file_size.render()) == (18, 262144, 640, 32768, "235.16 MiB")
    assert m.type_counts == (("f32", 109), ("q5_0", 81), ("q8_0", 10), ("q4_K", 27), ("q6_K", 9))
    assert [c.window for c in real.caches] == ["non-SWA", "SWA"]
    assert [(c.cells, c.layers) for c in real.caches] == [(2048, 3), (1024, 15)]
    assert len(real.repacked) == 27 and real.repacked[0] == "blk.0.attn_output.weight"
    assert real.total(K.MODEL, "CPU_REPACK") == round(12.66 * 2**20)
    assert real.devices == ("CPU_Mapped", "CPU_REPACK", "CPU")
    host, repack = real.breakdown
    assert (host.name, host.self_mib, host.model, host.context, host.compute, host.total) == ("Host", 276, 235, 21, 20, None)
    assert (repack.name, repack.self_mib, repack.model) == ("CPU_REPACK", 12, 12)


# Older and other spellings of the same facts, one per era or front-end (trimmed real lines).
LLAMA_2024_CUDA = """\
build: 3600 (2fb92678) with cc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0 for x86_64-linux-gnu
llama_model_loader: loaded meta data with 29 key-value pairs and 291 tensors from models/llama-3-8b.Q4_K_M.gguf (version GGUF V3 (latest))
llama_model_loader: - type  f32:   65 tensors
llama_model_loader: - type q4_K:  193 tensors
llama_model_loader: - type q6_K:   33 tensors
llm_load_print_meta: arch             = llama
llm_load_print_meta: n_vocab          = 128256
llm_load_print_meta: n_layer          = 32
llm_load_print_meta: model size       = 4.58 GiB (4.89 BPW)
llm_load_tensors: ggml ctx size =    0.27 MiB
llm_load_tensors: offloading 32 repeating layers to GPU
llm_load_tensors: offloading non-repeating layers to GPU
llm_load_tensors: offloaded 33/33 layers to GPU
llm_load_tensors:        CPU buffer size =   281.81 MiB
llm_load_tensors:      CUDA0 buffer size =  4403.49 MiB
llama_new_context_with_model: n_ctx      = 8192
llama_new_context_with_model: n_batch    = 2048
llama_new_context_with_model: n_ubatch   = 512
llama_new_context_with_model: flash_attn = 0
llama_kv_cache_init:      CUDA0 KV buffer size =  1024.00 MiB
llama_new_context_with_model: KV self size  = 1024.00 MiB, K (f16):  512.00 MiB, V (f16):  512.00 MiB
llama_new_context_with_model:  CUDA_Host  output buffer size =     0.49 MiB
llama_new_context_with_model:      CUDA0 compute buffer size =   560.00 MiB
llama_new_context_with_model:  CUDA_Host compute buffer size =    24.01 MiB
llama_print_timings: prompt eval time =     120.10 ms /    12 tokens (   10.01 ms per token,    99.92 tokens per second)
llama_print_timings:        eval time =    1234.56 ms /   127 runs   (    9.72 ms per token,   102.87 tokens per second)
"""

LLAMA_2024_12_CPU = """\
0.00.000.260 I build: 4402 (5896c652) with cc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0 for aarch64-linux-gnu
0.00.004.666 I llama_model_loader: loaded meta data with 25 key-value pairs and 197 tensors from ../models-mnt/bge-small/ggml-model-f16.gguf (version GGUF V3 (latest))
0.00.033.277 I llm_load_print_meta: arch             = bert
0.00.039.183 I llm_load_tensors:   CPU_Mapped model buffer size =    63.84 MiB
0.00.040.689 I llama_new_context_with_model: n_ctx         = 512
0.00.040.689 I llama_new_context_with_model: n_ctx_per_seq = 512
0.00.040.690 I llama_new_context_with_model: n_batch       = 2048
0.00.040.690 I llama_new_context_with_model: n_ubatch      = 2048
0.00.040.691 I llama_new_context_with_model: flash_attn    = 0
0.00.040.713 I llama_kv_cache_init: kv_size = 512, offload = 1, type_k = 'f16', type_v = 'f16', n_layer = 12
0.00.044.025 I llama_kv_cache_init:        CPU KV buffer size =     9.00 MiB
0.00.044.044 I llama_new_context_with_model: KV self size  =    9.00 MiB, K (f16):    4.50 MiB, V (f16):    4.50 MiB
0.00.044.051 I llama_new_context_with_model:        CPU  output buffer size =     0.00 MiB
0.00.046.002 I llama_new_context_with_model:        CPU compute buffer size =    16.01 MiB
0.00.048.307 I system_info: n_threads = 8 (n_threads_batch = 8) / 8 | CPU : NEON = 1 | ARM_FMA = 1 | FP16_VA = 1 | DOTPROD = 1 | AARCH64_REPACK = 1 |
0.00.052.847 I llama_perf_context_print:        eval time =       0.00 ms /     1 runs   (    0.00 ms per token,      inf tokens per second)
"""

LLAMA_2025_ISWA_GPU = """\
load: build: 5600 (0d398442) with cc (GCC) 14.2.1 for x86_64-pc-linux-gnu
llama_model_loader: loaded meta data with 40 key-value pairs and 340 tensors from gemma-3-1b-it-Q4_K_M.gguf (version GGUF V3 (latest))
print_info: arch             = gemma3
print_info: file size   = 762.49 MiB (6.40 BPW)
load_tensors: loading model tensors, this can take a while... (mmap = false)
load_tensors: offloading 20 repeating layers to GPU
load_tensors: offloaded 20/27 layers to GPU
load_tensors:        CUDA0 model buffer size =   401.25 MiB
load_tensors:          CPU model buffer size =   361.24 MiB
llama_context: n_ctx         = 4096
llama_context: n_ctx_per_seq = 4096
llama_context: n_batch       = 2048
llama_context: n_ubatch      = 512
llama_context: flash_attn    = 1
llama_context:  CUDA_Host  output buffer size =     1.00 MiB
llama_kv_cache_unified_iswa: using full-size SWA cache (ref: https://github.com/ggml-org/llama.cpp/pull/13194#issuecomment-2868343055)
llama_kv_cache_unified_iswa: creating non-SWA KV cache, size = 4096 cells
llama_kv_cache_unified:      CUDA0 KV buffer size =    12.00 MiB
llama_kv_cache_unified:        CPU KV buffer size =     4.00 MiB
llama_kv_cache_unified: size =   16.00 MiB (  4096 cells,   4 layers,  1 seqs), K (q8_0):    8.00 MiB, V (q8_0):    8.00 MiB
llama_kv_cache_unified_iswa: creating     SWA KV cache, size = 4096 cells
llama_kv_cache_unified:      CUDA0 KV buffer size =    64.00 MiB
llama_kv_cache_unified:        CPU KV buffer size =    24.00 MiB
llama_kv_cache_unified: size =   88.00 MiB (  4096 cells,  22 layers,  1 seqs), K (q8_0):   44.00 MiB, V (q8_0):   44.00 MiB
llama_context:      CUDA0 compute buffer size =   517.12 MiB
llama_context:  CUDA_Host compute buffer size =    13.01 MiB
"""

LLAMA_2025_SERVER_BREAKDOWN = """\
main: build = 6700 (1d8a1b2c)
llama_model_loader: loaded meta data with 36 key-value pairs and 459 tensors from /models/Qwen3-30B-A3B-Q4_K_M.gguf (version GGUF V3 (latest))
load_tensors: offloaded 49/49 layers to GPU
load_tensors:        CUDA0 model buffer size = 17524.32 MiB
load_tensors:   CPU_Mapped model buffer size =   166.92 MiB
llama_kv_cache:      CUDA0 KV buffer size =   384.00 MiB
llama_kv_cache: size =  384.00 MiB (  4096 cells,  48 layers,  1/1 seqs), K (f16):  192.00 MiB, V (f16):  192.00 MiB
llama_context:      CUDA0 compute buffer size =   898.00 MiB
llama_memory_breakdown_print: | memory breakdown [MiB] | total   free     self   model   context   compute    unaccounted |
llama_memory_breakdown_print: |   - CUDA0 (RTX 4090)   | 24077 =  945 + (19187 = 17904 +     384 +     898) +        3945 |
llama_memory_breakdown_print: |   - Host               |                   178 =   166 +       0 +      12                |
srv  print_timing: id  0 | task 0 |        eval time =    2150.32 ms /   256 tokens (    8.40 ms per token,   119.05 tokens per second)
"""

LLAMA_CPP_PYTHON_RECURRENT = """\
llama_model_loader: loaded meta data with 24 key-value pairs and 242 tensors from ./mamba-130m.gguf (version GGUF V3 (latest))
load_tensors: loading model tensors, this can take a while... (mmap = true)
load_tensors:   CPU_Mapped model buffer size =   256.96 MiB
llama_context: n_ctx         = 2048
llama_memory_recurrent:        CPU RS buffer size =     2.67 MiB
llama_memory_recurrent: size =    2.67 MiB (     1 cells,  24 layers,  1 seqs), R (f32):    0.42 MiB, S (f32):    2.25 MiB
llama_context:        CPU compute buffer size =    99.00 MiB
llama_perf_context_print:        eval time =      91.20 ms /     7 runs   (   13.03 ms per token,    76.75 tokens per second)
peak RSS: 412.5 MiB
"""


def _buffers(text):
    return [(b.kind, b.device, b.mib) for b in parse_llamacpp_log(text).run.buffers]


def test_mid_2024_spelling_with_cuda_offload():
    log = parse_llamacpp_log(LLAMA_2024_CUDA)
    run = log.run
    assert _buffers(LLAMA_2024_CUDA) == [
        (K.MODEL, "CPU", "281.81"), (K.MODEL, "CUDA0", "4403.49"), (K.KV, "CUDA0", "1024.00"),
        (K.OUTPUT, "CUDA_Host", "0.49"), (K.COMPUTE, "CUDA0", "560.00"), (K.COMPUTE, "CUDA_Host", "24.01")]
    assert run.buffers[0].render() == "CPU buffer size = 281.81 MiB"
    assert run.caches[0].render() == "KV self size = 1024.00 MiB, K (f16): 512.00 MiB, V (f16): 512.00 MiB"
    assert (run.offloaded, run.settings.flash_attn, run.settings.n_ctx, run.settings.type_v) == ((33, 33), "0", 8192, "f16")
    assert (run.model.architecture, run.model.n_vocab, run.model.file_size.render()) == ("llama", 128256, "4.58 GiB")
    assert run.mmap is None and not run.dry_run  # no load-mode line, and 2024 named a mapped buffer "CPU"
    assert log.build == BuildInfo(3600, "2fb92678")
    assert (log.eval.tokens, log.eval.tokens_per_second) == (127, 102.87)
    assert run.total(K.COMPUTE) == round(584.01 * 2**20)


def test_late_2024_cpu_spelling():
    log = parse_llamacpp_log(LLAMA_2024_12_CPU)
    run = log.run
    assert (run.mmap, run.settings.n_ctx_seq, run.settings.n_ubatch) == (True, 512, 2048)
    assert (run.caches[0].cells, run.caches[0].part_type("K")) == (512, "f16")
    assert {"NEON", "DOTPROD", "AARCH64_REPACK"} <= log.cpu_features and log.n_threads == 8
    assert log.eval is None  # an embedding run decodes nothing: its 0.00 ms / inf line is no speed


def test_2025_iswa_split_over_gpu_and_host():
    run = parse_llamacpp_log(LLAMA_2025_ISWA_GPU).run
    assert (run.load_mode, run.mmap, run.offloaded) == ("false", False, (20, 27))
    assert [(c.window, c.cells, c.layers, c.seqs) for c in run.caches] == [
        ("non-SWA", 4096, 4, "1 seqs"), ("SWA", 4096, 22, "1 seqs")]
    assert (run.settings.swa_full, run.settings.type_k, run.settings.flash_attn) == (True, "q8_0", "1")
    assert run.total(K.KV, "CUDA0") == 76 * 2**20 and run.total(K.KV, "CPU") == 28 * 2**20
    assert parse_llamacpp_log(LLAMA_2025_ISWA_GPU).build == BuildInfo(5600, "0d398442")


def test_server_memory_breakdown_with_a_gpu_row():
    log = parse_llamacpp_log(LLAMA_2025_SERVER_BREAKDOWN)
    gpu, host = log.run.breakdown
    assert (gpu.name, gpu.description, gpu.total, gpu.free, gpu.self_mib, gpu.model, gpu.context, gpu.compute,
            gpu.unaccounted) == ("CUDA0", "RTX 4090", 24077, 945, 19187, 17904, 384, 898, 3945)
    assert (host.name, host.total, host.self_mib, host.model, host.compute) == ("Host", None, 178, 166, 12)
    assert log.build == BuildInfo(6700, "1d8a1b2c") and log.eval.tokens_per_second == 119.05


def test_llama_cpp_python_recurrent_cache_and_a_peak_rss_line():
    log = parse_llamacpp_log(LLAMA_CPP_PYTHON_RECURRENT)
    cache = log.run.caches[0]
    assert [(p.name, p.type_name, p.mib) for p in cache.parts] == [("R", "f32", "0.42"), ("S", "f32", "2.25")]
    assert cache.render() == "size = 2.67 MiB (1 cells, 24 layers, 1 seqs), R (f32): 0.42 MiB, S (f32): 2.25 MiB"
    assert _buffers(LLAMA_CPP_PYTHON_RECURRENT)[1] == (K.RECURRENT, "CPU", "2.67")
    assert (log.peak_rss, log.peak_rss_source) == (round(412.5 * 2**20), "peak RSS line")
    assert log.eval.tokens_per_second == 76.75


@pytest.mark.parametrize("line, expected", [
    ("peak RSS: 412.5 MiB", round(412.5 * 2**20)),
    ("peak_rss_bytes = 184983552", 184983552),
    ("Peak RSS = 2 GiB", 2 * 2**30),
    ("peak RSS: 1000 kB", 1024000),
    ("peak RSS: 1000", 1000),
])
def test_peak_rss_spellings(line, expected):
    assert parse_llamacpp_log(LLAMA_2024_12_CPU + line + "\n").peak_rss == expected


@pytest.mark.parametrize("text", [
    "",
    "hello world\n",
    "Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: eval time = 3 ms\n",
    "\x00\x01GGUF\x03\x00binary",
    (LOGS / "README.md").read_text(),  # talks about the lines, but is not a run
])
def test_text_that_is_not_a_llamacpp_log_is_one_clear_error(text):
    with pytest.raises(LlamaCppLogError) as e:
        parse_llamacpp_log(text)
    assert str(e.value) == NOT_A_LOG and "\n" not in NOT_A_LOG
    assert isinstance(e.value, BudgetError)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(LLAMA_2024_CUDA.splitlines() + LLAMA_2025_ISWA_GPU.splitlines()
                                + ["garbage = 1", "buffer size = x MiB", "size = 1 MiB (", "- type q4: x tensors"])
                | st.text(max_size=80), max_size=40))
def test_any_text_reads_or_fails_with_the_one_error(lines):
    text = "\n".join(lines)
    try:
        log = parse_llamacpp_log(text)
    except LlamaCppLogError as e:
        assert str(e) == NOT_A_LOG
    else:
        assert log.loads


BARE_FEATURES = ("CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX_VNNI = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | "
                 "AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | LLAMAFILE = 1 | OPENMP = 1 | "
                 "REPACK = 1 | ")


def test_llama_cpp_python_prints_its_cpu_features_bare():
    """llama-cpp-python (verbose) prints `llama_print_system_info()` as a line of its own, without
    llama-cli's `system_info: n_threads = …` head: the features are read all the same."""
    text = (LOGS / "gemma3-270m-q4_k_m_ctx2048_f16.log").read_text()
    text = "\n".join(BARE_FEATURES if "system_info:" in line else line for line in text.splitlines())
    log = parse_llamacpp_log(text)
    assert {"AVX2", "AVX512", "REPACK"} <= log.cpu_features and log.n_threads is None
