"""llama.cpp's own words: its command-line options, which of them change memory or speed, and a command read as a question."""
