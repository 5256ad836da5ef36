"""ocr-daemon: a watched-folder OCR service (watch -> journal -> render -> OCR -> classify -> route -> outputs)."""

from __future__ import annotations

__version__ = "0.1.0"
