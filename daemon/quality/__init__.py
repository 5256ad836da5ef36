"""The quality check of every page and every output (issue 32): never silently wrong.

- ``daemon.quality.review``: ``Review``, the reasons a document needs a person's look (any stage
  adds one with ``review.add(...)``); the sidecar's ``review`` / ``review_reasons``; routes match
  on it (``match.review``).
- ``daemon.quality.confidence``: each page's confidence figure; below ``quality.min_confidence``
  the page is flagged ``low_confidence``.
- ``daemon.quality.checks``: the searchable PDF's text layer, each table and the txt output
  checked against the recognised words before they are written.

``daemon.service.outputs.prepare_outputs`` runs them; docs/outputs.md describes the fields.
"""

from daemon.quality.review import Review, ReviewReason

__all__ = ["Review", "ReviewReason"]
