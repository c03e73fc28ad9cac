"""The recorded llama-server runs (tests/data/server-logs, made by tests/record_server_logs.py on the real
smollm2-135m and gemma3-270m): every buffer the server printed is the one predicted, and the slots, the
prompt cache, the projector and the draft each move the verdict and the largest ctx by what the log shows.

The models are the header-only skeletons of `recorded_models` (tensor for tensor the real files), the
projector the factory's `GEMMA3_PROJECTOR`: no model file and no llama.cpp are needed here.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from command_parse import Parsed, parse_llama_server, server_settings
from gguf_factory import write_projector
from recorded_models import load_recorded_models
from server_support import GEMMA3_PROJECTOR, ServerLog, mib, recorded_command, recorded_peak

from gguf_budget.core.evidence.compare import compare
from gguf_budget.core.evidence.llamacpp_log import parse_llamacpp_log
from gguf_budget.core.fit.server.draft import DraftModel
from gguf_budget.core.fit.estimate import estimate_fit
from gguf_budget.core.fit.ctx.max_ctx import largest_fitting_ctx
from gguf_budget.core.fit.server.projector import ProjectorSpec, read_projector
from gguf_budget.core.fit.server.types import ServerSettings
from gguf_budget.core.fit.server.slots import slot_kv_table
from gguf_budget.core.fit.types import FitEstimate, FitRequest, Reserves
from gguf_budget.core.machine.snapshot import hypothetical_machine
from gguf_budget.core.model.spec import LayerKind, ModelSpec

LOGS = Path(__file__).parent / "data" / "server-logs"
GiB = 1024**3
MiB = 1024**2
MACHINE = hypothetical_machine(16 * GiB)
NO_RESERVE = Reserves(0, 0)


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, ModelSpec]:
    return load_recorded_models(tmp_path_factory.mktemp("recorded"))


@pytest.fixture(scope="module")
def projector(tmp_path_factory) -> ProjectorSpec:
    return read_projector(str(write_projector(tmp_path_factory.mktemp("mmproj") / "mmproj.gguf", GEMMA3_PROJECTOR)))


def _log(name: str) -> tuple[ServerLog, Parsed]:
    text = (LOGS / f"{name}.log").read_text()
    return ServerLog(text), parse_llama_server(recorded_command(text))


def _model(models: dict[str, ModelSpec], path: str) -> ModelSpec:
    return models["gemma3" if "gemma3" in Path(path).name else "smollm2"]


def _estimate(name: str, models: dict[str, ModelSpec], projector: ProjectorSpec) -> tuple[ServerLog, FitEstimate]:
    """The recorded run's log, and the fit of the settings its printed command carries."""
    log, back = _log(name)
    draft = None if back.draft is None else DraftModel(_model(models, back.draft), int(back.draft_gpu_layers))
    server = server_settings(back, projector=projector if back.mmproj else None, draft=draft)
    request = FitRequest(ctx=back.ctx, gpu_layers=back.gpu_layers, server=server)
    return log, estimate_fit(_model(models, back.model), MACHINE, request)


def _kv_lines(spec: ModelSpec, e: FitEstimate, kv_type: str = "f16") -> list[str]:
    """The KV buffers llama.cpp prints: the full-attention cache, then (sliding models) the sliding one."""
    s = e.server
    assert s is not None and e.kv.ctx is not None
    table = slot_kv_table(spec, e.kv.ctx, kv_type, s.layout, ubatch=512, swa_full=False)
    by_kind: dict[LayerKind, int] = {}
    for layer, b in zip(spec.layers, table, strict=True):
        by_kind[layer.kind] = by_kind.get(layer.kind, 0) + (b or 0)
    return [mib(by_kind[k]) for k in (LayerKind.FULL, LayerKind.SWA) if k in by_kind]


@pytest.mark.parametrize("name", ["smollm2_ctx4096_np1", "smollm2_ctx4096_npauto", "smollm2_ctx4096_np4",
                                  "gemma3_ctx8192_np1", "gemma3_ctx8192_npauto", "smollm2_ctx4096_draft",
                                  "gemma3_ctx4096_mmproj"])
