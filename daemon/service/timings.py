"""A document's phase times: the ``timings`` of its sidecar and of its journal row.

Contract: ``Timings`` is a frozen record of seconds per phase, each None until measured:
``count`` (open the file, count its pages), ``ocr`` (render and recognise every page),
``classify`` (classify and route), ``checks`` (the quality check's share of classify and write),
``write`` (render and write the outputs), ``total`` (from the start to recorded done). The
pipeline fills it phase by phase (``dataclasses.replace``); a duplicate has none.
``as_dict()`` gives the measured phases in that order (the journal stores it as JSON);
``sidecar()`` the same rounded to milliseconds (the sidecar JSON's ``timings``, written before
``write`` and ``total`` are known). ``finish`` is the finishing stage's share of ``total``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Timings:
    count: float | None = None
    ocr: float | None = None
    classify: float | None = None
    checks: float | None = None
    write: float | None = None
    total: float | None = None

    def as_dict(self) -> dict[str, float]:
        """The measured phases, in phase order."""
        return {f.name: v for f in fields(self) if (v := getattr(self, f.name)) is not None}

    def sidecar(self) -> dict[str, float]:
        """``as_dict()`` rounded to milliseconds (the sidecar JSON's ``timings``)."""
        return {k: round(v, 3) for k, v in self.as_dict().items()}

    @property
    def finish(self) -> float:
        """Seconds after the pages were read: ``total`` less ``count`` and ``ocr``."""
        return (self.total or 0.0) - (self.count or 0.0) - (self.ocr or 0.0)
