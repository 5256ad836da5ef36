"""Realistic short documents for classification tests: 6 doctypes x 11 languages.

This is the *tuning* corpus (rules.yaml was written against it). The held-out sets that measure
accuracy honestly are bench/data/heldout_*.yaml (bench/eval_classify.py), written separately
(other vendors, topics and wording).

The texts are data: tests/data/corpus.yaml, ``{doctype: {language: text}}``. This module loads
it once: ``DOCTYPE_TEXTS`` (the six doctypes), ``OTHERS`` (``{language: text}`` of documents that
are none of the six: they must stay "other"), and ``CORPUS``, a list of
``(language, doctype, text)`` with doctype "other" for those, in file order.
"""

from __future__ import annotations

from pathlib import Path

import yaml

_DATA = yaml.safe_load((Path(__file__).resolve().parent / "data" / "corpus.yaml").read_text(encoding="utf-8"))

DOCTYPE_TEXTS: dict[str, dict[str, str]] = {doctype: texts for doctype, texts in _DATA.items() if doctype != "other"}
OTHERS: dict[str, str] = _DATA["other"]

CORPUS: list[tuple[str, str, str]] = [
    (lang, doctype, text) for doctype, by_lang in DOCTYPE_TEXTS.items() for lang, text in by_lang.items()
] + [(lang, "other", text) for lang, text in OTHERS.items()]
