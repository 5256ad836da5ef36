"""``json`` writer: the sidecar fields at top level plus the document model.

Layout::

    {<every sidecar key>: …,
     "page_texts": [raw engine text of each page],      # unless the sidecar has that key;
                                                        # ligatures as letters (lines.letters);
                                                        # the model's ``Page.raw``
     "document": {"format": "ocr-daemon.document/1", "language": "de",
                  "pages": [{"number": 1, "blocks": [{"type": "heading", "level": 1, "text": …},
                                                     {"type": "table", "rows": 3, "cols": 2,
                                                      "header_rows": 1, "cells": [{"row": 0,
                                                      "col": 0, "rowspan": 1, "colspan": 1,
                                                      "header": true, "text": "**A**",
                                                      "plain": "A"}, …]}, …]}]}}

The sidecar always wins a key collision (its keys are a contract other tools read); the model
then moves to ``document_model``. ``Document.from_dict`` reads the ``document`` value back.
"""

from __future__ import annotations

import json
from typing import Any

from daemon.document.lines import letters
from daemon.document.model import Document


def write_json(doc: Document, sidecar: dict[str, Any]) -> str:
    out: dict[str, Any] = dict(sidecar)
    if "page_texts" not in out:
        out["page_texts"] = [letters(p.raw) for p in doc.pages]
    out["document" if "document" not in out else "document_model"] = doc.to_dict()
    return json.dumps(out, ensure_ascii=False, indent=2, default=str) + "\n"
