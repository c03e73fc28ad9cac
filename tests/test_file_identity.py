"""Is the model on screen still the file on disk? Real files changed the ways people change them."""

from __future__ import annotations

import os

from gguf_budget.core.gguf.file_identity import FileChange, change_text, model_change, model_identity


def test_unchanged_written_in_place_renamed_over_and_deleted(tmp_path):
    a, b = tmp_path / "m-00001-of-00002.gguf", tmp_path / "m-00002-of-00002.gguf"
    a.write_bytes(b"GGUF one")
    b.write_bytes(b"GGUF two")
    shards = (str(a), str(b))
    read = model_identity(shards)
    assert model_change(shards, read) is FileChange.UNCHANGED
    with b.open("ab") as f:                                         # a download still writing its second shard
        f.write(b"more")
    assert model_change(shards, read) is FileChange.REPLACED
    read = model_identity(shards)
    new = tmp_path / "new.part"
    new.write_bytes(b"GGUF one")                                    # same bytes, but a new file saved by rename
    new.replace(a)
    assert model_change(shards, read) is FileChange.REPLACED
    read = model_identity(shards)
    b.unlink()
    assert model_change(shards, read) is FileChange.DELETED


def test_a_path_that_became_a_folder_or_a_fifo_counts_as_gone(tmp_path):
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF")
    read = model_identity((str(path),))
    path.unlink()
    os.mkfifo(path)
    assert model_change((str(path),), read) is FileChange.DELETED   # stat only: the FIFO is never opened
    path.unlink()
    path.mkdir()
    assert model_change((str(path),), read) is FileChange.DELETED


def test_the_words_escape_the_path_and_name_what_to_do():
    text = change_text("/m/\x1b[2Jevil.gguf", FileChange.DELETED)
    assert "\\x1b[2J" in text and "\x1b" not in text and "File ▸ Reload" in text
    assert "changed on disk" in change_text("/m/a.gguf", FileChange.REPLACED)
