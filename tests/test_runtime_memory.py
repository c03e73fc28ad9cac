"""What llama.cpp holds, predicted from the header and checked against every recorded run.

Each recorded CPU run of llama-cli (tests/data/llamacpp-logs) is re-estimated with its own
settings on a header-only skeleton of its model: weights, repacked copies, KV and output come out
exact (to the log's two decimals), the compute buffer within 1.5 %; the peak RSS band is checked
on these and every newer run by tests/test_peak_rss_band.py.
"""

from __future__ import annotations

import re

import pytest
from recorded_models import LOGS, load_recorded_models, model_of

from gguf_budget.core.evidence.compare import compare
from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.fit.estimate import FitRequest, estimate_fit
from gguf_budget.core.fit.buffers.repack import repacked
from gguf_budget.core.fit.runtime_types import EngineSettings
from gguf_budget.core.machine.gpu import GpuInfo
from gguf_budget.core.machine.snapshot import hypothetical_machine, what_if
from gguf_budget.core.model.spec import ModelSpec
from gguf_budget.core.units import human_bytes
from gguf_budget.core.views.fit_report import verdict_text

MiB = 1024 * 1024
GiB = 1024 * MiB
CPU_RUNS = sorted(p.name for p in LOGS.glob("[gs]*.log"))
AVX512 = frozenset({"AVX2", "AVX512"})


@pytest.fixture(scope="module")
def specs(tmp_path_factory) -> dict[str, ModelSpec]:
    return load_recorded_models(tmp_path_factory.mktemp("recorded"))


def _readme_runs() -> set[str]:
    """The llama-cli runs the logs' README lists (`name_ctx{512,2048}_f16.log` rows), brace patterns expanded."""
    names = set()
    for pattern in re.findall(r"^\| `([^`*]+\.log)`", (LOGS / "README.md").read_text(), re.MULTILINE):
        head, choices, tail = re.fullmatch(r"(.*)\{(.*)\}(.*)", pattern).groups()
        names |= {f"{head}{choice}{tail}" for choice in choices.split(",")}
    return names


def test_there_are_twelve_cpu_runs_and_they_are_every_run_the_readme_lists():
    """The bounds below are checked on every llama-cli run of the recorded set (a copy of
    the recorded logs, README included), none left out."""
    assert len(CPU_RUNS) == 12
    assert set(CPU_RUNS) == _readme_runs()


@pytest.mark.parametrize("name", CPU_RUNS)
def test_each_recorded_run_is_predicted(specs, name):
    """Every buffer as llama.cpp reserved it (peak RSS, what the process held, is tests/test_peak_rss_band.py's)."""
    c = compare(parse_llamacpp_log((LOGS / name).read_text()), specs[model_of(name)])
    for component in ("weights", "repacked", "KV", "output"):
        assert c.row(component).error == 0.0, component  # exact to the log's two decimals
    assert abs(c.row("compute").error) <= 0.015


def test_fit_params_projection_of_512_output_rows(specs):
    """llama-fit-params reserves a graph with 512 logits rows: 512 × 262,144 × 4 bytes = 512 MiB of it."""
    c = compare(parse_llamacpp_log((LOGS / "fitparams_gemma3-270m-q4_k_m_ctx8192_f16.log").read_text()),
                specs["gemma3"])
    assert c.request.engine.outputs == 512 and c.run.dry_run
    assert c.row("compute").error == 0.0 and c.row("compute").measured == round(514.50 * MiB)
    assert c.row("weights").measured is None and c.row("KV").measured is None  # a dry run allocated nothing


def test_the_repacked_tensors_are_the_ones_llama_cpp_repacked(specs):
    log = parse_llamacpp_log((LOGS / "gemma3-270m-q4_k_m_ctx2048_f16.log").read_text())
    e = estimate_fit(specs["gemma3"], hypothetical_machine(64 * GiB),
                     FitRequest(ctx=2048, engine=EngineSettings(cpu_features=log.cpu_features)))
    assert e.memory is not None
    assert set(e.memory.repacked_tensors) == set(log.run.repacked)
    assert e.memory.host.repack == 18 * 368_640 + 9 * 737_280  # Q4_K: 144 bytes per 256 weights


def test_mmap_splits_file_backed_from_anonymous(specs):
    spec = specs["gemma3"]
    mapped = estimate_fit(spec, hypothetical_machine(64 * GiB), FitRequest(ctx=2048, engine=EngineSettings(
        cpu_features=AVX512))).memory
    loaded = estimate_fit(spec, hypothetical_machine(64 * GiB), FitRequest(ctx=2048, engine=EngineSettings(
        cpu_features=AVX512, mmap=False))).memory
    assert mapped is not None and loaded is not None
    assert mapped.host.mapped_weights == spec.tensor_bytes and loaded.host.mapped_weights == 0
    # without mmap the 27 repacked tensors live only in CPU_REPACK: the CPU buffer holds the rest
    repacked_source = sum(t.nbytes for t in spec.tensors if t.name in set(loaded.repacked_tensors))
    assert repacked_source == loaded.host.repack == 18 * 368_640 + 9 * 737_280
    assert loaded.host.loaded_weights == spec.tensor_bytes - repacked_source
    assert loaded.host.anonymous == mapped.host.anonymous + spec.tensor_bytes - repacked_source
    assert loaded.peak_rss == mapped.peak_rss - repacked_source


