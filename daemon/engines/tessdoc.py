"""Each document's language as the Tesseract engine's pages decide it (``daemon.engines.tesseract``).

Contract (thread-safe; one per engine):

- ``known(doc_tag)``: the language remembered for the document (a Latin ISO code, ``zh-Hans``,
  ``zh-Hant``, ``ja`` or ``tessplan.CJK_UNDECIDED``), or None.
- ``remember(doc_tag, lang)``: remembered; the ``DOC_MEMORY`` most recent documents are kept
  (the oldest forgotten first).
- ``claim(doc_tag) -> (known, owner)``: before a page's language probe. When another page of
  the document is probing now (the pages of one document are read at the same time, one per
  Tesseract thread), waits for that decision (``PROBE_WAIT_S`` at most) instead of probing a
  band of its own (issue 32: each page probed before, one band per page, 0.3-0.75 s CPU).
  ``owner`` is True when this page probes for its document; it then calls ``release(doc_tag)``
  once its probe is done (whether or not it decided), which wakes the waiting pages.
- ``close()``: no page waits any longer (the engine is closing).
"""

from __future__ import annotations

import collections
import threading
import time

__all__ = ["DocLanguages", "DOC_MEMORY", "PROBE_WAIT_S"]

#: Documents remembered for the per-document language (oldest forgotten first).
DOC_MEMORY = 1024
#: A page whose document's language another thread is probing waits this long at most for that
#: decision before probing itself.
PROBE_WAIT_S = 60.0


class DocLanguages:
    """See the module contract."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._lang: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._probing: set[str] = set()  # doc_tags whose language a page is probing now
        self._closed = False

    def known(self, doc_tag: str) -> str | None:
        with self._cv:
            return self._lang.get(doc_tag)

    def remember(self, doc_tag: str, lang: str) -> None:
        with self._cv:
            self._lang[doc_tag] = lang
            self._lang.move_to_end(doc_tag)
            while len(self._lang) > DOC_MEMORY:
                self._lang.popitem(last=False)

    def claim(self, doc_tag: str) -> tuple[str | None, bool]:
        deadline = time.monotonic() + PROBE_WAIT_S
        with self._cv:
            while doc_tag in self._probing and doc_tag not in self._lang and not self._closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cv.wait(left)
            known = self._lang.get(doc_tag)
            owner = known is None and doc_tag not in self._probing
            if owner:
                self._probing.add(doc_tag)
            return known, owner

    def release(self, doc_tag: str) -> None:
        with self._cv:
            self._probing.discard(doc_tag)
            self._cv.notify_all()

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._cv.notify_all()
