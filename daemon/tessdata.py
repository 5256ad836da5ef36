"""Where Tesseract's language data is: the lookup every user of Tesseract shares.

Contract: ``tessdata_dir()`` is ``$TESSDATA_PREFIX`` when set, else Debian's folder
(``DEBIAN_TESSDATA``), read at each call (tests and bench scripts set the variable after
import). No tesserocr import here: code that only needs the folder (the word lists of
``daemon.quality.signals``, a check whether a model's ``.traineddata`` is installed) does not
load Tesseract's library.
"""

from __future__ import annotations

import os

DEBIAN_TESSDATA = "/usr/share/tesseract-ocr/5/tessdata"


def tessdata_dir() -> str:
    """Tesseract's data folder: ``$TESSDATA_PREFIX`` if set, else Debian's."""
    return os.environ.get("TESSDATA_PREFIX") or DEBIAN_TESSDATA
