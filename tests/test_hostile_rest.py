"""The rest of issue #24 G: absurd tensor splits, a preset list longer than any machine, a negative share
after a short option, and a Library of 50,000 rows that must not stall the GUI thread."""

from __future__ import annotations

import pytest
from hostile_support import assert_one_line_exit_2, run_cli
from PySide6.QtCore import Qt

from gguf_budget.core.errors import RequestError
from gguf_budget.core.fit.placement.gpu_split import parse_tensor_split, place_layers
from gguf_budget.core.library.assess import Assessment
from gguf_budget.core.library.scan import LibraryEntry
from gguf_budget.core.library.stores import StoreKind
from gguf_budget.core.machine.presets import parse_presets
from gguf_budget.gui.cli.args import join_negative_values
from gguf_budget.gui.qt.library import table as table_module
from gguf_budget.gui.qt.library.dock import LibraryView
from gguf_budget.resources import demo_model_path

TWO_GPUS = ["--gpu-count", "2", "--gpu-total", "24G"]


@pytest.mark.parametrize("split", ["1e308,1e308", "3e38,3e38", "1e39", "1,1e300"])
def test_a_split_whose_32_bit_sum_overflows_is_one_line(split):
    with pytest.raises(RequestError, match="shares too large"):
        parse_tensor_split(split)
    assert_one_line_exit_2(run_cli(["fit", str(demo_model_path()), *TWO_GPUS, "-ts", split]), "shares too large")


def test_the_largest_split_that_llama_cpp_can_add_still_places_layers():
    shares = parse_tensor_split("1e38,1e38")
    assert place_layers(22, 23, [1, 1], shares) == place_layers(22, 23, [1, 1], (1.0, 1.0))


@pytest.mark.parametrize("args, fragment", [
    (["-ts", "-1,2"], "shares must be numbers of 0 or more"),
    (["--tensor-split", "-1,2"], "shares must be numbers of 0 or more"),
    (["-ts", "-.5"], "shares must be numbers of 0 or more"),
])
def test_a_negative_share_after_an_option_is_the_values_error(args, fragment):
    assert_one_line_exit_2(run_cli(["fit", str(demo_model_path()), *TWO_GPUS, *args]), fragment)


def test_negative_values_join_short_and_long_options_only():
    assert join_negative_values(["-ts", "-1,2", "--budget", "-1G"]) == ["-ts=-1,2", "--budget=-1G"]
    assert join_negative_values(["-1", "-2"]) == ["-1", "-2"]  # a number is never an option name


def test_a_preset_list_longer_than_any_machine_is_one_line():
    names = ",".join(["RTX 4090"] * 13_000)
    with pytest.raises(RequestError, match="13,000 presets named: a machine has at most 64 GPUs"):
        parse_presets(names)
    assert_one_line_exit_2(run_cli(["fit", str(demo_model_path()), "--preset", names]), "at most 64 GPUs")
    assert len(parse_presets(",".join(["RTX 4090"] * 64))) == 64


ROWS = 20_000


def _entries(n: int) -> list[LibraryEntry[Assessment]]:
    judged = Assessment(n_layer=32, fit_verdict="cpu_only", gpu_layers=0, fit_ctx=4096, max_ctx=4096,
                        plan_outcome="feasible", plan_ctx=4096, pinned=32, error=None)
    return [LibraryEntry(kind=StoreKind.USER, name=f"model-{i:06d}.gguf", path=f"/m/{i}.gguf", shards=1,
                         size_bytes=(i * 7919) % 100_003, error=None, architecture="llama", file_type="Q4_K_M",
                         n_params=8_000_000_000, assessment=judged) for i in range(n)]


def test_a_library_of_many_rows_asks_qt_for_the_rows_it_paints_only(qtbot, monkeypatch):
    """Show, sort and filter 20,000 rows: Qt asks the model for what it paints (a proxy model asked
    data() once per comparison: millions of calls for one sort)."""
    view = LibraryView(lambda: None)
    qtbot.addWidget(view)
    view.resize(1000, 400)
    view.show()
    calls = [0]
    real = table_module.LibraryTable.data

    def counting(self, index, role=Qt.ItemDataRole.DisplayRole):
        calls[0] += 1
        return real(self, index, role)

    monkeypatch.setattr(table_module.LibraryTable, "data", counting)
    view.table.set_entries(_entries(ROWS))
    qtbot.wait(50)
    view.view.sortByColumn(3, Qt.SortOrder.DescendingOrder)
    qtbot.wait(50)
    sizes = [view.table.entry(r).size_bytes for r in range(view.table.rowCount())]
    assert sizes == sorted(sizes, reverse=True) and len(sizes) == ROWS
    view.filter.setText("MODEL-01230")
    qtbot.wait(50)
    assert sorted(view.table.entry(r).name for r in range(view.table.rowCount())) == [
        f"model-01230{i}.gguf" for i in range(10)]
    assert calls[0] < 100_000, calls[0]  # ~30,000 here, whatever the row count; a proxy model: > 650,000
