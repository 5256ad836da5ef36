"""The daemon's one adapter to Tesseract: the only module of ``daemon/`` that imports tesserocr.

Like OCRmyPDF's ``_exec/tesseract.py``, every stage that reads with Tesseract goes through here:
the engine's page reads and its language probe (``daemon.engines.tesseract``, ``tessplan``),
its words (``word_layout`` here), the lost-text re-read (``daemon.engines.tessrecover``),
the table cells (``daemon.pages.scantables``), orientation (OSD) and the read checks and
dictionary probe around it (``daemon.pages.orient``), and the line boxes of the searchable PDF
(``find_lines`` here, run by the render stage for ``daemon.writers.pdflayout``). ``tests/unit/test_tesserocr_adapter.py`` fails when another
module of ``daemon/`` imports tesserocr.

Contract:

- ``PSM`` and ``OEM``: Tesseract's page segmentation modes and engine modes, with tesserocr's
  values (the unit test compares them); callers pass these, never tesserocr's.
- ``ApiSpec(path, lang, psm, oem, variables)``: how an API is made (tessdata folder, model set
  ``"eng+deu"``, mode, engine, variables set after initialisation), and the cache's key. An API
  is handed out in that state; a caller that changes its mode or a variable puts it back.
- ``thread_api(spec) -> TessApi``: this thread's loaded API for ``spec``, made on first use and
  kept. One cache per thread, for every kind of API: Tesseract APIs are not thread-safe (and
  tesserocr releases the GIL while recognising, so threads read in parallel on their own APIs).
  At most ``MAX_APIS_PER_THREAD`` are kept per thread; a new one beyond that ends the one loaded
  first.
- ``new_api(spec)``: an API outside any cache (the engine's ``start()`` loads one to check the
  install); ``adopt(api)`` puts it in the calling thread's cache (the engine's first worker
  reads with it instead of loading the model again). ``discard(spec)`` forgets this thread's API
  for ``spec`` (one that failed may be in a bad state: the next ``thread_api`` makes a new one);
  ``release_thread()`` ends every API of the calling thread (a worker that stops).
  ``loads()``: APIs made in this process so far; ``cached(spec)``, ``cache_size()``: what the
  calling thread holds.
- ``TessApi``: one loaded API, used only on the thread that got it. Its methods are the reads the
  stages make: ``languages`` (its model set, "" once ended), ``set_image``, ``set_psm`` / ``psm``,
  ``set_variable`` / ``variable``, ``recognise``, ``text``, ``mean_conf``, ``read_rect`` (a
  table cell: a rectangle of the set image in a given mode), ``words`` (the recognised words as
  ``WordRead`` records; ``dictionary=True`` adds Tesseract's own word-list check,
  ``WordIsFromDictionary``), ``layout_lines`` (layout analysis alone: the text lines as
  ``LineRead`` records), ``orientation`` (OSD, as an ``Osd`` record), ``clear``, ``end``.
  Tesseract's failures come through as tesserocr raises them (``RuntimeError``).
- ``load()``: imports tesserocr (``ImportError`` when it is not installed).
- ``word_layout(api, size) -> PageLayout``: the words of the page ``api`` has just recognised
  (``TessApi.words``; grouped by line in Tesseract's reading order, blocks numbered from 0), in
  Unicode NFC, leaving out empty words (``WordRead.text`` None or blank; a word without a box),
  and their confidences weighted by length (``PageLayout.confidence``, the page's quality
  figure). Used by the Tesseract engine (the searchable PDF's words, the table search) and the
  scanned-table reader (``daemon.pages.scantables``).
- ``find_lines(image) -> PageLayout``: Tesseract's layout analysis alone (no recognition:
  ``AnalyseLayout`` with ``PSM.AUTO_ONLY``) on the engine's page image: text line boxes in
  reading order with their block numbers, no words. One API per thread, kept loaded (this
  module's cache). Cheap compared with recognition (bench/bench_pdf.py measures it); never
  raises for a page (an empty layout when Tesseract fails). The render stage runs it on a
  rendered page in its worker when the searchable PDF needs line boxes
  (``daemon.pages.textlayer.read_or_render(..., lines=True)``); ``daemon.writers.pdflayout``
  places a VLM's text on them.

Import: tesserocr is imported on first use (``load``, ``new_api``), never when this module is
imported: Tesseract's library reads ``OMP_THREAD_LIMIT`` once, when the first ``import
tesserocr`` of a process loads it, and the entry point sets it before (``daemon.procenv``); the
``once`` main process, the configuration and the render pool import this module without loading
Tesseract.

Why ``MAX_APIS_PER_THREAD`` is 12: each API holds its traineddata in memory (Debian's models are
1-6 MB each, a CJK set several) plus Tesseract's own tables, so the bound is memory. An engine
thread needs one API per model set it reads with (a language's model, the CJK probe's set, the
vertical models), a render thread at most eight (OSD, the read check and the probe with up to
three models each, the layout analysis): 12 keeps a normal mix of languages loaded, and a
thread that sees more reloads a model (0.1-0.4 s) instead of growing.
"""