def test_unknown_cpu_features_predict_no_repack(specs):
    e = estimate_fit(specs["gemma3"], hypothetical_machine(64 * GiB), FitRequest(ctx=2048))
    assert e.memory is not None and e.memory.cpu_features is None and e.memory.host.repack == 0


def test_the_snapshot_features_are_used_when_the_request_has_none(specs):
    from dataclasses import replace
    machine = replace(hypothetical_machine(64 * GiB), cpu_features=AVX512)
    e = estimate_fit(specs["gemma3"], machine, FitRequest(ctx=2048))
    assert e.memory is not None and len(e.memory.repacked_tensors) == 27


def test_tied_embeddings_on_the_host_count_once(specs):
    """CPU-only with tied embeddings: the output layer is the embedding table, not a second copy."""
    spec = specs["smollm2"]
    e = estimate_fit(spec, hypothetical_machine(64 * GiB), FitRequest(ctx=2048))
    assert e.weights.host_exact == spec.tensor_bytes == e.devices[0].weights


def test_without_a_context_the_context_sized_items_are_unknown_not_zero(model):
    from dataclasses import replace
    spec = replace(model(), context_length=None)
    m = estimate_fit(spec, hypothetical_machine(64 * GiB), FitRequest()).memory
    assert m is not None and (m.host.kv, m.host.compute, m.host.anonymous, m.peak_rss) == (None, None, None, None)
    assert m.host.output == 4 * 256 and m.host.mapped_weights == spec.tensor_bytes


def test_gpu_layers_move_the_compute_buffer_to_the_gpu(specs):
    spec = specs["smollm2"]
    machine = hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=24 * GiB)
    cpu = estimate_fit(spec, hypothetical_machine(64 * GiB), FitRequest(ctx=2048)).memory
    gpu = estimate_fit(spec, machine, FitRequest(ctx=2048, gpu_layers=31)).memory
    assert cpu is not None and gpu is not None
    # the graph runs where the layers are: the GPU's buffer is the whole graph's but the host's inputs and the
    # embeddings lookup, plus copies of the inputs it reads (sched Rule 5); CUDA's host buffer is CUDA_Host
    assert gpu.host.compute < cpu.host.compute and gpu.devices[1].compute > gpu.host.compute
    assert abs(gpu.devices[1].compute - cpu.host.compute) < 0.1 * cpu.host.compute
    assert (gpu.host.buffer, gpu.devices[1].buffer, cpu.host.buffer) == ("CUDA_Host", "CUDA0", "CPU")
    assert gpu.devices[1].loaded_weights == gpu.devices[1].anonymous - gpu.devices[1].kv - gpu.devices[1].compute


def test_a_gpu_with_no_layer_computes_large_batches_unless_op_offload_is_off(specs):
    """llama.cpp's scheduler sends an op whose weight is in host memory to a GPU for a batch of 32 rows or more
    (sched Rule 3): at -ngl 0 CUDA still allocates a compute buffer; `--no-op-offload` and RPC do not."""
    spec = specs["smollm2"]
    machine = hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=24 * GiB)
    cuda = estimate_fit(spec, machine, FitRequest(ctx=2048, gpu_layers=0)).memory
    off = estimate_fit(spec, machine, FitRequest(ctx=2048, gpu_layers=0, engine=EngineSettings(op_offload=False))).memory
    rpc = estimate_fit(spec, machine, FitRequest(ctx=2048, gpu_layers=0, engine=EngineSettings(gpu_backend="rpc"))).memory
    assert cuda is not None and off is not None and rpc is not None
    assert cuda.devices[1].compute > 0 and cuda.host.compute < off.host.compute
    assert off.devices[1].compute == rpc.devices[1].compute == 0


REPACK_TABLE = [
    # type name, rows, features → repacked
    ("Q4_K", 640, {"AVX2"}, True),
    ("Q4_K", 644, {"AVX2"}, False),        # rows not a multiple of 8
    ("Q4_K", 640, set(), False),
    ("Q4_0", 4096, {"AVX2"}, True),
    ("Q4_0", 4, {"NEON", "DOTPROD"}, True),  # Arm takes 4-row blocks
    ("Q2_K", 4096, {"AVX2"}, False),       # Q2_K needs AVX-512
    ("Q2_K", 4096, {"AVX2", "AVX512"}, True),
    ("Q6_K", 4096, {"AVX2", "AVX512"}, False),
    ("Q6_K", 4096, {"NEON", "MATMUL_INT8"}, True),
    ("Q8_0", 4096, {"AVX2", "AVX512"}, False),
    ("Q8_0", 4096, {"NEON", "DOTPROD"}, True),
    ("IQ4_NL", 4096, {"AVX2"}, True),
    ("Q5_0", 4096, {"AVX2", "AVX512", "NEON", "DOTPROD", "MATMUL_INT8"}, False),
]


