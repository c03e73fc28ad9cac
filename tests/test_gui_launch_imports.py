"""What the launcher imports before the window's first plan: counted (which modules, in which order), not timed.

The real launcher in a child process (`gguf-budget` with no file: the bundled demo; `main()` as the console script
calls it), until the first plan is on screen (`modelLoaded`):

- none of the modules only a later action needs is imported: the evidence views and the measuring code (a run or an
  imported log), the goal search and the quant ladder (a goal applied, the Quants view), the About dialog, the
  subcommands' shared options and the catalogue, the kept speed figures (read after the first plan), llama.cpp's option
  table (a command asked) and the sweep's code. The old launcher imported all of them for the first plan.
- the window's pure core is imported before Qt (`launch` Rule 8): PySide6's import hook reads the source of every
  module imported after it, and the old launcher imported 157 core modules after it; now none.
- all told, the first plan imports at most OWN_MODULES of the app's own modules.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from launch_watch import app_env

FIRST_PLAN_IMPORTS = r"""
import json, sys
from launch_watch import watch_open_window

seen = []


class Imports:  # every module first asked for, and whether Qt was imported by then
    def find_spec(self, name, path=None, target=None):
        if name not in sys.modules:
            seen.append((name, "PySide6" in sys.modules))
        return None


def watched(opened):
    def open_window(options, *args, **kwargs):
        window = opened(options, *args, **kwargs)

        def drawn():
            window.modelLoaded.disconnect(drawn)
            imported = [(name, after_qt) for name, after_qt in seen if name in sys.modules]
            print(json.dumps(imported), flush=True)
            window.close()

        window.modelLoaded.connect(drawn)
        return window

    return open_window


sys.meta_path.insert(0, Imports())
watch_open_window(watched)  # first on sys.meta_path, before Imports (tests/launch_watch.py)
from gguf_budget.gui.cli import main

sys.argv[1:] = []
sys.exit(main())
"""

LATER = ("gguf_budget.core.views.evidence_view", "gguf_budget.core.measure.session", "gguf_budget.core.measure.runner",
         "gguf_budget.core.evidence.compare", "gguf_budget.core.evidence.llamacpp_log", "gguf_budget.core.explorer.tune",
         "gguf_budget.core.quant.ladder", "gguf_budget.core.quant.mix", "gguf_budget.gui.qt.about_dialog",
         "gguf_budget.gui.cli.commands.common", "gguf_budget.core.model.catalogue",
         "gguf_budget.core.speed.machine_speed", "gguf_budget.core.explorer.llama_question", "gguf_budget.core.plan.sweep")
"""Modules the first plan does not need (each imported later, when its action first comes)."""
CORE_AFTER_QT = 5
"""The most core modules first imported after PySide6 (none now; the old launcher 157)."""
OWN_MODULES = 220
"""The most of the app's own modules imported by the first plan (212 now; the old launcher 253)."""


def test_the_first_plan_imports_no_later_module_and_the_core_before_qt(tmp_path: Path):
    script = f"import sys; sys.path.append({str(Path(__file__).parent)!r})\n{FIRST_PLAN_IMPORTS}"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=app_env(tmp_path),
                          timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = dict(json.loads(done.stdout.splitlines()[-1]))
    assert "gguf_budget.core.explorer.derive" in imported and "gguf_budget.gui.qt.main_window" in imported
    assert [name for name in LATER if name in imported] == []
    core_after_qt = sorted(name for name, after_qt in imported.items() if after_qt and name.startswith("gguf_budget.core"))
    assert len(core_after_qt) <= CORE_AFTER_QT, core_after_qt
    assert len([name for name in imported if name.startswith("gguf_budget")]) <= OWN_MODULES
