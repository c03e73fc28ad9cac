"""Split models open from any shard, merge into one ModelSpec, and name what is missing."""

from __future__ import annotations

import shutil

import pytest
from gguf_factory import ArchDesc, write_gguf

from gguf_budget.core import ModelLoadError, load_model

DESC = ArchDesc(n_layer=4)


@pytest.fixture
def shards(tmp_path):
    return write_gguf(tmp_path / "m.gguf", DESC, "header_only", split_max_tensors=12)


def test_any_shard_opens_the_whole_model(tmp_path, shards):
    whole = load_model(write_gguf(tmp_path / "whole.gguf", DESC, "header_only")[0])
    assert len(shards) == 4
    for shard in shards:
        spec = load_model(shard)
        assert spec.shards == tuple(str(p) for p in shards)
        assert spec.n_tensors == whole.n_tensors
        assert spec.layer_bytes == whole.layer_bytes and spec.global_bytes == whole.global_bytes
        assert spec.file_bytes == sum(p.stat().st_size for p in shards)


def test_a_missing_shard_is_named(shards):
    shards[2].unlink()
    with pytest.raises(ModelLoadError, match=r"missing shard m-00003-of-00004\.gguf of 4"):
        load_model(shards[0])


def test_a_shard_whose_keys_disagree_with_its_name_is_refused(shards):
    shutil.copy(shards[1], shards[2])
    with pytest.raises(ModelLoadError, match=r"split keys say shard 1 of 4, its name says 2 of 4"):
        load_model(shards[0])


def test_a_renamed_shard_cannot_pretend_to_be_whole(tmp_path, shards):
    lone = tmp_path / "renamed.gguf"
    shutil.copy(shards[0], lone)
    with pytest.raises(ModelLoadError, match="says it is shard 0 of 4"):
        load_model(lone)
