"""Orientation: Tesseract OSD (``--psm 0``) to turn sideways/upside-down pages upright.

Public API:

- ``detect_orientation(image) -> Orientation | None`` and ``detect_script(image)``: Tesseract OSD;
  the Tesseract engine uses the script to pick language models.
- ``make_upright(image) -> (image, degrees)`` and ``upright_with_script(image)`` (the same plus
  the page's OSD script), used by ``daemon.pages.render``.
- ``tessdata_dir()``: Tesseract's data folder.

Orientation: Tesseract OSD through tesserocr with ``lang="osd"`` (initialising OSD with the
default ``eng`` aborts the whole process inside Tesseract 5.5.4's OSD code -- a C++
``std::out_of_range``, not a Python exception). One OSD API per thread, kept loaded. A page is
turned only when two OSD passes agree (``make_upright``): the first proposes a turn with
confidence >= ``ORIENT_MIN_CONF`` and a script of our languages, the second, on the turned
page, sees it upright with the same script. Calibrated on 155 generated pages (11 languages x 4
turns, dense, sparse, noisy scans, noise images): 0 wrong turns; one-line pages and the
noisiest CJK scans are left as scanned (bench/RESULTS.md).
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from typing import Any

# Must precede the first tesserocr import anywhere in the process (see daemon/engines/tesseract).
os.environ.setdefault("OMP_THREAD_LIMIT", "1")

from PIL import Image  # noqa: E402

__all__ = [
    "detect_orientation",
    "detect_script",
    "make_upright",
    "upright_with_script",
    "Orientation",
    "tessdata_dir",
    "ORIENT_MIN_CONF",
    "TEXT_SCRIPTS",
]

log = logging.getLogger(__name__)

DEBIAN_TESSDATA = "/usr/share/tesseract-ocr/5/tessdata"

#: Minimum OSD orientation confidence (on both passes) to turn a page. Calibrated with
#: ``bench/bench_render.py --calibrate``: right answers score 5-19 on Latin pages, 4.4-16 on
#: Japanese, 1.6-2.1 on sparse and 7-9 on dense Chinese pages; random noise scores up to 4.4,
#: which the second, confirming pass rejects.
ORIENT_MIN_CONF = 1.5

#: Scripts of the 11 supported languages as OSD names them; an OSD answer naming another
#: script (on noise it says "Arabic" or "Bengali") is not trusted to turn a page.
TEXT_SCRIPTS = frozenset({"Latin", "Han", "Japanese", "Katakana", "Hiragana", "Hangul"})


def tessdata_dir() -> str:
    """Tesseract's data folder: ``$TESSDATA_PREFIX`` if set, else Debian's."""
    return os.environ.get("TESSDATA_PREFIX") or DEBIAN_TESSDATA



# --------------------------------------------------------------------------- OSD


@dataclass(frozen=True)
class Orientation:
    """Tesseract OSD answer for one image.

    ``rotate_cw``: degrees to turn the image clockwise to make it upright (0/90/180/270).
    ``confidence``: OSD's orientation confidence (larger = surer; roughly 2-10 on real text).
    ``script``: Tesseract script name ("Latin", "Han", "Japanese", "Cyrillic", ...).
    """

    rotate_cw: int
    confidence: float
    script: str
    script_confidence: float


_osd_local = threading.local()
_osd_unavailable = False


def _osd_api() -> Any:
    api = getattr(_osd_local, "api", None)
    if api is None:
        from tesserocr import PSM, PyTessBaseAPI

        # lang="osd" is required: with the default "eng" Tesseract 5.5.4 aborts the process.
        api = PyTessBaseAPI(path=tessdata_dir(), lang="osd", psm=PSM.OSD_ONLY)
        _osd_local.api = api
    return api


def detect_orientation(image: Image.Image) -> Orientation | None:
    """Run Tesseract OSD on ``image``; ``None`` when OSD finds too little text to judge.

    Thread-safe (one OSD instance per thread). Costs ~0.1-0.3 s per 1540 px page.
    """
    global _osd_unavailable
    if _osd_unavailable:
        return None
    try:
        api = _osd_api()
    except Exception as e:  # no tesserocr / osd.traineddata (e.g. a GPU-only box): a nicety, not fatal
        # Once per process, then silently off: a warning per page would flood the journal.
        _osd_unavailable = True
        log.warning("orientation detection unavailable, pages are not turned upright: %s", e)
        return None
    try:
        api.SetImage(image.convert("L") if image.mode != "L" else image)
        r = api.DetectOrientationScript()
    except Exception:
        log.debug("OSD failed", exc_info=True)
        return None
    finally:
        api.Clear()
    if not r:
        return None
    deg = int(r.get("orient_deg", 0)) % 360
    # OSD reports how far the content is turned clockwise; undo it.
    return Orientation(
        rotate_cw=(360 - deg) % 360,
        confidence=float(r.get("orient_conf", 0.0)),
        script=str(r.get("script_name", "")),
        script_confidence=float(r.get("script_conf", 0.0)),
    )


def make_upright(image: Image.Image) -> tuple[Image.Image, int]:
    """Turn ``image`` upright when OSD is sure; returns (image, degrees turned clockwise).

    A turn needs two agreeing OSD answers: the first (confidence >= ``ORIENT_MIN_CONF``, script
    one of ``TEXT_SCRIPTS``) proposes it, and OSD on the turned image must then see an upright
    page with the same minimum confidence and the same script. Speckle and photos can fool one
    OSD pass with confidences up to ~4.6 (measured, bench/RESULTS.md), which would turn an
    upright page sideways; their second answer (angle and script) is random, while real text
    confirms itself. The check costs one more OSD pass, only on pages that are to be turned.
    """
    img, rotation, _ = upright_with_script(image)
    return img, rotation


def upright_with_script(image: Image.Image) -> tuple[Image.Image, int, str]:
    """``make_upright`` plus the OSD script of the page ("" when OSD could not tell)."""
    o = detect_orientation(image)
    if o is None:
        return image, 0, ""
    # The script is only worth passing on when OSD read enough text to be sure of anything.
    script = o.script if o.script in TEXT_SCRIPTS and o.confidence >= ORIENT_MIN_CONF else ""
    if not o.rotate_cw or o.confidence < ORIENT_MIN_CONF or o.script not in TEXT_SCRIPTS:
        return image, 0, script
    # PIL rotates counter-clockwise for positive angles.
    turned = image.rotate(-o.rotate_cw, expand=True)
    check = detect_orientation(turned)
    if check is None or check.rotate_cw != 0 or check.confidence < ORIENT_MIN_CONF or check.script != o.script:
        log.debug("OSD proposed %d deg (conf %.2f) but the check disagreed: %s", o.rotate_cw, o.confidence, check)
        return image, 0, ""
    return turned, o.rotate_cw, o.script


def detect_script(image: Image.Image) -> tuple[int, str, float]:
    """(rotate_cw, script name, script confidence) from OSD; (0, "", 0.0) when unknown."""
    o = detect_orientation(image)
    if o is None:
        return 0, "", 0.0
    return o.rotate_cw, o.script, o.script_confidence
