"""Every llama.cpp quantization of a model, priced from its tensor directory (no download).

The package imports nothing itself, so a command that needs only the file-type table (`file_types`) does
not pay for the pricing rules (`mix`, `rules`)."""
