"""A projector's counts are checked against its tensor directory, and its graph is priced per block shape
(issue #37): a 4-byte edit of `clip.vision.block_count` to 10^6 once grew `fit --mmproj` to 3.9 GB, and
a 64-wide projector whose header said 2^32 - 1 was priced at "compute 6.08 TiB". Work is counted, never timed."""

from __future__ import annotations

import struct
from dataclasses import replace
from pathlib import Path

import pytest
from gguf_factory import ArchDesc, ProjectorDesc, write_gguf, write_projector
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gguf_budget.core.errors import ModelLoadError
from gguf_budget.core.fit.buffers import projector_graph
from gguf_budget.core.fit.server.projector import read_projector
from gguf_budget.core.fit.buffers.graph_alloc import buffer_size
from gguf_budget.core.fit.buffers.projector_graph import VitShape, projector_compute_bytes, projector_nodes
from gguf_budget.gui.cli import main

MACHINE = ("--host-available", "16G", "--no-gpu")


def with_u32(path: Path, key: str, value: int) -> Path:
    """The projector with the UINT32 value of `key` replaced in place (a 4-byte edit)."""
    data = bytearray(path.read_bytes())
    at = data.index(key.encode()) + len(key)
    assert struct.unpack_from("<I", data, at)[0] == 4  # GGUFValueType.UINT32
    struct.pack_into("<I", data, at + 4, value)
    path.write_bytes(bytes(data))
    return path


@pytest.fixture
def projector(tmp_path: Path) -> Path:
    return write_projector(tmp_path / "mm.gguf", ProjectorDesc(text_embd=128))


@pytest.mark.parametrize("key, value, words", [
    ("clip.vision.block_count", 10**6, "block_count is 1000000 but block 2 has no tensors"),
    ("clip.vision.embedding_length", 2**32 - 1, "embedding_length is 4294967295 but the tensors are 64 wide"),
    ("clip.vision.attention.head_count", 2**32 - 1, "head_count 4294967295 does not divide the width 64"),
    ("clip.vision.attention.head_count", 0, "head_count 0 does not divide"),
])
def test_a_count_the_tensors_do_not_bear_out_is_one_line(capsys, tmp_path, projector, key, value, words):
    with_u32(projector, key, value)
    with pytest.raises(ModelLoadError, match=words):
        read_projector(str(projector))
    text = write_gguf(tmp_path / "text.gguf", ArchDesc(n_layer=2, n_embd=128, context_length=4096), "header_only")[0]
    assert main(["fit", str(text), "--mmproj", str(projector), *MACHINE]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and words in err


def test_the_ffn_width_is_the_ffn_tensors(projector):
    """clip.cpp multiplies by the FFN's tensors, whatever `feed_forward_length` says (old conversions say 0)."""
    honest = read_projector(str(projector))
    for claimed in (2**32 - 1, 0):
        lying = read_projector(str(with_u32(projector, "clip.vision.feed_forward_length", claimed)))
        assert lying.n_ff == honest.n_ff == 128
        assert lying.compute_bytes() == honest.compute_bytes()


def test_a_projector_of_many_blocks_replays_two():
    shape = VitShape(n_embd=64, n_ff=128, n_head=4, blocks=10**6, patch_size=8, width=64, height=64,
                     class_embd=True, mm_hidden=128, out_embd=128)
    assert len(projector_nodes(shape)) == len(projector_nodes(replace(shape, blocks=2)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blocks=st.integers(0, 9), width=st.sampled_from([64, 128, 1024]), ff=st.sampled_from([128, 4096]),
       side=st.sampled_from([32, 64, 224]), flash=st.booleans())
def test_two_blocks_reserve_what_every_block_reserves(monkeypatch, blocks, width, ff, side, flash):
    shape = VitShape(n_embd=width, n_ff=ff, n_head=4, blocks=blocks, patch_size=16, width=side, height=side,
                     class_embd=True, mm_hidden=2 * width, out_embd=width, flash_attn=flash)
    priced = projector_compute_bytes(shape)
    monkeypatch.setattr(projector_graph, "REPLAYED_BLOCKS", 10**9)
    assert buffer_size(projector_nodes(shape)) == priced
