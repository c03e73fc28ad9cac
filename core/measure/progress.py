"""How far a running llama.cpp has got, read from the log it has printed so far.

Rule 1: stages are recognised by markers llama.cpp prints in order (STAGES); the latest
        marker seen decides the stage, so a log read in pieces gives the same answer as the
        whole log. Unknown text leaves the stage where it was.
Rule 2: the fraction is a rough position for a progress bar, never a time estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

STAGES: tuple[tuple[str, str, float], ...] = (
    # marker in the log,           stage shown,                 fraction
    ("llama_model_loader:", "reading the model header", 0.15),
    ("load_tensors:", "loading the weights", 0.3),
    ("llama_kv_cache:", "allocating the KV cache", 0.5),
    ("sched_reserve:", "reserving compute buffers", 0.6),
    ("eval time", "decoding done", 0.95),
)
STARTING = ("starting llama.cpp", 0.05)


@dataclass(frozen=True)
class Progress:
    """One progress report: the stage, a rough fraction, the engine's RSS now and time so far."""

    stage: str
    fraction: float
    rss_bytes: int | None
    elapsed_s: float


def stage_after(text: str, current: tuple[str, float] = STARTING) -> tuple[str, float]:
    """The stage once `text` (newly printed log) has been seen, starting from `current` (Rule 1)."""
    best = current
    for marker, stage, fraction in STAGES:
        if fraction > best[1] and marker in text:
            best = (stage, fraction)
    return best
