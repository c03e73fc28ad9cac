"""Every fact read from metadata is type-checked: a key of the wrong type, a negative count or
an array of the wrong length is one `GGUFFormatError` naming the key and its byte offset —
never a `TypeError`, never a silent guess."""

from __future__ import annotations

import json
import struct

import pytest
from gguf.constants import GGUFValueType as V
from gguf_factory import ArchDesc, write_gguf
from hostile_support import assert_one_line_exit_2, run_cli

from gguf_budget.core import GGUFFormatError, load_model
from gguf_budget.core.gguf.header import read_header

HUGE = "x" * ((1 << 20) + 1)  # over the reader's keep limit: read as a SkippedString

WRONG = {
    "head_count a 1 MiB string": ("llama.attention.head_count", (V.STRING, HUGE),
                                  "must be a non-negative integer or an array of 2 of them, not a string"),
    "head_count strings": ("llama.attention.head_count", (V.ARRAY, (V.STRING, ["4", "4"])), "array of 2 of them"),
    "head_count_kv floats": ("llama.attention.head_count_kv", (V.ARRAY, (V.FLOAT32, [1.0, 2.0])),
                             "array of 2 of them"),
    "head_count_kv too long": ("llama.attention.head_count_kv", (V.ARRAY, (V.UINT32, [1, 2, 3])),
                               "has 3 entries for 2 layers"),
    "feed_forward_length negative": ("llama.feed_forward_length", (V.INT32, -5), "not the number -5"),
    "block_count a string": ("llama.block_count", (V.STRING, "2"), "must be a non-negative integer, not a string"),
    "block_count a bool": ("llama.block_count", (V.BOOL, True), "not a boolean"),
    "context_length a float": ("llama.context_length", (V.FLOAT32, 4096.0), "not a float"),
    "embedding_length an array": ("llama.embedding_length", (V.ARRAY, (V.UINT32, [64])), "not an array of 1"),
    "sliding_window a string": ("llama.attention.sliding_window", (V.STRING, "16"), "not a string"),
    "expert_count negative": ("llama.expert_count", (V.INT64, -1), "not the number -1"),
    "window pattern of strings": ("llama.attention.sliding_window_pattern", (V.ARRAY, (V.STRING, ["a"])),
                                  "must be an array of booleans or a non-negative integer"),
    "tokens of integers": ("tokenizer.ggml.tokens", (V.ARRAY, (V.UINT32, [1, 2, 3])), "must be an array of strings"),
    "architecture a number": ("general.architecture", (V.UINT32, 7), "must be a string, not the number 7"),
    "architecture 200 characters": ("general.architecture", (V.STRING, "a" * 200), "is 200 characters long"),
    "name a number": ("general.name", (V.UINT32, 7), "must be a string"),
    "file_type a string": ("general.file_type", (V.STRING, "Q4_K_M"), "must be a non-negative integer"),
}


@pytest.mark.parametrize("case", sorted(WRONG))
def test_a_wrongly_typed_fact_is_one_error_at_its_key(tmp_path, case):
    key, typed, fragment = WRONG[case]
    desc = ArchDesc(sliding_window=16, typed_kv={key: typed})
    path = write_gguf(tmp_path / "m.gguf", desc, "header_only")[0]
    offset = read_header(str(path)).key_offsets[key]
    with pytest.raises(GGUFFormatError) as info:
        load_model(path)
    message = str(info.value)
    assert key in message and fragment in message and "\n" not in message
    assert info.value.offset == offset and message.endswith(f"at byte {offset}")


def test_the_cli_reports_a_wrongly_typed_per_layer_key_in_one_line(tmp_path):
    desc = ArchDesc(typed_kv={"llama.attention.head_count": (V.STRING, HUGE)})
    path = write_gguf(tmp_path / "m.gguf", desc, "header_only")[0]
    assert_one_line_exit_2(run_cli(["inspect", str(path)]), "llama.attention.head_count must be")


def test_a_fact_that_contradicts_the_tensors_names_its_key_offset(tmp_path):
    desc = ArchDesc(typed_kv={"llama.block_count": (V.UINT32, 9)})
    path = write_gguf(tmp_path / "m.gguf", desc, "header_only")[0]
    offset = read_header(str(path)).key_offsets["llama.block_count"]
    with pytest.raises(GGUFFormatError, match=f"block_count is 9 but the tensor directory has 2 blocks at byte {offset}"):
        load_model(path)


def test_a_split_number_of_the_wrong_type_says_so(tmp_path):
    first, second = write_gguf(tmp_path / "m.gguf", ArchDesc(n_layer=2), "header_only", split_max_tensors=8)[:2]
    data = second.read_bytes()
    value_at = read_header(str(second)).key_offsets["split.no"] + 8 + len("split.no")
    assert data[value_at:value_at + 6] == struct.pack("<IH", V.UINT16, 1)
    second.write_bytes(data[:value_at] + struct.pack("<IQ", V.STRING, 1) + b"1" + data[value_at + 6:])
    with pytest.raises(GGUFFormatError) as info:
        load_model(first)
    assert f"split.no must be a non-negative integer, not a string (1 characters) at byte {value_at - 16}" \
        in str(info.value)


def test_a_truncated_download_says_incomplete_file(tmp_path):
    complete = write_gguf(tmp_path / "c.gguf", ArchDesc(), "complete")[0]
    data_offset = read_header(str(complete)).data_offset
    partial = tmp_path / "partial.gguf"
    partial.write_bytes(complete.read_bytes()[: data_offset + 1000])
    skeleton = write_gguf(tmp_path / "s.gguf", ArchDesc(), "header_only")[0]
    assert load_model(partial).incomplete and not load_model(skeleton).incomplete
    text = run_cli(["inspect", str(partial)]).stdout
    assert "incomplete file?" in text and "partial download" in text
    assert "incomplete file?" not in run_cli(["inspect", str(skeleton)]).stdout
    assert json.loads(run_cli(["inspect", "--json", str(partial)]).stdout)["incomplete"] is True