def test_every_buffer_the_server_printed_is_the_one_predicted(name, models, projector):
    log, e = _estimate(name, models, projector)
    spec = _model(models, parse_llama_server(recorded_command((LOGS / f"{name}.log").read_text())).model)
    host = e.memory.host
    printed = log.target.buffers
    assert printed[("model", "CPU_Mapped")] == [mib(host.mapped_weights)]
    assert printed[("KV", "CPU")] == _kv_lines(spec, e)
    assert printed[("output", "CPU")] == [mib(host.output)]
    assert printed[("compute", "CPU")] == [mib(host.compute)]
    d = e.server.draft
    if d is not None:
        drafted = log.draft.buffers
        assert drafted[("model", "CPU_Mapped")] == [mib(dict(d.weights)["host"])]
        assert drafted[("KV", "CPU")] == [mib(dict(d.kv)["host"])]
        assert drafted[("output", "CPU")] == [mib(d.output)] and drafted[("compute", "CPU")] == [mib(d.compute)]
        assert "adding speculative implementation 'draft-simple'" in log.text  # the draft is kept, not freed
    p = e.server.projector
    if p is not None:
        assert log.projector == (mib(p.weights), mib(p.compute))


@pytest.mark.parametrize("name", ["gemma3_ctx8192_np1", "gemma3_ctx8192_npauto"])
def test_each_checkpoint_the_server_made_is_the_size_predicted(name, models, projector):
    log, e = _estimate(name, models, projector)
    assert log.checkpoints and set(log.checkpoints) == {f"{e.server.checkpoint / MiB:.3f}"}


def test_a_server_that_filled_its_prompt_cache_peaks_within_ten_percent_of_the_prediction(models, projector):
    log, e = _estimate("smollm2_ctx4096_cache200_filled", models, projector)
    states = log.cache_states
    assert states and max(float(m) for _, m in states) > 0.85 * 200  # it did fill: 4 prompts of ~44.6 MiB
    peak = recorded_peak(log.text)
    assert abs(peak - e.peak_rss_server) <= 0.10 * peak


