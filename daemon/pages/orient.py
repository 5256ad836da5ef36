"""Orientation: Tesseract OSD (``--psm 0``) to turn sideways/upside-down pages upright.

(OSD, its read checks, the probe and the read-first check share the band helpers; their
Tesseract APIs come from ``daemon.tessapi``'s per-thread cache.)

Public API:

- ``detect_orientation(image) -> Orientation | None`` and ``detect_script(image)``: Tesseract OSD;
  the Tesseract engine uses the script to pick language models.
- ``make_upright(image) -> (image, degrees)`` and ``upright_with_script(image)`` (the same plus
  the page's OSD script), used by ``daemon.pages.render``.
- ``probe_turn(image, script)``: the turn decided by reading the page (below); used by
  ``upright_with_script`` where OSD cannot place a page.
- ``upright_by_reading(image) -> (image, degrees, script, BandRead | None)``: the Tesseract
  render's way (``RenderOptions.read_first``, issue 32): the page's text band (``text_bands``) is
  read with English first; a band that reads as upright text (``is_upright_text``: confidence
  >= ``UPRIGHT_MIN_CONF`` and ``UPRIGHT_MIN_LETTERS`` letters in sure dictionary words) is an
  upright Latin page, and OSD is not run; any other page goes to ``upright_with_script`` as
  before. The band read is handed on (page not turned) as the engine's English language probe.
- ``tessdata_dir()``: Tesseract's data folder (:mod:`daemon.tessdata`'s, re-exported).

Orientation: Tesseract OSD (``daemon.tessapi``) with ``lang="osd"`` (initialising OSD with the
default ``eng`` aborts the whole process inside Tesseract 5.5.4's OSD code -- a C++
``std::out_of_range``, not a Python exception). One OSD API per thread, kept loaded. A page is
turned only when OSD proposes a turn with confidence >= ``ORIENT_MIN_CONF`` and a script of our
languages, and then: for a quarter turn, a second OSD pass on the turned page sees it upright
with the same script (calibrated on 155 generated pages: 0 wrong turns, bench/RESULTS.md); for
a half turn, the page *reads* better upside down than as it is (Tesseract's mean word confidence
on the inkiest 40 % band, ``reads_better``): OSD mistakes upright pages for upside-down ones at
confidence 2.4-2.6 and its second pass confirms the mistake (issue 15), because both passes
share its blind spot. A quarter turn is also read both ways up along its axis (90 vs 270).

Where OSD cannot place a page -- no answer, a confidence under ``ORIENT_MIN_CONF``, a script none
of our languages has, or a quarter turn its check pass did not confirm -- the page is not left as
it is: ``probe_turn`` reads the inkiest band of it as it is, upside down and both ways sideways
(English, or the model of OSD's unsure script) and keeps the way with clearly the most letters in
sure dictionary words (issue 32: a dense two-column Danish page turned 90 degrees was "Tamil" to
OSD and read sideways into junk). It stops after the first read when the page reads as text as it
is, so an upright page OSD was unsure of costs one band read; a page OSD places costs nothing.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

import numpy as np
from PIL import Image

from daemon.tessapi import OEM, PSM, ApiSpec, TessApi, thread_api
from daemon.tessdata import tessdata_dir

__all__ = [
    "detect_orientation",
    "detect_script",
    "make_upright",
    "upright_with_script",
    "upright_by_reading",
    "upright_band",
    "is_upright_text",
    "read_band",
    "BandRead",
    "text_bands",
    "Orientation",
    "tessdata_dir",
    "inkiest_band",
    "ORIENT_MIN_CONF",
    "TEXT_SCRIPTS",
]

log = logging.getLogger(__name__)

#: Minimum OSD orientation confidence (on both passes) to turn a page. Calibrated with
#: ``bench/bench_render.py --calibrate``: right answers score 5-19 on Latin pages, 4.4-16 on
#: Japanese, 1.6-2.1 on sparse and 7-9 on dense Chinese pages; random noise scores up to 4.4,
#: which the second, confirming pass rejects.
ORIENT_MIN_CONF = 1.5

#: Longest edge (px) of the copy OSD looks at: the size it was calibrated on (bench/RESULTS.md).
OSD_EDGE = 1540

#: Scripts of the 11 supported languages as OSD names them; an OSD answer naming another
#: script (on noise it says "Arabic" or "Bengali") is not trusted to turn a page.
TEXT_SCRIPTS = frozenset({"Latin", "Han", "Japanese", "Katakana", "Hiragana", "Hangul"})



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


_osd_unavailable = False


def _osd_api() -> TessApi:
    # lang="osd" is required: with the default "eng" Tesseract 5.5.4 aborts the process.
    return thread_api(ApiSpec(tessdata_dir(), "osd", PSM.OSD_ONLY, OEM.DEFAULT))


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
        api.set_image(image.convert("L") if image.mode != "L" else image)
        r = api.orientation()
    except Exception:
        log.debug("OSD failed", exc_info=True)
        return None
    finally:
        api.clear()
    if r is None:
        return None
    deg = r.orient_deg % 360
    # OSD reports how far the content is turned clockwise; undo it.
    return Orientation(
        rotate_cw=(360 - deg) % 360,
        confidence=r.orient_conf,
        script=r.script_name,
        script_confidence=r.script_conf,
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
    """``make_upright`` plus the OSD script of the page ("" when OSD could not tell).

    A page larger than ``OSD_EDGE`` (rendered at 300 dpi for Tesseract) is judged on a copy of
    that size: OSD was calibrated there and its cost grows with pixels; the turn is applied to
    the full page.
    """
    if max(image.size) > OSD_EDGE * 1.05:
        s = OSD_EDGE / max(image.size)
        small = image.resize((max(1, round(image.width * s)), max(1, round(image.height * s))), Image.Resampling.BOX)
        _img, rotation, script = upright_with_script(small)
        return (image.rotate(-rotation, expand=True) if rotation else image), rotation, script
    o = detect_orientation(image)
    if o is None or o.confidence < ORIENT_MIN_CONF or o.script not in TEXT_SCRIPTS:
        # OSD could not tell (no answer, too unsure, or a script none of our languages has:
        # a dense two-column Danish page turned 90 deg was "Tamil" at 4.0): read the page.
        return _probed(image, "" if o is None or o.script not in TEXT_SCRIPTS else o.script)
    # The script is only worth passing on when OSD read enough text to be sure of anything.
    script = o.script
    if not o.rotate_cw:
        return image, 0, script
    # PIL rotates counter-clockwise for positive angles.
    turned = image.rotate(-o.rotate_cw, expand=True)
    if o.rotate_cw != 180:
        check = detect_orientation(turned)
        if check is None or check.rotate_cw != 0 or check.confidence < ORIENT_MIN_CONF or check.script != o.script:
            # CJK text can be read in columns, so a sideways Chinese or Japanese page fools the
            # check pass (gate corpus 39-rotated_270-zh: OSD proposed 90 deg at 2.59, the check
            # on the turned page said 180 at 2.06): for those scripts reading decides instead,
            # the turned page (either way up along the proposed axis) against the page as it is.
            sideways_cjk = o.script in VERTICAL_SCRIPTS and (
                reads_better(turned, image, o.script) or reads_better(turned.rotate(180, expand=True), image, o.script)
            )
            if not sideways_cjk:
                log.debug("OSD proposed %d deg (conf %.2f) but the check disagreed: %s", o.rotate_cw, o.confidence, check)
                return _probed(image, "")
    # OSD's answer fixes the axis; which way up along it is decided by reading: OSD mistakes an
    # upright page for an upside-down one (and its own second pass agrees), so the page is read
    # both ways up and the way that reads better wins (``reads_better``).
    if o.rotate_cw == 180:
        verdict = reads_better(turned, image, o.script)
        if verdict is None:
            # No recognition model for the script: the old rule with a stricter confidence.
            verdict = o.confidence >= ORIENT_180_MIN_CONF
        if not verdict:
            log.debug("OSD proposed 180 deg (conf %.2f); the page reads better as it is", o.confidence)
            return image, 0, script
        return turned, 180, o.script
    flipped = turned.rotate(180, expand=True)
    if reads_better(flipped, turned, o.script):
        return flipped, (o.rotate_cw + 180) % 360, o.script
    return turned, o.rotate_cw, o.script


#: Scripts that are also written in columns: OSD's check pass is not trusted alone for them.
VERTICAL_SCRIPTS = ("Han", "Japanese", "Katakana", "Hiragana")
#: Recognition models that read a page both ways up, by OSD script (Latin text reads with
#: English well enough to tell upright from upside down).
READ_MODEL = {"Latin": "eng", "Han": "chi_sim", "Japanese": "jpn", "Katakana": "jpn", "Hiragana": "jpn"}
#: Mean word confidence (0-100) by which the other way up must read better to be chosen.
#: Measured on real pages (bench/bench_understand.py orient, bench/RESULTS.md): upright text
#: reads at 80-95, upside-down text at 20-60.
READ_MARGIN = 15.0
#: Without a recognition model a 180 degree turn needs this OSD confidence: the upright pages
#: OSD turned upside down scored 2.4-2.6 (issue 15); right answers on Latin pages 5.1-19.4.
ORIENT_180_MIN_CONF = 5.0
#: Height of the band read for the check (a fraction of the page's): the band with the most ink,
#: so a short letter at the top of the page is read, at ~40 % of a whole page's cost.
READ_BAND = 0.4
#: Below this confidence on both readings there is no text to judge by (a photo, a blank page).
READ_MIN_CONF = 30.0


def _thread_api(model: str, psm: PSM) -> TessApi:
    """This thread's Tesseract API for ``model`` in page segmentation mode ``psm`` (the read check
    and the probe each keep theirs: an API's mode is set once, at creation)."""
    return thread_api(ApiSpec(tessdata_dir(), model, psm, OEM.LSTM_ONLY))