from __future__ import annotations

import contextlib
import enum
import threading
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from daemon.models import PageLayout, TextBox, TextLine
from daemon.tessdata import tessdata_dir

if TYPE_CHECKING:
    from PIL import Image

__all__ = [
    "PSM",
    "OEM",
    "MAX_APIS_PER_THREAD",
    "ApiSpec",
    "TessApi",
    "WordRead",
    "LineRead",
    "Osd",
    "Box",
    "load",
    "thread_api",
    "new_api",
    "adopt",
    "discard",
    "release_thread",
    "loads",
    "cached",
    "cache_size",
]

#: Loaded APIs kept per thread (see the module docstring for why 12).
MAX_APIS_PER_THREAD = 12

Box = tuple[int, int, int, int]


class PSM(enum.IntEnum):
    """Tesseract's page segmentation modes (tesserocr's ``PSM`` values)."""

    OSD_ONLY = 0
    AUTO_OSD = 1
    AUTO_ONLY = 2
    AUTO = 3
    SINGLE_COLUMN = 4
    SINGLE_BLOCK_VERT_TEXT = 5
    SINGLE_BLOCK = 6
    SINGLE_LINE = 7
    SINGLE_WORD = 8
    CIRCLE_WORD = 9
    SINGLE_CHAR = 10
    SPARSE_TEXT = 11
    SPARSE_TEXT_OSD = 12
    RAW_LINE = 13


class OEM(enum.IntEnum):
    """Tesseract's engine modes (tesserocr's ``OEM`` values)."""

    TESSERACT_ONLY = 0
    LSTM_ONLY = 1
    TESSERACT_LSTM_COMBINED = 2
    DEFAULT = 3


#: tesserocr's ``RIL`` levels and ``WritingDirection.TOP_TO_BOTTOM`` (used here only).
_RIL_BLOCK, _RIL_TEXTLINE, _RIL_WORD = 0, 2, 3
_TOP_TO_BOTTOM = 2


@dataclass(frozen=True)
class ApiSpec:
    """How an API is made: tessdata folder, model set, mode, engine, variables (the cache key)."""

    path: str
    lang: str
    psm: PSM = PSM.AUTO
    oem: OEM = OEM.LSTM_ONLY
    variables: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class WordRead:
    """One word of a recognised image, in Tesseract's reading order. ``text``: as Tesseract
    gives it (not stripped), None for an empty word (tesserocr's "No text returned": an image
    region); ``box`` and ``line_box``: the word's and its line's boxes (None when Tesseract has
    none); ``new_line``/``new_block``: the word starts a text line / a block; ``conf``: its
    confidence (0-100), read only for a word with text (0.0 otherwise); ``in_dictionary``:
    Tesseract found it in the model's word list (only with ``words(dictionary=True)``, and only
    for a word with text)."""

    text: str | None
    box: Box | None
    line_box: Box | None
    new_line: bool
    new_block: bool
    conf: float = 0.0
    in_dictionary: bool = False


@dataclass(frozen=True)
class LineRead:
    """One text line of a layout analysis: its box, its block (numbered from 0 in reading
    order) and whether it runs top to bottom (a vertical CJK column)."""

    box: Box
    block: int
    vertical: bool


@dataclass(frozen=True)
class Osd:
    """Tesseract's orientation and script detection: how far the content is turned clockwise
    (``orient_deg``) and how sure it is, the script's name and how sure of it."""

    orient_deg: int
    orient_conf: float
    script_name: str
    script_conf: float


def load() -> Any:
    """The tesserocr module, imported on first use (``ImportError`` when it is missing)."""
    import tesserocr

    return tesserocr


