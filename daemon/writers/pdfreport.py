"""The searchable PDF's report: how each page's text was placed and how the PDF/A step went.

Contract:

- ``PdfReport`` is what the sidecar records about the ``pdf`` output (its ``pdf`` key,
  ``to_json()``): ``pages`` (``PdfPageReport`` each: ``page`` 1-based, ``placement`` --
  ``words``, ``lines``, ``blocks``, ``page``, ``none``, ``text_layer`` --, ``lines`` drawn,
  the placement's failures, and what the check of the written PDF found), ``pdfa``
  (``"PDF/A-2b"``) or ``pdfa_error``; or, for a PDF that could not be made at all, ``error``
  alone.
- ``to_json()`` gives the same keys in the same order for the same record (the sidecar's bytes).
- Built by :mod:`daemon.writers.pdf` (``write_pdf_input``); the quality check
  (``daemon.quality``) fills in ``text_found`` and ``check_degraded``; read by the service's
  sidecar and pipeline. Records only: nothing here reads or writes files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from daemon.stages import Degraded

__all__ = ["PdfPageReport", "PdfReport"]


@dataclass
class PdfPageReport:
    """How one page's text was placed (the sidecar's ``pdf.pages[]``): ``page`` (1-based), its
    ``placement``, ``lines`` drawn (None: left untouched), the placement's failures; what the
    check of the written PDF found (``daemon.quality.run``): ``text_found``, ``check_degraded``."""

    page: int
    placement: str
    lines: int | None = None
    degraded: list[Degraded] = field(default_factory=list)
    text_found: float | None = None
    check_degraded: list[Degraded] = field(default_factory=list)

    @property
    def index(self) -> int:
        """The page's 0-based index."""
        return self.page - 1

    def all_degraded(self) -> list[Degraded]:
        """The placement's failures, then the check's."""
        return [*self.degraded, *self.check_degraded]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"page": self.page, "placement": self.placement}
        if self.lines is not None:
            out["lines"] = self.lines
        # the placement's failures come before the check's figure, the check's alone after it
        if self.degraded:
            out["degraded"] = [d.to_json() for d in self.all_degraded()]
        if self.text_found is not None:
            out["text_found"] = self.text_found
        if self.check_degraded and not self.degraded:
            out["degraded"] = [d.to_json() for d in self.check_degraded]
        return out


@dataclass
class PdfReport:
    """What the sidecar records about the searchable PDF (its ``pdf``): per page how its text was
    placed, and the PDF/A outcome (``pdfa``: ``"PDF/A-2b"``, or ``pdfa_error``: why the plain PDF
    was written instead); or, for a PDF that could not be made at all, why (``error``, alone)."""

    pages: list[PdfPageReport] = field(default_factory=list)
    pdfa: str | None = None
    pdfa_error: str | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        if self.error is not None:
            return {"error": self.error}
        out: dict[str, Any] = {"pages": [p.to_json() for p in self.pages]}
        if self.pdfa is not None:
            out["pdfa"] = self.pdfa
        if self.pdfa_error is not None:
            out["pdfa_error"] = self.pdfa_error
        return out
