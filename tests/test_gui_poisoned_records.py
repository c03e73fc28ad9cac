"""The window over poisoned speed and machine records (issue #37): huge, tiny and non-finite numbers in
`machine-speed.json` and `speed-runs.json`, as this version or the last one wrote them, never reach the internal-error
dialog; the estimates stay finite and the figures are measured again."""

from __future__ import annotations

import json
import math
import os
import platform
import sys

import pytest
from PySide6.QtWidgets import QDialog
from gui_support import open_model

from gguf_budget.gui.qt.main_window import measure_bandwidths

HUGE = "1" + "0" * 400


def poison(folder, number: str, old: bool) -> None:
    """Both kept files with `number` everywhere a number goes."""
    if old:
        host = f"{platform.node()}/{os.cpu_count() or 0} CPUs"
        figure = {"bytes_per_s": "N", "detail": "d", "measured_at": "N"}
        record = {"format": 1, "host": host, "ram": figure, "compute": {**figure, "flops_per_s": "N"}, "disks": {}}
        runs = {"runs": [{"recorded_at": "N", "model": "m", "decode_tok_s": "N", "decode_bytes": "N",
                          "prefill_tok_s": "N", "prefill_work_per_token": "N"}]}
    else:
        record = {"format": 2, "machine": "M", "measurements": [
            {"tier": "ram", "rate": "N", "detail": "d", "measured_at": "N", "load": "N", "cores": "N"}]}
        runs = {"format": 2, "runs": [{"recorded_at": "N", "model": "m", "decode_tok_s": "N", "decode_bytes": "N",
                                       "prefill_tok_s": "N", "prefill_work_per_token": "N", "machine": "M",
                                       "tier": "CPU", "device": "CPU", "load": 0.1, "cores": 2}]}
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in (("machine-speed.json", record), ("speed-runs.json", runs)):
        text = json.dumps(content).replace('"N"', number)
        if not old:
            from gguf_budget.core.machine.bandwidth_store import host_key

            text = text.replace('"M"', json.dumps(host_key()))
        (folder / name).write_text(text)


@pytest.mark.parametrize("old", [True, False], ids=["the last format", "this format"])
@pytest.mark.parametrize("number", [HUGE, "5e-324", "NaN"])
def test_poisoned_records_never_reach_the_internal_error_dialog(qtbot, make_explorer, write_model, monkeypatch,
                                                                private_data_dir, number, old):
    poison(private_data_dir, number, old)
    explorer = make_explorer(bandwidth_backend=measure_bandwidths)
    monkeypatch.setattr(sys, "excepthook", explorer.errors.hook)
    window = explorer.window
    open_model(qtbot, window, write_model())
    qtbot.waitUntil(window.bandwidths_measured, timeout=30000)
    speed = window.session.view.plan_speed
    shown = [d.message.text() for d in window.findChildren(QDialog, "internalErrorDialog") if d.isVisible()]
    assert shown == []
    assert math.isfinite(speed.tok_s) and speed.tok_s > 0 and speed.ram.bytes_per_s < 10**15