class TessApi:
    """One loaded Tesseract API (see the module contract); not thread-safe."""

    __slots__ = ("_api", "spec")

    def __init__(self, api: Any, spec: ApiSpec) -> None:
        self._api = api
        self.spec = spec

    def languages(self) -> str:
        """The model set the API is initialised with ("" once ended)."""
        return str(self._api.GetInitLanguagesAsString())

    def set_image(self, image: Any) -> None:
        self._api.SetImage(image)

    def set_psm(self, psm: PSM) -> None:
        self._api.SetPageSegMode(psm)

    def psm(self) -> PSM:
        return PSM(int(self._api.GetPageSegMode()))

    def set_variable(self, name: str, value: str) -> bool:
        return bool(self._api.SetVariable(name, value))

    def variable(self, name: str) -> str | None:
        """A variable's value as Tesseract prints it (None for a name it does not know)."""
        got = self._api.GetVariableAsString(name)
        return None if got is None else str(got)

    def recognise(self) -> None:
        self._api.Recognize()

    def text(self) -> str:
        """The set image's text (recognised first when it was not yet)."""
        return str(self._api.GetUTF8Text())

    def mean_conf(self) -> float:
        return float(self._api.MeanTextConf())

    def read_rect(self, left: int, top: int, width: int, height: int, psm: PSM) -> str:
        """The text of a rectangle of the set image, read in mode ``psm`` (a table cell: the mode
        stays set; ``mean_conf`` is then the rectangle's)."""
        self._api.SetPageSegMode(psm)
        self._api.SetRectangle(left, top, width, height)
        return str(self._api.GetUTF8Text())

    def words(self, dictionary: bool = False) -> list[WordRead]:
        """The recognised image's words (see ``WordRead``); [] when there is nothing to iterate."""
        it = self._api.GetIterator()
        if it is None:
            return []
        iterate_level = load().iterate_level
        out = []
        for w in iterate_level(it, _RIL_WORD):
            try:
                text: str | None = w.GetUTF8Text(_RIL_WORD) or ""
            except RuntimeError:  # "No text returned" (Tesseract's NULL) for an empty word
                text = None
            sure = text is not None and bool(text.strip())
            box, lbox = w.BoundingBox(_RIL_WORD), w.BoundingBox(_RIL_TEXTLINE)
            out.append(WordRead(
                text=text, box=tuple(box) if box is not None else None,
                line_box=tuple(lbox) if lbox is not None else None,
                new_line=bool(w.IsAtBeginningOf(_RIL_TEXTLINE)), new_block=bool(w.IsAtBeginningOf(_RIL_BLOCK)),
                conf=float(w.Confidence(_RIL_WORD)) if sure else 0.0,
                in_dictionary=bool(w.WordIsFromDictionary()) if sure and dictionary else False,
            ))
        return out

    def layout_lines(self, image: Any) -> list[LineRead]:
        """Layout analysis alone (no recognition) of ``image``: its text lines with a box, in
        reading order; the API's image is cleared afterwards."""
        self._api.SetImage(image)
        try:
            it = self._api.AnalyseLayout()
            if it is None:
                return []
            lines: list[LineRead] = []
            block = -1
            for el in load().iterate_level(it, _RIL_TEXTLINE):
                if el.IsAtBeginningOf(_RIL_BLOCK) or block < 0:
                    block += 1
                box = el.BoundingBox(_RIL_TEXTLINE)
                if box is not None:
                    lines.append(LineRead(tuple(box), block, el.Orientation()[1] == _TOP_TO_BOTTOM))
            return lines
        finally:
            self._api.Clear()

    def orientation(self) -> Osd | None:
        """OSD on the set image; None when it finds too little text to judge."""
        r = self._api.DetectOrientationScript()
        if not r:
            return None
        return Osd(int(r.get("orient_deg", 0)), float(r.get("orient_conf", 0.0)), str(r.get("script_name", "")),
                   float(r.get("script_conf", 0.0)))

    def clear(self) -> None:
        self._api.Clear()

    def end(self) -> None:
        self._api.End()


_local = threading.local()
_loads = 0
_loads_lock = threading.Lock()


