"""Whether a document needs a person's look, and why: one small typed record every stage adds to.

Contract:

- ``Review`` collects ``ReviewReason``s. A stage that doubts its own result adds one call:
  ``review.add("low_confidence", page=2, detail="conf 19")`` (a page's reason) or
  ``review.add("classification unsure", detail="invoice 3.2 < 3 + 0.5")`` (the document's).
  The same reason twice is kept once.
- ``bool(review)`` / ``review.needed``: some reason was added. Routes can match on it
  (``match.review: true``, daemon.understand.route) when the reason was added before routing
  (page confidence, classification); the output checks run after the outputs are rendered, and
  a reason they add shows in the sidecar (and in ``/metrics``) even when the route was chosen.
- ``to_json()``: the sidecar's ``review`` (bool) and ``review_reasons`` (short strings such as
  ``"page 2: low_confidence (conf 19)"``, in the order they were added).

Picklable (a ``Review`` comes back from the render worker that prepares the outputs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ReviewReason:
    """One reason to review a document: what, on which page (1-based; None: the document), and a
    short detail (a figure, a name)."""

    what: str
    page: int | None = None
    detail: str = ""

    def __str__(self) -> str:
        where = f"page {self.page}: " if self.page is not None else ""
        return f"{where}{self.what}" + (f" ({self.detail})" if self.detail else "")


@dataclass
class Review:
    """The reasons a document needs review (see the module docstring)."""

    reasons: list[ReviewReason] = field(default_factory=list)

    def add(self, what: str, *, page: int | None = None, detail: str = "") -> ReviewReason:
        """Add a reason (once); returns it."""
        reason = ReviewReason(what, page, detail)
        if reason not in self.reasons:
            self.reasons.append(reason)
        return reason

    @property
    def needed(self) -> bool:
        return bool(self.reasons)

    def __bool__(self) -> bool:
        return self.needed

    def on_page(self, page: int) -> list[ReviewReason]:
        """The reasons about one page (1-based)."""
        return [r for r in self.reasons if r.page == page]

    def to_json(self) -> dict[str, Any]:
        return {"review": self.needed, "review_reasons": [str(r) for r in self.reasons]}
