"""`fit`'s llama-server options: what they print and, for a projector or draft that is not one, one line and nothing else."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from gguf_factory import ArchDesc, ProjectorDesc, write_gguf, write_projector

from gguf_budget.gui.cli import main

MACHINE = ("--host-available", "16G", "--no-gpu")
TEXT = ArchDesc(n_layer=2, n_embd=128, tokens=300, context_length=4096)


@pytest.fixture
def text_model(tmp_path):
    return write_gguf(tmp_path / "text.gguf", TEXT, "header_only")[0]


def bad(capsys, *args: str) -> str:
    """The one line a refused input gets; nothing on stdout."""
    try:
        code = main(["fit", *args, *MACHINE])
    except SystemExit as e:  # argparse's own refusal
        code = e.code
    assert code == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1, err
    return err


def test_a_text_model_given_as_a_projector_is_one_line(capsys, tmp_path, text_model):
    assert "is not a vision projector (architecture 'llama'" in bad(capsys, str(text_model), "--mmproj", str(text_model))


def test_a_projector_for_another_model_width_is_one_line(capsys, tmp_path, text_model):
    other = write_projector(tmp_path / "mm.gguf", ProjectorDesc(text_embd=256))
    assert "feeds a model 256 wide" in bad(capsys, str(text_model), "--mmproj", str(other))


def test_an_audio_only_projector_and_a_file_that_is_not_gguf_are_one_line(capsys, tmp_path, text_model):
    audio = write_projector(tmp_path / "audio.gguf", ProjectorDesc(has_vision_encoder=False, text_embd=128))
    assert "without a vision encoder" in bad(capsys, str(text_model), "--mmproj", str(audio))
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"not a gguf at all" * 10)
    bad(capsys, str(text_model), "--mmproj", str(junk))
    bad(capsys, str(text_model), "--draft", str(junk))


def test_a_draft_llama_cpp_would_refuse_is_one_line(capsys, tmp_path, text_model):
    counts = write_gguf(tmp_path / "d1.gguf", replace(TEXT, tokens=600), "header_only")[0]
    assert "its vocabulary has 600 tokens, the model's 300" in bad(capsys, str(text_model), "--draft", str(counts))
    texts = write_gguf(tmp_path / "d2.gguf", replace(TEXT, extra_kv={"tokenizer.ggml.tokens": [f"x{i}" for i in range(300)]}),
                       "header_only")[0]
    assert "token 5 differs ('x5' vs the model's 't5')" in bad(capsys, str(text_model), "--draft", str(texts))
    projector = write_projector(tmp_path / "mm.gguf", ProjectorDesc(text_embd=128))
    assert "is a vision projector" in bad(capsys, str(text_model), "--draft", str(projector))
    no_vocab = write_gguf(tmp_path / "d3.gguf", replace(TEXT, tokens=0), "header_only")[0]
    assert "no vocabulary" in bad(capsys, str(text_model), "--draft", str(no_vocab))


@pytest.mark.parametrize("args", [("--parallel", "0"), ("--parallel", "many"), ("--cache-ram", "-2"),
                                  ("--ctx-checkpoints", "-1"), ("--image-size", "10x"), ("--draft-gpu-layers", "-3")])
def test_out_of_range_server_options_are_one_line(capsys, text_model, args):
    bad(capsys, str(text_model), *args)


def test_fit_prints_each_server_line_its_json_and_the_flags(capsys, tmp_path, text_model):
    mm = write_projector(tmp_path / "mm.gguf", ProjectorDesc(text_embd=128))
    draft = write_gguf(tmp_path / "draft.gguf", replace(TEXT, n_layer=1), "header_only")[0]
    args = [str(text_model), "--ctx", "2048", "-np", "auto", "--cache-ram", "64", "--mmproj", str(mm), "--draft", str(draft),
            *MACHINE]
    assert main(["fit", *args]) == 0
    text = capsys.readouterr().out
    for label in ("Slots ", "Cache RAM ", "Checkpoint ", "Projector ", "Draft ", "Session ", "Counted ",
                  "Worst case "):
        assert f"\n{label}" in text
    flat = " ".join(text.split())  # the text wraps at 100 columns
    assert "4 slots sharing one unified KV cache of 2304 cells" in flat and "--cache-ram 64" in flat
    assert "ctx 2,304 (2,048 as asked + 256 for one image in each slot)" in flat
    assert main(["fit", *args, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    s = d["server"]
    assert (d["ctx"], d["ctx_image_tokens"]) == (2304, 4 * 64)
    assert s["slots"] == {"asked": None, "n_seq": 4, "kv_unified": True, "n_ctx": 2304, "ctx_seq": 2304,
                          "slot_ctx": 2304, "outputs": 16}
    assert s["prompt_cache"] == {"cache_ram_mib": 64, "chosen": False, "default_mib": 8192, "full_bytes": 64 << 20}
    assert s["projector"]["image_tokens"] == 64 and s["draft"]["gpu_layers"] == 0
    assert main(["fit", *args, "--print-command"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.endswith(f"-np 4 --kv-unified --cache-ram 64 --mmproj {mm} -md {draft} --spec-type draft-simple -ngld 0")
    assert " -c 2304 " in line


def test_an_asked_ctx_is_the_texts_and_each_slot_gets_room_for_one_image(capsys, tmp_path, text_model):
    """auto_ctx Rule 1: llama-server puts an image's tokens in the slot's context, so -c holds both."""
    mm = write_projector(tmp_path / "mm.gguf", ProjectorDesc(text_embd=128))
    base = [str(text_model), "--ctx", "2048", "-np", "2", *MACHINE, "--json"]
    assert main(["fit", *base]) == 0
    without = json.loads(capsys.readouterr().out)
    assert main(["fit", *base, "--mmproj", str(mm)]) == 0
    beside = json.loads(capsys.readouterr().out)
    tokens = beside["server"]["projector"]["image_tokens"]
    assert (without["ctx"], without["ctx_image_tokens"]) == (2048, 0)
    assert (beside["ctx"], beside["ctx_image_tokens"]) == (2048 + 2 * tokens, 2 * tokens)
    assert beside["kv"]["engine"] > without["kv"]["engine"]
    assert main(["fit", *base[:-1], "--mmproj", str(mm), "--print-command"]) == 0
    assert f" -c {2048 + 2 * tokens} " in capsys.readouterr().out


def test_plan_takes_the_projector_out_of_the_budget_and_quants_carries_the_server_in_every_row(capsys, tmp_path,
                                                                                               text_model):
    mm = write_projector(tmp_path / "mm.gguf", ProjectorDesc(text_embd=128))
    assert main(["plan", str(text_model), "--budget", "64M", "--no-measure", "--mmproj", str(mm), "--json"]) == 0
    beside = json.loads(capsys.readouterr().out)
    taken = beside["projector"]["weights"] + beside["projector"]["compute"]
    assert beside["projector"]["budget_left"] == beside["budget"] == 64 * 2**20 - taken
    assert main(["plan", str(text_model), "--budget", "100K", "--mmproj", str(mm)]) == 2
    assert "nothing of the 100.00 KiB budget is left" in capsys.readouterr().err
    tight = ("--host-available", "1G", "--host-reserve", "0", "--no-gpu", "--no-measure", "--json")
    assert main(["quants", str(text_model), *tight]) == 0
    assert {r["verdict"] for r in json.loads(capsys.readouterr().out)["rows"]} == {"cpu_only"}
    assert main(["quants", str(text_model), *tight, "--cache-ram", "2048", "--worst-case", "--mmproj", str(mm)]) == 3
    assert {r["verdict"] for r in json.loads(capsys.readouterr().out)["rows"]} == {"does_not_fit"}
