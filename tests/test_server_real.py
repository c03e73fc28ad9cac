"""The llama-server command `fit` prints, run for real on models and projectors the tests write: it starts, and
what it prints and holds is what the full load predicted.

Every test here runs llama-server (see llama_support: CI fails without one).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from gguf_factory import ProjectorDesc, write_gguf, write_projector
from runnable_model import runnable_desc
from server_support import ServerRun, fill_with_letters, mib, one_image, one_long_prompt, png, run_server

from gguf_budget.gui.cli import main

MiB = 1024**2

pytestmark = pytest.mark.slow  # a real llama-server filling its prompt cache for minutes (CI hands the file out first)

MACHINE = ("--host-available", "16G", "--no-gpu")


def _write(tmp_path: Path, file: str, **changes: object) -> Path:
    return write_gguf(tmp_path / file, replace(runnable_desc(context_length=8192), **changes))[0]


@pytest.fixture
def llama(tmp_path: Path) -> Path:
    return _write(tmp_path, "llama.gguf", n_layer=3)


@pytest.fixture
def gemma(tmp_path: Path) -> Path:
    """A sliding-window model llama.cpp loads: gemma3, window 128, 6 layers (5 sliding), heads of 64."""
    return _write(tmp_path, "gemma.gguf", arch="gemma3", name="tiny-runnable-gemma3", n_layer=6, qk_norm=True,
                  post_norms=True, sliding_window=128, tied=True, head_dim=64)


def fit(capsys, *args: str) -> dict:
    assert main(["fit", *args, *MACHINE, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def run_printed(capsys, tmp_path: Path, *args: str, drive=lambda url: None) -> tuple[dict, ServerRun]:
    d = fit(capsys, *args)
    assert main(["fit", *args, *MACHINE, "--print-command"]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed == d["command"]["llama_server"]
    return d, run_server(printed, tmp_path / "server.log", drive)


def assert_target_buffers(d: dict, run: ServerRun) -> None:
    host = d["runtime_memory"]["devices"][0]
    printed = run.log.target.buffers
    assert printed[("model", "CPU_Mapped")] == [mib(host["mapped_weights"])]
    assert sum(float(x) for x in printed[("KV", "CPU")]) == pytest.approx(host["kv"] / MiB, abs=0.011)
    assert printed[("output", "CPU")] == [mib(host["output"])]
    assert printed[("compute", "CPU")] == [mib(host["compute"])]


@pytest.mark.parametrize("slots", [("-np", "auto"), ("-np", "3"), ("-np", "2", "--kv-unified")])
def test_the_slots_command_starts_and_prints_the_predicted_buffers(capsys, tmp_path, llama, gemma, slots):
    for model in (llama, gemma):
        d, run = run_printed(capsys, tmp_path, str(model), "--ctx", "2048", *slots)
        assert_target_buffers(d, run)
        s = d["server"]["slots"]
        assert f"initializing, n_slots = {s['n_seq']}, n_ctx_slot = {s['slot_ctx']}" in run.log.text


def test_a_projector_and_a_draft_load_beside_the_model_with_the_predicted_buffers(capsys, tmp_path, llama):
    mmproj = write_projector(tmp_path / "mmproj.gguf", ProjectorDesc(n_embd=256, n_ff=1024, n_head=4, n_layer=4,
                                                                     image_size=224, patch_size=14))
    draft = _write(tmp_path, "draft.gguf", n_layer=2)
    d, run = run_printed(capsys, tmp_path, str(llama), "--ctx", "2048", "-np", "2", "--mmproj", str(mmproj),
                         "--draft", str(draft), drive=one_image(png(224, 224)))
    assert_target_buffers(d, run)
    p, dr = d["server"]["projector"], d["server"]["draft"]
    assert run.log.projector == (mib(p["weights"]), mib(p["compute"]))
    drafted = run.log.draft.buffers
    assert drafted[("model", "CPU_Mapped")] == [mib(dr["weights"]["host"])]
    assert drafted[("KV", "CPU")] == [mib(dr["kv"]["host"])]
    assert drafted[("compute", "CPU")] == [mib(dr["compute"])] and drafted[("output", "CPU")] == [mib(dr["output"])]
    assert "adding speculative implementation 'draft-simple'" in run.log.text


def test_the_checkpoints_a_sliding_window_server_makes_are_the_size_predicted(capsys, tmp_path, gemma):
    d, run = run_printed(capsys, tmp_path, str(gemma), "--ctx", "2048", drive=one_long_prompt(150))
    one = d["server"]["checkpoints"]["one_bytes"]
    assert run.log.checkpoints and set(run.log.checkpoints) == {f"{one / MiB:.3f}"}


def test_a_server_that_fills_its_prompt_cache_peaks_within_ten_percent_of_the_prediction(capsys, tmp_path):
    # Wide heads on a narrow model: 32 KiB of KV a cell (8 layers × K and V × 8 heads × 128 × 2 B) for a third of the
    # prefill work a token of a 512-wide model with 16 KiB a cell costs, so the cache fills with half the tokens.
    model = _write(tmp_path, "wide.gguf", n_layer=8, n_embd=256, n_ff=512, n_head=8, n_head_kv=8, head_dim=128)
    # 745 letters are 746 tokens (BOS) and 2 generated: states of 748 cells × (32 KiB + 12 B) ≈ 23.4 MiB, so 8
    # of them hold 187 of the 192 MiB; then one prompt fills the context
    d, run = run_printed(capsys, tmp_path, str(model), "--ctx", "4096", "--cache-ram", "192",
                         drive=fill_with_letters(9, 745, last_chars=3900))
    states = run.log.cache_states
    assert states and 0.95 * 192 < max(float(m) for _, m in states) <= 192  # the cache did fill, to its limit
    predicted = d["server"]["peak_rss_server"]
    assert abs(run.peak_rss - predicted) <= 0.10 * run.peak_rss, (run.peak_rss / MiB, predicted / MiB)
