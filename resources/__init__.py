"""Files shipped with the app, found through `importlib.resources` so source, wheel and bundle agree."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

DEMO_MODEL = "demo-tinyllama-1.1b-chat-q4_k_m.skeleton.gguf"
APP_ID = "gguf-budget"
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256)
DESKTOP_ENTRY = f"{APP_ID}.desktop"
MIME_PACKAGE = f"{APP_ID}-mime.xml"
GGUF_MIME_TYPE = "application/x-gguf"


def resource_path(name: str) -> Path:
    """A shipped file as a real path (resources are installed unzipped)."""
    return Path(str(files(__name__) / name))


def demo_model_path() -> Path:
    """The bundled demo: a header-only skeleton of TinyLlama-1.1B-Chat Q4_K_M."""
    return resource_path(DEMO_MODEL)


def icon_path(size: int | None = None) -> Path:
    """The app icon: the SVG drawing, or its committed PNG render at `size` pixels."""
    suffix = ".svg" if size is None else f"-{size}.png"
    return resource_path(f"icons/{APP_ID}{suffix}")
