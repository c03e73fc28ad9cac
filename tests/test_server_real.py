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
from server_support import (
    ServerRun, complete, fill_with_letters, mib, one_image, one_long_prompt, png, rss_now, run_server, serving,
)

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


def _wide_vocabulary(n_vocab: int) -> dict[str, object]:
    """`runnable_desc`'s tokenizer with normal pieces added up to `n_vocab` tokens (a gemma3-sized vocabulary)."""
    base = runnable_desc().extra_kv
    tokens = list(base["tokenizer.ggml.tokens"])  # type: ignore[call-overload]
    kinds = list(base["tokenizer.ggml.token_type"])  # type: ignore[call-overload]
    added = n_vocab - len(tokens)
    return {"n_vocab": n_vocab, "tied": True, "extra_kv": {
        **base, "tokenizer.ggml.tokens": tokens + [f"▁w{i}" for i in range(added)],
        "tokenizer.ggml.scores": [0.0] * n_vocab, "tokenizer.ggml.token_type": kinds + [1] * added}}


def _each_slot(slots: int):
    """One short request (32 byte tokens, 32 generated) on every slot in turn: each slot's sampler samples."""
    def drive(url: str) -> None:
        for slot in range(slots):
            complete(url, [3 + (slot * 31 + i) % 256 for i in range(32)], n_predict=32, id_slot=slot, ignore_eos=True,
                     temperature=0.0)
    return drive


def test_every_slot_that_has_sampled_holds_its_sampler(capsys, tmp_path):
    """`runtime_memory` Rule 11 on the real server: four slots that have each served a request hold three samplers
    (12 B a token of a 262,144-token vocabulary: 9 MiB) and three logits rows more than one slot with the same cells
    (-c 4096: one stream of 4096, or four of 1024); the predicted short ends differ by as much, within 2.5 MiB (what
    else a slot keeps is the process's; measured 12.2 MiB more, predicted 12.0). Without the samplers the prediction
    is 9 MiB short."""
    model = _write(tmp_path, "vocab.gguf", **_wide_vocabulary(262_144))
    measured, predicted = [], []
    for slots in (1, 4):
        args = (str(model), "--ctx", "4096", "-np", str(slots), "--cache-ram", "0")
        d = fit(capsys, *args)
        with serving(d["command"]["llama_server"], tmp_path / f"np{slots}.log") as (url, pid):
            _each_slot(slots)(url)
            measured.append(rss_now(pid)[0])  # resident now: loading the vocabulary peaks higher for a moment
        predicted.append(d["runtime_memory"]["short"]["total"])
        assert d["runtime_memory"]["short"]["sampler"] == slots * 12 * 262_144
    grown, priced = measured[1] - measured[0], predicted[1] - predicted[0]
    assert grown > 3 * 12 * 262_144, grown / MiB  # llama.cpp holds them
    assert abs(grown - priced) <= 2.5 * MiB, (grown / MiB, priced / MiB)
