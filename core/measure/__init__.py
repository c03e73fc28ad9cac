"""Measure now: find a llama.cpp, run a model for a few tokens, keep what it printed as evidence.

`engine` finds a runnable llama.cpp, `command` says how to run it, `runner` (impure) runs it
and watches its memory, `store` (impure) keeps the logs per model; `record` is what is kept.
"""
