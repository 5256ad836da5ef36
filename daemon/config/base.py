"""The names the ``rules.yaml`` models are built from, and their base class.

Contract:
- The languages are written once (``Lang``); ``LANGUAGES`` and ``LangOrUnknown`` derive from it.
- The output formats come from the writers' registry (``daemon.writers.WRITERS``).
- ``Strict``: the base of every model; unknown keys are errors (``extra="forbid"``), so typos are
  errors, not silent defaults, and defaults are validated too.
- Its own module so that :mod:`daemon.config.schema` and :mod:`daemon.config.engine_schema` can
  both build on it without importing each other; :mod:`daemon.config.schema` re-exports it all.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from pydantic import BaseModel, ConfigDict

from daemon.writers import FORMATS as WRITER_FORMATS

DEFAULT_CONFIG_PATH = Path("/etc/ocr-daemon/rules.yaml")

#: The 11 languages LightOnOCR-2-1B supports, ISO 639-1: written here once; the tuple and the
#: "or unknown" type are derived from it (a Literal nested in a Literal is flattened).
Lang = Literal["zh", "en", "ja", "fr", "de", "es", "it", "nl", "pt", "sv", "da"]
LANGUAGES: tuple[str, ...] = get_args(Lang)
LangOrUnknown = Literal[Lang, "unknown"]

#: Output formats a route may ask for: the keys of the writers' registry (daemon.writers.WRITERS),
#: so a new writer is a new format here without a second list. Pydantic checks the values against
#: the Literal built at run time; mypy cannot see a Literal built from data, so to it a format is
#: a ``str``.
FORMATS: tuple[str, ...] = WRITER_FORMATS
if TYPE_CHECKING:
    Format = str
else:
    Format = Literal[FORMATS]

#: Placeholders allowed in destination / archive templates.
TEMPLATE_FIELDS = frozenset({"inbox", "subdir", "language", "doctype", "yyyy", "mm", "dd", "stem", "doc_yyyy", "doc_mm", "doc_date"})

INPUT_SUFFIXES = (".pdf", ".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".bmp")


class Strict(BaseModel):
    # the class docstring is the section's description in the JSON Schema (rules.schema.json)
    model_config = ConfigDict(extra="forbid", validate_default=True)
