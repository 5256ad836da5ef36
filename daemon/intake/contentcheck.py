"""The stability thread's "does it open as what it claims" check: bounded, no parser run here.

Contract:
- ``check(path, max_bytes) -> str | None``: ``None`` when the file looks complete for what it
  claims to be, else a short human reason. Never raises.
- It reads at most ``HEAD`` + ``TAIL`` bytes of the file (the header and the trailer) plus, for
  images no bigger than ``IMAGE_INPROC_BYTES``, the header/chunk walk of
  ``daemon.pages.probe._probe_image`` (Pillow's ``verify`` of a PNG, TIFF strip extents...).
  MuPDF is never called in the daemon's process: a PDF is judged from its first KiB (``%PDF-``)
  and its last ``TAIL`` bytes (``%%EOF``). Opening it for real (encryption, page tree, repair)
  is ``probe.page_count`` in a render worker, with that worker's time and memory limits
  (``pipeline._page_count``). Why: MuPDF repairing an 8 GiB sparse ``.pdf`` held the daemon's
  GIL for 131 s (issue 33) -- health checks unanswered, scheduler jobs missed.
- A file bigger than ``max_bytes`` (``inboxes[].max_file_mb``) gets a ``Refused`` reason: final
  at once, the tracker hands it on without waiting ``invalid_grace`` and the service fails it
  unread (never hashed, never opened).
- A PDF whose trailer has no ``%%EOF`` (still being copied, or cut off) gets "truncated PDF":
  the tracker waits ``invalid_grace`` for it, as before; a PDF with more than ``TAIL`` bytes of
  junk after its ``%%EOF`` waits that grace too, then opens normally in the pipeline.

Kept on its own (not inside the tracker) so the intake's rescan/stability logic can change
without touching what counts as "complete".
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from daemon.errors import InputError
from daemon.pages import probe

__all__ = ["Refused", "check", "too_large", "HEAD", "TAIL", "IMAGE_INPROC_BYTES"]

log = logging.getLogger(__name__)

#: Bytes read from the start (``probe.classify`` reads 1 KiB: PDF readers accept ``%PDF-`` there).
HEAD = 1024
#: Bytes read from the end. 4 KiB holds a PDF's ``startxref``/``%%EOF`` and an image's end marker
#: with room for the padding some scanners append.
TAIL = 4096
#: Images up to this size keep the full header/chunk walk (``probe._probe_image``): Pillow's
#: ``verify`` of a 32 MiB PNG is one CRC pass (tens of ms); above it only the trailer is read.
IMAGE_INPROC_BYTES = 32 << 20

_PNG_END = b"IEND\xaeB`\x82"
_JPEG_END = b"\xff\xd9"


class Refused(str):
    """A reason that is final at once: the tracker hands the file on without waiting
    ``invalid_grace``, and the service fails it without reading it."""

    __slots__ = ()


def too_large(size: int, max_bytes: int) -> Refused | None:
    """The reason a ``size``-byte file is refused under a ``max_bytes`` limit, or None."""
    if max_bytes <= 0 or size <= max_bytes:
        return None
    return Refused(
        f"file too large: {size / (1 << 20):,.0f} MiB > limit {max_bytes / (1 << 20):,.0f} MiB "
        "(inboxes[].max_file_mb; raise it to process bigger files)"
    )


def _tail(path: Path, size: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(max(0, size - TAIL))
        return f.read(TAIL)


def check(path: Path, max_bytes: int = 0) -> str | None:
    """See the module docstring. ``max_bytes`` <= 0: no size limit."""
    try:
        path = Path(path)
        size = os.stat(path).st_size
        big = too_large(size, max_bytes)
        if big is not None:
            return big
        try:
            kind, _ = probe.classify(path)  # stat + the first KiB
        except InputError as e:
            return e.reason
        if kind == "pdf":
            return None if b"%%EOF" in _tail(path, size) else "truncated PDF (no end-of-file marker)"
        if size <= IMAGE_INPROC_BYTES:
            return probe._probe_image(path, kind)
        tail = _tail(path, size)
        if kind == "png" and _PNG_END not in tail:
            return "truncated PNG"
        if kind == "jpeg" and _JPEG_END not in tail:
            return "truncated JPEG"
        return None
    except Exception as e:  # never raise: the tracker only wants a verdict
        log.debug("content check of %s failed unexpectedly", path, exc_info=True)
        return f"unreadable ({probe.short(e)})"
