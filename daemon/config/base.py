"""The names the ``rules.yaml`` models are built from, and their base class.

Contract:
- The languages (``Lang``, ``LANGUAGES``) and the output formats (``FORMATS``: the writers'
  registry's keys and the source-file formats) are :mod:`daemon.vocab`'s, so the config does not
  import the writers; ``LangOrUnknown`` derives from ``Lang``.
- ``Strict``: the base of every model; unknown keys are errors (``extra="forbid"``), so typos are
  errors, not silent defaults, and defaults are validated too.
- Its own module so that :mod:`daemon.config.schema` and :mod:`daemon.config.engine_schema` can
  both build on it without importing each other; :mod:`daemon.config.schema` re-exports it all.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from daemon.vocab import FORMATS, Lang
from daemon.vocab import LANGUAGES as LANGUAGES  # re-exported: the config package exports it

DEFAULT_CONFIG_PATH = Path("/etc/ocr-daemon/rules.yaml")

LangOrUnknown = Literal[Lang, "unknown"]

#: Output formats a route may ask for (daemon.vocab.FORMATS). Pydantic checks the values against
#: the Literal built at run time; mypy cannot see a Literal built from data, so to it a format is
#: a ``str``.
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
