"""Output writers: engine page texts -> the bytes of every requested output file.

Contract (used by ``daemon.outputs``, which does all file I/O):

``render_outputs(pages, formats=..., stem=..., language=..., sidecar=..., markdown=...)``
returns ``{file name: bytes}`` for every format asked for. It is pure (no I/O), deterministic
for the same input, and names every file ``<stem>.<ext>`` (tables as
``<stem>.table-<page>-<n>.csv``). The ``json`` output holds every key of ``sidecar`` at its top
level. ``markdown`` says whether the page texts are engine Markdown (VLM) or plain text
(Tesseract).

This first version writes txt, md and json; richer writers replace it behind the same signature.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

PAGE_BREAK_MD = "\n\n<!-- page {n} -->\n\n"

_TAG = re.compile(r"<[^>]+>")


def _plain(text: str) -> str:
    text = re.sub(r"</t[dh]>\s*<t[dh][^>]*>", "\t", text)
    text = re.sub(r"</tr>", "\n", text)
    return _TAG.sub("", text)


def render_outputs(
    pages: Sequence[str],
    *,
    formats: Sequence[str],
    stem: str,
    language: str,
    sidecar: dict[str, Any],
    markdown: bool,
) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for fmt in formats:
        if fmt == "txt":
            body = "\f\n".join((_plain(p) if markdown else p).strip() + "\n" for p in pages)
            out[f"{stem}.txt"] = body.encode("utf-8")
        elif fmt == "md":
            parts = []
            for i, p in enumerate(pages):
                parts.append(PAGE_BREAK_MD.format(n=i + 1).lstrip() if i == 0 else PAGE_BREAK_MD.format(n=i + 1))
                parts.append(p.strip())
            out[f"{stem}.md"] = ("".join(parts) + "\n").encode("utf-8")
        elif fmt == "json":
            doc = dict(sidecar)
            doc["page_texts"] = list(pages)
            out[f"{stem}.json"] = (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
        else:
            raise NotImplementedError(f"output format {fmt!r} is not implemented yet")
    return out
