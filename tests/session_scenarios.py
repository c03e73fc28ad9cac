"""The scripted llama-server sessions: tiny runnable models, the servers they run on, the traffic each gets.

Shared by benchmarks/server_sessions.py (which runs them and can record them) and
tests/test_server_sessions.py (which reads the recordings in tests/data/server-sessions and runs
a short one live). The models are the factory's (`runnable_model`): zero weights, a 260-token
byte vocabulary, so a token array is exactly what the server holds.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from gguf_factory import ProjectorDesc, write_gguf, write_projector
from runnable_model import runnable_desc

MACHINE = ("--host-available", "16G", "--no-gpu")
WIDE = {"n_layer": 8, "n_embd": 512, "n_ff": 1024, "n_head": 8, "n_head_kv": 8}
MODELS = {
    "llama": WIDE,
    "draft": {"n_layer": 2, "name": "tiny-runnable-draft"},
    "gemma": {"arch": "gemma3", "name": "tiny-runnable-gemma3", "n_layer": 6, "n_embd": 512, "n_ff": 1024,
              "n_head": 8, "n_head_kv": 4, "qk_norm": True, "post_norms": True, "sliding_window": 512, "tied": True,
              "head_dim": 64},
}
PROJECTOR = ProjectorDesc(name="bench-mmproj", n_embd=256, n_ff=1024, n_head=4, n_layer=4, image_size=224,
                          patch_size=14, text_embd=512)

@dataclass(frozen=True)
class Scenario:
    """One server and its traffic: `args` after the model, with {draft} and {mmproj} filled in."""

    model: str
    args: tuple[str, ...]
    session: str

SCENARIOS = {
    "llama_np1_cache100": Scenario("llama", ("--ctx", "8192", "--cache-ram", "100"), "7x(1500+20)"),
    "llama_np4_split": Scenario("llama", ("--ctx", "8192", "-np", "4"), "6x(1200+20)"),
    "llama_npauto_unified": Scenario("llama", ("--ctx", "8192", "-np", "auto"), "6x(800+20)"),
    "llama_chat_np1": Scenario("llama", ("--ctx", "8192", "--cache-ram", "400"), "3x(400+40)*3"),
    "gemma_chat_ckpt3": Scenario("gemma", ("--ctx", "4096", "--ctx-checkpoints", "3"), "2x(700+30)*3"),
    "gemma_chat_ckpt8_np2": Scenario("gemma", ("--ctx", "8192", "-np", "2", "--ctx-checkpoints", "8"),
                                     "3x(600+30)*2"),
    "llama_draft": Scenario("llama", ("--ctx", "8192", "--draft", "{draft}", "--cache-ram", "150"), "5x(1200+16)"),
    "llama_mmproj": Scenario("llama", ("--ctx", "8192", "--mmproj", "{mmproj}"), "3x(40+4+1img)"),
}

def write_models(folder: Path) -> dict[str, str]:
    """Every scenario's files in `folder`: name → path (the projector as `mmproj`)."""
    paths = {name: str(write_gguf(folder / f"{name}.gguf", replace(runnable_desc(context_length=8192), **kw))[0])
             for name, kw in MODELS.items()}
    paths["mmproj"] = str(write_projector(folder / "mmproj.gguf", PROJECTOR))
    return paths

def fit_args(s: Scenario, paths: dict[str, str]) -> list[str]:
    """`fit`'s arguments for the scenario on the recorded machine."""
    return [paths[s.model], *(a.format(**paths) for a in s.args), "--session", s.session, *MACHINE]
