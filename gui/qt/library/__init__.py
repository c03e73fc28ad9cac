"""The Library dock and File ▸ Open URL…: models where users keep them, and headers before download."""
