"""The Quants dock: every quantization of the open model, priced and judged on the machine."""
