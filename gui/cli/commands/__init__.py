"""The headless subcommands, each imported only when it runs: a name → module table, as pip keeps its own.

Rule 1: `gguf-budget help` lists every command from this table without importing any of them;
        `gguf-budget COMMAND …` imports that command's module alone, so a command pays only for
        what it uses (`tests/test_cli_imports.py` holds the line). A module has
        `add_arguments(parser)` and `run(args) -> int`; its one-line help is here.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from types import ModuleType


@dataclass(frozen=True)
class Command:
    """A subcommand: the module that defines and runs it, and the line `help` shows for it."""

    module: str
    help: str

    def load(self) -> ModuleType:
        return import_module(f"{__name__}.{self.module}")


COMMANDS: dict[str, Command] = {
    "inspect": Command("inspect_cmd", "show what a GGUF file says about its model (header only, any shard of a split "
                                      "model)"),
    "plan": Command("plan_cmd", "plan a run under a RAM budget: an itemized ledger and its speed estimates, or why it "
                                "cannot fit"),
    "sweep": Command("sweep_cmd", "plan a model under a range of budgets: where it first fits, where every layer is "
                                  "pinned"),
    "fit": Command("fit_cmd", "estimate whether a model fits this machine's RAM and VRAM (or a hypothetical one), and "
                              "the GPU layer split"),
    "tune": Command("tune_cmd", "search llama.cpp's settings for a goal (longest context at a speed floor, fastest, "
                                "most slots, least memory) and print one command, its memory and speed, and the "
                                "runners-up"),
    "hw": Command("hw_cmd", "show this machine's RAM, container memory limit and GPUs (NVIDIA, AMD, Intel, Apple) as "
                            "the fit estimate sees them, and the RAM bandwidth and compute rate the speed estimates "
                            "use"),
    "quants": Command("quants_cmd", "price every llama.cpp quantization of a model and mark the best fit and the "
                                    "recommended type for a machine (nothing is downloaded)"),
    "library": Command("library_cmd", "list every GGUF model on this machine (Hugging Face, LM Studio, Ollama, "
                                      "llama.cpp caches, added folders)"),
    "evidence": Command("evidence_cmd", "compare a llama.cpp run's own memory report and speed (its verbose log) "
                                        "with the estimate for the same settings"),
    "measure": Command("measure_cmd", "run the model in llama.cpp for a few tokens, and keep its memory report as "
                                      "runtime evidence"),
}

__all__ = ["COMMANDS", "Command"]
