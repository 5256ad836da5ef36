"""``tex`` writer (in progress)."""

from __future__ import annotations

from daemon.docmodel import Document


def write_tex(doc: Document) -> str:
    raise NotImplementedError("the tex writer is not finished yet")