def _flip(models: dict[str, ModelSpec], spec: ModelSpec, ctx: int, base: ServerSettings, extra: ServerSettings,
          added: int) -> None:
    """On a host that holds the base load and half of what `extra` adds, the base fits and the extra does not;
    the largest ctx falls; and the extra adds `added` bytes to the host's need (what the log printed), beside what it
    changes of the host's compute buffer, logits rows, samplers and KV cells' metadata."""
    a = estimate_fit(spec, MACHINE, FitRequest(ctx=ctx, reserves=NO_RESERVE, server=base))
    b = estimate_fit(spec, MACHINE, FitRequest(ctx=ctx, reserves=NO_RESERVE, server=extra))
    # the need counts the host's compute buffer and logits rows too, which more slots change beside their KV, and
    # its samplers and KV cells' metadata (`runtime_memory` Rules 11–12: a sampler a slot)
    host_a, host_b = a.devices[0], b.devices[0]
    added += (host_b.compute + host_b.sampler + host_b.kv_cells) - (host_a.compute + host_a.sampler + host_a.kv_cells)
    assert b.devices[0].need - a.devices[0].need == added
    machine = hypothetical_machine(a.devices[0].need + added // 2)
    tight_a = FitRequest(ctx=ctx, reserves=NO_RESERVE, server=base)
    tight_b = replace(tight_a, server=extra)
    assert estimate_fit(spec, machine, tight_a).verdict.admitted
    assert not estimate_fit(spec, machine, tight_b).verdict.admitted
    cap = spec.context_length or ctx
    biggest_a = largest_fitting_ctx(spec, machine, tight_a, 0, cap)
    biggest_b = largest_fitting_ctx(spec, machine, tight_b, 0, cap)
    assert biggest_a is not None and biggest_a >= ctx and (biggest_b is None or biggest_b < ctx)


QUIET = ServerSettings(cache_ram_mib=0, ctx_checkpoints=0, worst_case=True)  # the worst case: every cache full


def test_automatic_slots_change_the_verdict_by_the_kv_the_server_printed(models, projector):
    one, _ = _log("gemma3_ctx8192_np1")
    auto, back = _log("gemma3_ctx8192_npauto")
    assert "n_parallel is set to auto, using n_parallel = 4 and kv_unified = true" not in auto.text  # the command says it
    assert back.n_parallel == 4 and back.kv_unified
    printed = sum(float(x) for x in auto.target.buffers[("KV", "CPU")]) - sum(float(x) for x in one.target.buffers[("KV", "CPU")])
    spec = models["gemma3"]
    added = (estimate_fit(spec, MACHINE, FitRequest(ctx=8192, server=replace(QUIET, n_parallel=None))).kv.engine
             - estimate_fit(spec, MACHINE, FitRequest(ctx=8192, server=QUIET)).kv.engine)
    assert f"{added / MiB:.2f}" == f"{printed:.2f}"
    _flip(models, spec, 8192, QUIET, replace(QUIET, n_parallel=None), added)


def test_a_two_gib_prompt_cache_changes_the_verdict_by_its_limit(models):
    log, back = _log("smollm2_ctx4096_cache2048")
    assert "prompt cache is enabled, size limit: 2048 MiB" in log.text and back.cache_ram == 2048
    _flip(models, models["smollm2"], 4096, QUIET, replace(QUIET, cache_ram_mib=2048), 2048 * MiB)


def test_a_projector_changes_the_verdict_by_its_printed_weights_and_compute(models, projector):
    log, _ = _log("gemma3_ctx4096_mmproj")
    weights, compute = log.projector
    added = projector.weight_bytes + projector.compute_bytes()
    assert f"{(projector.weight_bytes) / MiB:.2f}" == weights and f"{projector.compute_bytes() / MiB:.2f}" == compute
    _flip(models, models["gemma3"], 4096, QUIET, replace(QUIET, projector=projector), added)


def test_a_draft_changes_the_verdict_by_its_printed_weights_and_kv(models):
    log, _ = _log("smollm2_ctx4096_draft")
    spec = models["smollm2"]
    drafted = log.draft.buffers
    with_draft = replace(QUIET, draft=DraftModel(spec))
    e = estimate_fit(spec, MACHINE, FitRequest(ctx=4096, server=with_draft))
    added = e.server.held_on("host")
    assert [mib(dict(e.server.draft.weights)["host"])] == drafted[("model", "CPU_Mapped")]
    assert [mib(dict(e.server.draft.kv)["host"])] == drafted[("KV", "CPU")]
    _flip(models, spec, 4096, QUIET, with_draft, added)


@pytest.mark.parametrize("name", ["smollm2_ctx4096_np1", "smollm2_ctx4096_np4", "smollm2_ctx4096_npauto",
                                  "smollm2_ctx4096_cache200_filled", "smollm2_ctx4096_draft", "gemma3_ctx8192_np1",
                                  "gemma3_ctx8192_npauto", "gemma3_ctx4096_mmproj"])
def test_evidence_reads_every_slot_and_every_extra_a_server_log_printed(name, models):
    """`evidence` on a server log: the slots' KV exactly, and the peak RSS within ±10 % with the draft, the projector,
    the filled cache and the checkpoints the log printed (before: −47 % with a draft, −43 % with a filled cache, the
    KV of -np 4 −37 %: the draft's load was taken for the run, one slot was assumed, the extras left out)."""
    text = (LOGS / f"{name}.log").read_text()
    log = replace(parse_llamacpp_log(text), peak_rss=recorded_peak(text))
    back = parse_llama_server(recorded_command(text))
    assert log.server.slots == back.n_parallel and log.server.kv_unified == bool(back.kv_unified)
    assert log.server.cache_ram_mib == back.cache_ram
    assert (log.draft is not None) == (back.draft is not None)
    c = compare(log, _model(models, back.model))
    assert c.row("KV").error == 0
    assert abs(c.row("peak RSS").error) <= 0.10, c.row("peak RSS")
