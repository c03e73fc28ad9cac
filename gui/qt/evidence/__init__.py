"""Runtime evidence in the window: import a llama.cpp log, measure with llama.cpp, show what was measured."""