def _read_api(model: str) -> TessApi:
    return _thread_api(model, PSM.AUTO)


def read_confidence(image: Image.Image, script: str) -> float | None:
    """Tesseract's mean word confidence on the inkiest band of ``image`` with the script's
    model; None when there is no model (or no tesserocr) for it."""
    model = READ_MODEL.get(script)
    if model is None or not os.path.isfile(os.path.join(tessdata_dir(), f"{model}.traineddata")):
        return None
    band = _inkiest_band(image.convert("L"))
    try:
        api = _read_api(model)
        api.set_image(band)
        api.recognise()
        conf = api.mean_conf()
        api.clear()
    except Exception:
        log.debug("orientation read check failed", exc_info=True)
        return None
    return conf


def _inkiest_band(gray: Image.Image) -> Image.Image:
    return inkiest_band(gray, READ_BAND)


def inkiest_band(gray: Image.Image, share: float) -> Image.Image:
    """The horizontal band of ``share`` of the page's height with the most dark pixels (also the
    Tesseract engine's language probe, ``daemon.engines.tessplan``)."""
    return text_bands(gray, share)[0]


def text_bands(gray: Image.Image, share: float) -> list[Image.Image]:
    """Bands of ``share`` of the page's height to read for its text, best first: the inkiest
    band, then one that does not overlap it -- the band with the most changes between ink and
    paper (``texty_band``), or when that is the same band, the next inkiest. A band read as no
    words (a screenshot, a photo: the sideways Swedish manual page's inkiest band, 0 words at
    "confidence" 95) moves on to the second rather than leaving the decision to a full read."""
    w, h = gray.size
    band_h = max(1, int(h * share))
    step = max(1, h // 200)
    rows = np.asarray(gray.reduce(step) if step > 1 else gray) < 128
    ink = np.concatenate([[0], np.cumsum(rows.sum(axis=1))])
    n = max(1, band_h // step)
    if len(ink) - 1 <= n:
        return [gray]
    sums = (ink[n:] - ink[:-n]).astype(np.float64)
    first = int(np.argmax(sums))
    top = first * step
    row_ink = (np.asarray(gray) < 128).sum(axis=1)
    bands = [_snapped(gray, row_ink, top, band_h)]
    texty = _texty_top(gray, band_h)
    if texty is not None and abs(texty - top) >= band_h // 2:
        bands.append(_snapped(gray, row_ink, texty, band_h))
    else:
        sums[max(0, first - n + 1):first + n] = -1.0  # no overlap with the first
        second = int(np.argmax(sums))
        if sums[second] > 0:
            bands.append(_snapped(gray, row_ink, second * step, band_h))
    return bands


def _snapped(gray: Image.Image, row_ink: np.ndarray, top: int, band_h: int) -> Image.Image:
    """The band from ``top``, ``band_h`` rows, its edges moved out (by up to a third of the band)
    to the nearest rows without ink: a text line cut in half at an edge reads as junk that pulls
    the band's mean confidence down (an upright Italian page's band: 74 cut, 85 whole)."""
    w, h = gray.size
    reach = band_h // 3
    gap = max(1, w // 500)  # a row with this little ink is between lines
    bottom = min(h, top + band_h)
    up = np.nonzero(row_ink[max(0, top - reach):top + 1][::-1] <= gap)[0]
    if len(up):
        top -= int(up[0])
    down = np.nonzero(row_ink[max(0, bottom - 1):min(h, bottom + reach)] <= gap)[0]
    if len(down):
        bottom = max(0, bottom - 1) + int(down[0]) + 1
    return gray.crop((0, top, w, bottom))


def reads_better(candidate: Image.Image, current: Image.Image, script: str) -> bool | None:
    """True when ``candidate`` reads clearly better than ``current`` (by ``READ_MARGIN``), False
    when not, None when it cannot be read (no model for ``script``)."""
    a = read_confidence(candidate, script)
    if a is None:
        return None
    b = read_confidence(current, script)
    if b is None or max(a, b) < READ_MIN_CONF:
        return None
    log.debug("orientation read check (%s): %.0f vs %.0f", script, a, b)
    return a >= b + READ_MARGIN


# --------------------------------------------------------------------------- the probe


#: Share of the (turned) page's height the probe reads: the inkiest band of it.
PROBE_BAND = 0.15
#: A word counts for a way up when Tesseract reads it at this confidence or more and finds it
#: in the model's word list (``WordIsFromDictionary``), or it is CJK text read this surely.
PROBE_WORD_CONF = 70
#: Letters in such words a way up needs before it can win, and how many times the runner-up's
#: it must have. Measured (1540 px copy, 15 % band, English model, page segmentation 6): a dense
#: two-column Danish page, the right way up 282 letters, the wrong ones 4-64; a sideways Swedish
#: manual page that is mostly a screenshot (bench/realdocs scan-audacity-sv) 86 against 0-36.
PROBE_MIN_LETTERS = 40
PROBE_RATIO = 2.0
#: The page as it is reads this well: upright, the other turns are not read.
PROBE_UPRIGHT_LETTERS = 150

def _probe_api(model: str) -> TessApi:
    # One uniform block of horizontal text (page segmentation 6), not the automatic layout:
    # that finds text lines running down a sideways page and reads them as vertical text
    # (the Danish page turned 90 deg read at 87 with PSM.AUTO, as well as upright), so every
    # way up would read well. A band across two columns still reads as words.
    return _thread_api(model, PSM.SINGLE_BLOCK)


@dataclass(frozen=True)
class BandRead:
    """One band read as one block of text (page segmentation 6): its text, Tesseract's mean word
    confidence, the letters in sure dictionary words (``probe_letters``'s measure) and the
    words read at all."""

    text: str
    conf: float
    letters: int
    words: int


def read_band(band: Image.Image, model: str) -> BandRead:
    """``band`` read with ``model`` as one block of horizontal text (see ``_probe_api``)."""
    api = _probe_api(model)
    api.set_image(band)
    try:
        api.recognise()
        letters = words = 0
        for w in api.words(dictionary=True):
            text = w.text or ""  # (None: an empty word)
            if not text.strip():
                continue
            words += 1
            if w.conf < PROBE_WORD_CONF:
                continue
            cjk = sum(_is_cjk(c) for c in text)
            alpha = sum(c.isalpha() for c in text)
            if cjk or (alpha >= 2 and w.in_dictionary):
                letters += alpha
        return BandRead(api.text(), api.mean_conf(), letters, words)
    finally:
        api.clear()


def probe_letters(gray: Image.Image, model: str) -> int:
    """Letters in the words Tesseract reads surely (``PROBE_WORD_CONF``) and finds in its word
    list (or CJK characters read surely), on the inkiest band of ``gray`` as it is."""
    return read_band(texty_band(gray, PROBE_BAND), model).letters


def texty_band(gray: Image.Image, share: float) -> Image.Image:
    """The horizontal band of ``share`` of the page's height with the most changes between ink
    and paper along its rows: text lines have many, a screenshot's grey panels or a photo few.
    The band with the most dark pixels (``inkiest_band``) was a screenshot on a sideways
    Swedish manual page (bench/realdocs scan-audacity-sv), whose text the probe then never saw:
    0-6 letters every way up; this band read 86 the right way, 0-36 the others."""
    w, h = gray.size
    band_h = max(1, int(h * share))
    top = _texty_top(gray, band_h)
    if top is None:
        return gray
    return gray.crop((0, top, w, min(h, top + band_h)))


def _texty_top(gray: Image.Image, band_h: int) -> int | None:
    """Top row of ``texty_band``'s band of ``band_h`` rows; None when the page is not taller."""
    ink = np.asarray(gray) < 128
    changes = np.abs(np.diff(ink.astype(np.int8), axis=1)).sum(axis=1)
    cum = np.concatenate([[0], np.cumsum(changes)])
    if len(cum) - 1 <= band_h:
        return None
    return int(np.argmax(cum[band_h:] - cum[:-band_h]))


def _is_cjk(c: str) -> bool:
    o = ord(c)
    return 0x3040 <= o <= 0x30FF or 0x3400 <= o <= 0x9FFF or 0xF900 <= o <= 0xFAFF


def probe_turn(image: Image.Image, script: str = "") -> int | None:
    """Degrees to turn ``image`` clockwise to make it upright, decided by reading it: the band
    with the most ink read at 0/90/180/270 (the page turned each way), the way with the most
    letters in sure dictionary words wins (``PROBE_MIN_LETTERS``, ``PROBE_RATIO``); None when no
    way reads as text (a photo, a blank page, a script without a model here).

    Cost (2-core box, 1540 px copy; ``bench`` figures in bench/RESULTS.md): 0.5-0.7 s CPU for
    the page as it is, which stops there when it reads as text (``PROBE_UPRIGHT_LETTERS``);
    2.5-4 s for all four ways (a sideways read is the slowest, 1.3-2 s). It runs only where OSD
    could not tell; a page OSD places costs nothing more.
    """
    model = READ_MODEL.get(script, "eng")
    if not os.path.isfile(os.path.join(tessdata_dir(), f"{model}.traineddata")):
        return None
    gray = image.convert("L")
    scores: dict[int, int] = {}
    for turn in (0, 180, 90, 270):
        try:
            scores[turn] = probe_letters(gray.rotate(-turn, expand=True) if turn else gray, model)
        except Exception:  # no tesserocr, a model that does not load, a page Tesseract refuses
            log.debug("orientation probe failed", exc_info=True)
            return None
        if turn == 0 and scores[0] >= PROBE_UPRIGHT_LETTERS:
            return 0
    ranked = sorted(scores.items(), key=lambda kv: kv[1], reverse=True)
    (best, top), (_, second) = ranked[0], ranked[1]
    log.debug("orientation probe (%s): %s", model, scores)
    if top < PROBE_MIN_LETTERS or top < PROBE_RATIO * second:
        return None
    return best


def _probed(image: Image.Image, script: str) -> tuple[Image.Image, int, str]:
    """The page turned the way ``probe_turn`` reads it best (as it is when it cannot tell); the
    script stays "" (the engine's language probe decides the models)."""
    turn = probe_turn(image, script)
    if not turn:
        return image, 0, ""
    return image.rotate(-turn, expand=True), turn, ""


# --------------------------------------------------------------------------- reading first


#: The read-first upright check (issue 32; ``upright_by_reading``): share of the page's height
#: read, the mean confidence and the letters in sure dictionary words (``BandRead.letters``) that
#: make a band upright Latin text. Measured on the CPU profiling set's 10 pages, each read as it
#: is and turned 90/180/270 (bench/cpu_profile_2026-12-03.md, "Savings, round two"): upright
#: Latin pages 85-93 with 56-170 letters; CJK pages 14-27; every turned band 25-46 with 0-30
#: letters, but for a sideways screenshot band of 9-10 words, 58-75 with 0 letters. The letters
#: keep such a band (a band of no words "reads" at 95) from counting; English's word list still
#: finds 27-33 letters on the short Danish and Swedish test invoices (read with OSD then).
UPRIGHT_BAND = 0.12
UPRIGHT_MIN_CONF = 80.0
UPRIGHT_MIN_LETTERS = 20
#: A band read as fewer words than this is not judged: the next band (``text_bands``) is read.
BAND_MIN_WORDS = 5


def upright_band(image: Image.Image, model: str = "eng") -> BandRead | None:
    """The page's text band (``text_bands``, ``UPRIGHT_BAND``) read as it is with ``model``: the
    first band with ``BAND_MIN_WORDS`` words, else the one with more; None when ``model`` is not
    installed."""
    if not os.path.isfile(os.path.join(tessdata_dir(), f"{model}.traineddata")):
        return None
    gray = image.convert("L") if image.mode != "L" else image
    best: BandRead | None = None
    for band in text_bands(gray, UPRIGHT_BAND):
        got = read_band(band, model)
        if best is None or got.words > best.words:
            best = got
        if got.words >= BAND_MIN_WORDS:
            break
    return best


def is_upright_text(band: BandRead | None) -> bool:
    """The band reads as upright text: sure (``UPRIGHT_MIN_CONF``) and with dictionary words."""
    return band is not None and band.conf >= UPRIGHT_MIN_CONF and band.letters >= UPRIGHT_MIN_LETTERS


def upright_by_reading(image: Image.Image) -> tuple[Image.Image, int, str, BandRead | None]:
    """``upright_with_script`` for the Tesseract engine, reading first: the page's text band is
    read with English (``upright_band``); a band that reads as upright text (``is_upright_text``)
    is an upright Latin page, and OSD (~1 s a page, the costliest optional stage) is not run.
    Every other page -- a band read poorly: turned, CJK, a photo -- goes through OSD and its
    checks as before. Returns (image, degrees turned, script, the band read); the band only when
    the page was not turned (the engine's language probe reads it as its own)."""
    band = None
    try:
        band = upright_band(image)
    except Exception:  # no tesserocr, a model that does not load: OSD as before
        log.debug("upright band read failed", exc_info=True)
    if is_upright_text(band):
        return image, 0, "Latin", band
    img, rotation, script = upright_with_script(image)
    return img, rotation, script, band if not rotation else None


def detect_script(image: Image.Image) -> tuple[int, str, float]:
    """(rotate_cw, script name, script confidence) from OSD; (0, "", 0.0) when unknown."""
    o = detect_orientation(image)
    if o is None:
        return 0, "", 0.0
    return o.rotate_cw, o.script, o.script_confidence
