"""Rates as spec sheets print them (issue #34 item 3): `1008GB/s` and `1008 GB/s` are 1.008·10¹² bytes per second,
`GiB/s` and a bare `G` are binary, and the command line and the window say back what they read."""

from __future__ import annotations

import json

import pytest
from gguf_factory import ArchDesc, write_gguf
from gui_support import child, open_model, type_into
from hypothesis import given
from hypothesis import strategies as st

from gguf_budget.core.errors import RequestError
from gguf_budget.core.ranges import BANDWIDTH
from gguf_budget.core.units import parse_rate, parse_size, rate_reading
from gguf_budget.gui.cli import main

GIB = 1 << 30


@pytest.mark.parametrize(("text", "bytes_per_s"), [
    ("1008GB/s", 1_008_000_000_000), ("1008 GB/s", 1_008_000_000_000), ("1008 gb/s", 1_008_000_000_000),
    ("1.008TB/s", 1_008_000_000_000), ("3.35 TB/s", 3_350_000_000_000), ("546 GB", 546_000_000_000),
    ("64 MB/s", 64_000_000), ("20GiB/s", 20 * GIB), ("20 GiB", 20 * GIB), ("20G", 20 * GIB), ("20G/s", 20 * GIB),
    ("512 MiB/s", 512 << 20), ("1000", 1000), ("1000 B/s", 1000), (".5 KB/s", 500),
])
def test_a_rate_reads_as_its_unit_says(text, bytes_per_s):
    assert parse_rate(text) == bytes_per_s == BANDWIDTH.parse(text)


@pytest.mark.parametrize("text", ["", "fast", "-1GB/s", "1e3 GB/s", "1 iB/s", "1 GB/ss", "1 XB/s", "GB/s",
                                  "9" * 30 + " PB/s"])
def test_a_text_that_is_no_rate_is_one_line(text):
    with pytest.raises(RequestError) as e:
        parse_rate(text)
    assert "\n" not in str(e.value)


@given(st.integers(1, 10**6), st.sampled_from(["K", "M", "G", "T"]), st.sampled_from(["", " "]))
def test_decimal_rates_are_powers_of_1000_and_binary_ones_are_sizes(n, letter, space):
    power = "KMGT".index(letter) + 1
    assert parse_rate(f"{n}{space}{letter}B/s") == n * 1000**power
    assert parse_rate(f"{n}{space}{letter}iB/s") == parse_size(f"{n}{letter}iB") == n * 1024**power


def test_the_reading_said_back_names_the_bytes_and_the_convention():
    assert rate_reading("1008 GB/s") == ("read 1008 GB/s as 1,008,000,000,000 bytes/s "
                                         "(decimal GB: 1 GB = 10⁹ bytes, as spec sheets print)")
    assert rate_reading("20G") == "read 20G as 21,474,836,480 bytes/s = 20.00 GiB/s (binary: 1 GiB = 1024³ bytes)"


def test_the_command_line_reads_a_spec_sheet_rate_and_says_so(capsys, tmp_path):
    path = write_gguf(tmp_path / "m.gguf", ArchDesc(), "header_only")[0]
    assert main(["fit", str(path), "--no-measure", "--json", "--vram-bw", "1008 GB/s", "--ram-bw", "20GiB/s"]) == 0
    out, err = capsys.readouterr()
    figures = json.loads(out)["tok_s_estimate"]["bandwidths"]
    assert figures["ram"]["bytes_per_s"] == 20 * GIB
    assert "note: read 1008 GB/s as 1,008,000,000,000 bytes/s (decimal GB" in err
    assert "note: read 20GiB/s as 21,474,836,480 bytes/s = 20.00 GiB/s (binary" in err


def test_the_window_reads_a_spec_sheet_rate_and_says_so(qtbot, make_window, write_model):
    window = make_window()
    open_model(qtbot, window, write_model())
    type_into(qtbot, window, "bwRam", "64 GB/s")
    assert window.session.view.plan_speed.ram.bytes_per_s == 64 * 10**9
    reading = child(window, "bandwidthReading")
    assert reading.isVisibleTo(window)
    assert reading.text() == "RAM: read 64 GB/s as 64,000,000,000 bytes/s (decimal GB: 1 GB = 10⁹ bytes, as spec sheets print)"
    type_into(qtbot, window, "bwRam", "")
    assert not reading.isVisibleTo(window)