def new_api(spec: ApiSpec) -> TessApi:
    """A newly loaded API for ``spec``, in no cache."""
    global _loads
    api = load().PyTessBaseAPI(path=spec.path, lang=spec.lang, psm=spec.psm, oem=spec.oem)
    for name, value in spec.variables:
        api.SetVariable(name, value)
    with _loads_lock:
        _loads += 1
    return TessApi(api, spec)


def loads() -> int:
    """APIs made in this process so far (``new_api`` and ``thread_api``)."""
    return _loads


def _cache() -> dict[ApiSpec, TessApi]:
    apis: dict[ApiSpec, TessApi] | None = getattr(_local, "apis", None)
    if apis is None:
        apis = _local.apis = {}
    return apis


def thread_api(spec: ApiSpec) -> TessApi:
    """This thread's API for ``spec`` (see the module contract)."""
    apis = _cache()
    api = apis.get(spec)
    if api is None:
        if len(apis) >= MAX_APIS_PER_THREAD:  # bound memory: the one loaded first goes
            apis.pop(next(iter(apis))).end()
        api = apis[spec] = new_api(spec)
    return api


def cached(spec: ApiSpec) -> bool:
    """This thread holds an API for ``spec``."""
    return spec in _cache()


def cache_size() -> int:
    """APIs this thread holds."""
    return len(_cache())


def adopt(api: TessApi) -> None:
    """Put ``api`` (from ``new_api``) in this thread's cache, under its spec."""
    apis = _cache()
    if api.spec not in apis and len(apis) >= MAX_APIS_PER_THREAD:
        apis.pop(next(iter(apis))).end()
    apis[api.spec] = api


def discard(spec: ApiSpec) -> None:
    """Forget this thread's API for ``spec`` (not ended: it may be in a bad state)."""
    _cache().pop(spec, None)


def release_thread() -> None:
    """End every API of this thread (errors ignored: the thread is stopping)."""
    apis = _cache()
    for api in apis.values():
        with contextlib.suppress(Exception):
            api.end()
    apis.clear()


# --------------------------------------------------------------------------- the stages' reads


def word_layout(api: TessApi, size: tuple[int, int]) -> PageLayout:
    """The words of the page ``api`` has just recognised, with their boxes, grouped by line in
    Tesseract's reading order (blocks numbered from 0). Empty words (Tesseract reports some for
    image regions, and one without any box for an image with no text: a crop of nothing but
    fill-in lines) are left out; a line without any word is dropped. Never raises for what
    Tesseract found on the image (the scanned-table reader's crops come through here too)."""
    lines: list[TextLine] = []
    block = -1
    weighted = chars = 0.0  # the words' confidences weighted by their lengths (daemon.quality)
    for w in api.words():
        if w.new_block or block < 0:
            block += 1
        if w.new_line or not lines:
            if w.line_box is None:
                continue
            lines.append(TextLine(box=w.line_box, block=block))
        if w.text is None:  # tesserocr's "No text returned" (Tesseract's NULL) for an empty word
            continue
        text = unicodedata.normalize("NFC", w.text.strip())
        wbox = w.box
        if text and wbox is not None:
            conf = w.conf
            lines[-1].words.append(TextBox(text=text, box=wbox, conf=conf))
            weighted += len(text) * max(0.0, conf)
            chars += len(text)
    return PageLayout(size=size, lines=[ln for ln in lines if ln.words], has_words=True,
                      confidence=weighted / chars if chars else None)


def _layout_spec() -> ApiSpec:
    # Layout analysis needs no language model, but the API must be initialised with one;
    # English is the smallest of ours.
    return ApiSpec(tessdata_dir(), "eng", PSM.AUTO_ONLY, OEM.LSTM_ONLY)


def find_lines(image: Image.Image) -> PageLayout:
    """Text line boxes of ``image`` in reading order (layout analysis only; see the contract)."""
    load()  # (without tesserocr this raises, as it always did: only Tesseract's failures are caught)
    size = image.size
    lines: list[TextLine] = []
    spec = _layout_spec()
    try:
        api = thread_api(spec)
        for ln in api.layout_lines(image.convert("L") if image.mode != "L" else image):
            box = ln.box
            if box[2] > box[0] and box[3] > box[1]:
                lines.append(TextLine(box=(int(box[0]), int(box[1]), int(box[2]), int(box[3])), block=ln.block))
    except Exception:  # a layout failure only costs placement precision, never the page
        discard(spec)
        return PageLayout(size=size)
    return PageLayout(size=size, lines=lines)
