"""Runtime evidence: what a real llama.cpp run printed and measured, read from its log."""
