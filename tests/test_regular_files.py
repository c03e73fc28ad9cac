"""Only regular files are models: a FIFO, a device, a socket or a folder is refused in one line,
never opened for reading, never a hang; odd paths (a symlink loop, a name over 255 bytes, a
folder without search permission) say what is wrong, never escape as `OSError`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from gguf_factory import ArchDesc, write_gguf
from hostile_support import (
    assert_one_line_exit_2, make_fifo, make_socket, make_symlink_loop, outcome_as_nobody, run_cli,
    world_readable_folder,
)

from gguf_budget.core import ModelLoadError, load_model
from gguf_budget.core.gguf.header import read_header

ODD_FILES = {
    "fifo": (make_fifo, "it is a FIFO (named pipe), not a regular file"),
    "socket": (make_socket, "it is a socket, not a regular file"),
    "folder": (lambda p: (p.mkdir(), p)[1], "it is a folder, not a regular file"),
    "symlink loop": (lambda p: make_symlink_loop(p.parent), "symlink loop"),
    "name over 255 bytes": (lambda p: p.with_name("x" * 300 + ".gguf"), "file name too long"),
}


@pytest.mark.parametrize("kind", sorted(ODD_FILES))
def test_the_cli_refuses_odd_files_in_one_line(tmp_path, kind):
    make, fragment = ODD_FILES[kind]
    path = make(tmp_path / "m.gguf")
    assert_one_line_exit_2(run_cli(["inspect", str(path)]), fragment)


def test_a_character_device_is_refused_without_reading_it():
    with pytest.raises(ModelLoadError, match="/dev/zero: it is a character device, not a regular file"):
        read_header("/dev/zero")


def test_a_fifo_shard_is_refused(tmp_path):
    first, second = write_gguf(tmp_path / "m.gguf", ArchDesc(n_layer=2), "header_only", split_max_tensors=8)[:2]
    second.unlink()
    make_fifo(second)
    assert_one_line_exit_2(run_cli(["inspect", str(first)]), second.name, "FIFO")


@pytest.fixture
def shared_folder():
    folder = world_readable_folder()
    yield folder
    for path in folder.iterdir():
        path.chmod(0o755)
    shutil.rmtree(folder)


def test_a_folder_without_search_permission_is_a_load_error(shared_folder):
    locked = shared_folder / "locked"
    locked.mkdir()
    model = write_gguf(locked / "m.gguf", ArchDesc(), "header_only")[0]
    locked.chmod(0o600)
    report = outcome_as_nobody(lambda: load_model(model))
    assert report == f"ModelLoadError: cannot read {model}: permission denied"


def test_an_unreadable_file_is_a_load_error(shared_folder):
    model = write_gguf(shared_folder / "m.gguf", ArchDesc(), "header_only")[0]
    model.chmod(0o200)
    report = outcome_as_nobody(lambda: load_model(model))
    assert report == f"ModelLoadError: cannot read {model}: permission denied"


def test_a_missing_file_is_still_no_such_file(tmp_path):
    with pytest.raises(ModelLoadError, match="^no such file: "):
        load_model(Path(tmp_path) / "gone.gguf")
