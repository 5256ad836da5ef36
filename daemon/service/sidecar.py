"""The sidecar (``<stem>.json``): what happened to a document, as one typed record.

Contract: ``Sidecar`` holds every top-level key the JSON output writes before the document model
(``daemon.writers.jsonout`` puts the model under its own keys); ``to_json()`` gives them in a
stable order. Fields that belong only to some documents (``pdf``, ``duplicate_of``, and ``batch``
with ``dropped_pages`` for a part of a split scanner batch, daemon.intake.batch) are left out
when None; ``degraded`` (document-level optional stages that failed) and ``pages[].degraded``
(per page) are always there, empty when nothing degraded (docs/outputs.md says how to read them);
so are ``review`` and ``review_reasons`` (daemon.quality.review: low-confidence pages, failed output
checks, an unsure classification that kept the source in place), but for a duplicate.
``classification`` (how sure the doctype is: score, threshold, margin) is there for a classified
document.
``outputs`` and ``timings`` are filled in once the output names are known.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from daemon.models import Classification, Document
from daemon.names import display
from daemon.pagerecord import PageResult
from daemon.quality.review import Review
from daemon.service.timings import Timings
from daemon.stages import Degraded
from daemon.writers.pdfreport import PdfReport


@dataclass(frozen=True)
class DuplicateOf:
    """The earlier document a duplicate was linked to."""

    document_id: int
    source: str | None
    outputs: tuple[str, ...]


@dataclass(frozen=True)
class Sidecar:
    source: str  # where the file was dropped
    inbox: str
    sha256: str
    language: str
    doctype: str
    route: str
    engine: str | None
    document_id: int
    archived_to: str | None  # where the original went (None: kept or deleted)
    size: int | None = None
    language_confidence: float | None = None
    doctype_scores: Mapping[str, float] = field(default_factory=dict)
    has_table: bool | None = None
    has_math: bool | None = None
    doc_date: str | None = None
    pages: tuple[PageResult, ...] = ()
    processed_at: str = ""
    pdf: PdfReport | None = None
    degraded: tuple[Degraded, ...] = ()
    duplicate_of: DuplicateOf | None = None
    outputs: tuple[str, ...] | None = None
    timings: Timings | None = None
    batch: Mapping[str, Any] | None = None  # a part of a split batch: its /OcrDaemonBatch record
    review: Review | None = None  # why the document needs review (daemon.quality); None: a duplicate
    # How sure the doctype is (``daemon.understand.route.confidence``).
    classification: Mapping[str, Any] | None = None


    @classmethod
    def of_document(
        cls, doc: Document, c: Classification, route: str, engine: str, pages: Sequence[PageResult],
        archived_to: Path | None, pdf: PdfReport | None, degraded: Sequence[Degraded],
        batch: Mapping[str, Any] | None = None, review: Review | None = None,
        classification: Mapping[str, Any] | None = None,
    ) -> Sidecar:
        return cls(
            classification=classification,
            source=display(doc.path), inbox=doc.inbox, sha256=doc.sha256, size=doc.size, language=c.language,
            language_confidence=round(c.language_confidence, 3), doctype=c.doctype,
            doctype_scores={k: round(v, 2) for k, v in c.doctype_scores.items()}, has_table=c.has_table,
            has_math=c.has_math, doc_date=c.doc_date, route=route, pages=tuple(pages), engine=engine,
            document_id=doc.id, processed_at=datetime.now().astimezone().isoformat(timespec="seconds"),
            archived_to=_archived(doc, archived_to), pdf=pdf, degraded=tuple(degraded), batch=batch,
            review=review if review is not None else Review(),
        )

    @classmethod
    def of_duplicate(
        cls, doc: Document, c: Classification, route: str, earlier: DuplicateOf, archived_to: Path | None,
    ) -> Sidecar:
        return cls(
            source=display(doc.path), inbox=doc.inbox, sha256=doc.sha256, language=c.language, doctype=c.doctype,
            route=route, engine=None, document_id=doc.id, archived_to=_archived(doc, archived_to), duplicate_of=earlier,
        )

    def named(self, outputs: Sequence[Path], timings: Timings) -> Sidecar:
        """With the output names and the timings, known once the outputs are planned."""
        return replace(self, outputs=tuple(display(p) for p in outputs), timings=timings)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "inbox": self.inbox, "sha256": self.sha256}
        if self.duplicate_of is None:
            out.update(
                size=self.size, language=self.language, language_confidence=self.language_confidence,
                doctype=self.doctype, doctype_scores=dict(self.doctype_scores), has_table=self.has_table,
                has_math=self.has_math, doc_date=self.doc_date, route=self.route,
                pages=[p.sidecar() for p in self.pages], engine=self.engine, document_id=self.document_id,
                processed_at=self.processed_at,
            )
            if self.classification is not None:
                out["classification"] = dict(self.classification)
        else:
            d = self.duplicate_of
            out.update(
                language=self.language, doctype=self.doctype, route=self.route, engine=None,
                document_id=self.document_id,
                duplicate_of={"document_id": d.document_id, "source": d.source, "outputs": list(d.outputs)},
            )
        out["archived_to"] = self.archived_to
        if self.pdf is not None:
            out["pdf"] = self.pdf.to_json()
        out["degraded"] = [d.to_json() for d in self.degraded]
        if self.review is not None:  # "review": true and its reasons (docs/outputs.md, "Review")
            out.update(self.review.to_json())
        if self.batch is not None:  # the original's page numbers (docs/batches.md)
            out["batch"] = {k: v for k, v in self.batch.items() if k != "dropped_pages"}
            out["dropped_pages"] = list(self.batch.get("dropped_pages", []))
        if self.outputs is not None:
            out["outputs"] = list(self.outputs)
        if self.timings is not None:
            out["timings"] = self.timings.sidecar()  # rounded to milliseconds
        return out


def _archived(doc: Document, target: Path | None) -> str | None:
    return display(target) if target is not None and target != doc.path else None
