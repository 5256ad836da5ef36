"""The closed lists of names the config validates against and the stages share.

Contract:
- ``Lang`` / ``LANGUAGES``: the 11 languages LightOnOCR-2-1B supports, ISO 639-1, written here
  once (the tuple is derived from the ``Literal``). ``daemon.config`` builds its language types
  from them; ``daemon.language`` detects among them.
- ``FORMATS``: every output format a route may ask for, in this order: the document writers'
  (``daemon.writers.WRITERS``, the same keys in the same order: tests/unit/test_layers.py checks
  it) and then ``SOURCE_FORMATS``, the ones made from the source file itself (the searchable
  PDF, ``daemon.writers.pdf``).
- Names only: no imports from the daemon, so the config (a lower layer than the writers, see
  tests/unit/test_layers.py) validates ``formats:`` without importing the writers.
"""

from __future__ import annotations

from typing import Literal, get_args

#: The 11 languages LightOnOCR-2-1B supports, ISO 639-1: written here once; the tuple and the
#: config's "or unknown" type are derived from it (a Literal nested in a Literal is flattened).
Lang = Literal["zh", "en", "ja", "fr", "de", "es", "it", "nl", "pt", "sv", "da"]
LANGUAGES: tuple[str, ...] = get_args(Lang)

#: Formats made from the source file itself, not from the document model: the searchable PDF
#: (daemon.writers.pdf.write_pdf, called by the pipeline with the source and the page layouts).
SOURCE_FORMATS: tuple[str, ...] = ("pdf",)

#: Every format a route may ask for: the writers' registry (daemon.writers.WRITERS), then the
#: source-file ones.
FORMATS: tuple[str, ...] = ("txt", "md", "json", "tex", "csv", "xlsx", *SOURCE_FORMATS)
