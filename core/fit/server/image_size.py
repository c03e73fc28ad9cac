"""The image a vision projector is priced for: `--image-size WxH` and the window's box, one spelling.

Rule 1: a side is 1 to MAX_IMAGE_SIDE pixels: clip.cpp refuses a larger `image_size` (`clip.cpp`,
        `clip_model_loader::load_hparams`), and a projector whose own size is past it is refused
        the same way (`projector.py`).
Rule 2: this record stands alone (no projector, server or session module), so `plan --image-size`
        parses it without importing the full load's records (`tests/test_cli_imports.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gguf_budget.core.errors import RequestError

MAX_IMAGE_SIDE = 8192
_IMAGE = re.compile(r"^\s*(\d{1,9})\s*[xX×]\s*(\d{1,9})\s*$")


@dataclass(frozen=True)
class ImageSize:
    """`--image-size WxH`: the image a projector is priced for (None: the projector's own size)."""

    width: int
    height: int

    def __post_init__(self) -> None:
        if not (1 <= self.width <= MAX_IMAGE_SIDE and 1 <= self.height <= MAX_IMAGE_SIDE):
            raise RequestError(f"an image is 1 to {MAX_IMAGE_SIDE} pixels a side")

    @classmethod
    def parse(cls, text: str) -> ImageSize:
        """`1024x1024`, `1024 × 768`: the one spelling the CLI's --image-size and the window's box read."""
        m = _IMAGE.match(text)
        if not m:
            raise RequestError(f"an image size is WIDTHxHEIGHT, such as 1024x1024: {text.strip()[:40]!r}")
        return cls(int(m[1]), int(m[2]))

    @property
    def text(self) -> str:
        return f"{self.width}x{self.height}"
