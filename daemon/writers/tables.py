"""``csv`` and ``xlsx`` writers (in progress)."""

from __future__ import annotations

from daemon.docmodel import Document


def write_csv(doc: Document, stem: str, *, bom: bool = False) -> dict[str, bytes]:
    raise NotImplementedError("the csv writer is not finished yet")


def write_xlsx(doc: Document) -> bytes:
    raise NotImplementedError("the xlsx writer is not finished yet")