@pytest.mark.parametrize("type_name, rows, features, expected", REPACK_TABLE)
def test_repack_rules(type_name, rows, features, expected):
    from gguf.constants import GGMLQuantizationType

    from gguf_budget.core.model.spec import ModelTensor
    t = ModelTensor(name="blk.0.ffn_down.weight", shape=(256, rows), ggml_type=GGMLQuantizationType[type_name],
                    nbytes=0, n_elements=256 * rows, shard=0, role="ffn", layer=0)
    assert repacked(t, frozenset(features)) is expected
    embd = ModelTensor(name="token_embd.weight", shape=(256, rows), ggml_type=GGMLQuantizationType[type_name], nbytes=0,
                       n_elements=256 * rows, shard=0, role="token_embd", layer=None)
    assert not repacked(embd, frozenset(features))  # row lookups, never a matrix multiply


def test_a_log_with_bare_cpu_features_predicts_its_repacked_copy(specs):
    """llama-cpp-python's `CPU : AVX2 = 1 | …` line (no `system_info:` head) gives the features the
    repacked copy is predicted from: 12.66 MiB, not 0."""
    text = (LOGS / "gemma3-270m-q4_k_m_ctx2048_f16.log").read_text()
    bare = "\n".join(line[line.index("CPU : "):] if "system_info:" in line else line for line in text.splitlines())
    c = compare(parse_llamacpp_log(bare), specs["gemma3"])
    assert c.row("repacked").measured == round(12.66 * MiB) and c.row("repacked").error == 0.0


RUNS = LOGS.parent / "llamacpp-runs"


def test_a_load_mode_none_log_prices_the_weights_as_llama_cpp_holds_them(specs):
    """`-lm none` (this llama.cpp's spelling of no mmap): the 27 repacked tensors are loaded straight
    into CPU_REPACK, so the CPU buffer is 235.16 − 12.66 = 222.51 MiB, not the whole file again."""
    c = compare(parse_llamacpp_log((RUNS / "gemma3_cli_short_lm-none.log").read_text()), specs["gemma3"])
    assert c.run.load_mode == "none" and c.request.engine.mmap is False
    assert c.row("weights").measured == round(222.51 * MiB) and c.row("weights").error == 0.0
    assert c.row("repacked").error == 0.0


def test_every_gpu_that_runs_a_split_gets_its_own_compute_buffer_and_fit_json_names_it(specs):
    """Two CUDA GPUs sharing the layers: each reserves a compute buffer (the second got none before), with
    pipeline parallelism's four copies of what crosses to it; `fit --json` names each buffer as llama.cpp prints it."""
    from gguf_budget.core.views.runtime_report import runtime_dict
    spec = specs["smollm2"]
    machine = hypothetical_machine(64 * GiB, gpu_count=2, gpu_total=24 * GiB)
    e = estimate_fit(spec, machine, FitRequest(ctx=2048, gpu_layers=31))
    one = estimate_fit(spec, hypothetical_machine(64 * GiB, gpu_count=1, gpu_total=24 * GiB),
                       FitRequest(ctx=2048, gpu_layers=31))
    assert e.memory is not None and one.memory is not None
    host, first, second = e.memory.devices
    assert first.compute and second.compute and first.compute > host.compute
    assert second.compute > one.memory.devices[1].compute  # the logits side, with the copies kept for pipelining
    devices = runtime_dict(e)["devices"]
    assert [d["compute_buffer"] for d in devices] == ["CUDA_Host", "CUDA0", "CUDA1"]


def test_a_gpu_whose_compute_buffer_would_not_fit_is_named_in_the_verdict(specs):
    """The second GPU holds its weights + KV with 1 MiB to spare, less than the compute buffer llama.cpp reserves there
    (CUDA1): the load does not fit (it was admitted with a note while the verdict left compute to the reserves), and the
    verdict names that GPU and its compute buffer."""
    spec = specs["smollm2"]
    request = FitRequest(ctx=2048, gpu_layers=31, tensor_split=(1.0, 1.0))
    roomy = estimate_fit(spec, hypothetical_machine(64 * GiB, gpu_count=2, gpu_total=24 * GiB), request)
    second = roomy.devices[2]
    gpus = (GpuInfo(index=0, name="big", total=24 * GiB, free=24 * GiB, used=0),
            GpuInfo(index=1, name="small", total=second.weights + second.kv + MiB,
                    free=second.weights + second.kv + MiB, used=0))
    tight = estimate_fit(spec, what_if(hypothetical_machine(64 * GiB), gpus=gpus), request)
    compute = tight.memory.devices[2].compute
    assert roomy.verdict.admitted and compute > MiB
    assert (tight.verdict, tight.shortfall) == ("does_not_fit", {"gpu1": compute - MiB})
    assert f"gpu1 short by {human_bytes(compute - MiB)}: " in verdict_text(tight)
    assert f"compute {human_bytes(compute)}" in verdict_text(tight)
