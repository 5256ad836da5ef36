"""Tesseract engine: real Tesseract on generated pages, plus the concurrency contract.

The contract tests (back-pressure, close, priority) gate the worker with an event so they can
observe queued and running pages deterministically; recognition itself is real elsewhere.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import docgen
import pytest
from PIL import Image
from renderopts import render_opts

from daemon import tessapi
from daemon.config import EngineCfg, TesseractCfg
from daemon.engines.base import PageRequest
from daemon.engines.tesseract import TesseractEngine, choose_languages, tidy_text
from daemon.errors import EngineDeadError, ExitCode, FatalError, InputError
from daemon.models import PageText
from daemon.pages.render import render_page


def page(tmp: Path, lang: str, text: str | None = None) -> Image.Image:
    """A generated scan of the language's sample, rendered like the pipeline does."""
    p = docgen.make_image(tmp / f"{lang}.png", text or docgen.SAMPLES[lang], lang=lang)
    return render_page(p, 0, render_opts(autorotate=False)).image


def found(words: list[str], text: str) -> list[str]:
    return [w for w in words if w in text]


@pytest.fixture(scope="module")
def engine() -> Iterator[TesseractEngine]:
    eng = TesseractEngine(EngineCfg(tesseract=TesseractCfg(threads=2)))
    eng.start()
    yield eng
    eng.close()


@pytest.mark.parametrize("lang", ["en", "de", "fr", "zh", "ja"])
def test_recognises_languages(engine: TesseractEngine, tmp_path: Path, lang: str) -> None:
    fut = engine.submit(PageRequest(f"doc-{lang}", 3, page(tmp_path, lang)))
    res = fut.result(timeout=120)
    assert isinstance(res, PageText)
    assert res.index == 3 and res.engine == "tesseract"
    words = docgen.SAMPLE_WORDS[lang]
    # OCR may garble a word; at least 4 of the 5 key words must come back verbatim.
    assert len(found(words, res.text)) >= 4, res.text
    assert docgen.cer(docgen.SAMPLES[lang], res.text) < 0.1, res.text
    assert res.meta["confidence"] > 50
    if lang in ("zh", "ja"):
        assert " " not in res.text.split("\n")[1], "spaces left between CJK characters"
    expected_model = {"en": "eng", "de": "deu", "fr": "fra", "zh": "chi_sim", "ja": "jpn"}[lang]
    assert expected_model in res.meta["languages"]


def test_cjk_page_misread_as_latin_is_read_with_cjk_models(engine: TesseractEngine, tmp_path: Path) -> None:
    # The render stage's OSD called this page "Latin"; the English probe reads unsure, so the
    # engine probes with the CJK models and reads the page with Chinese.
    text = "华联超市（朝阳店）\n北京市朝阳区建国路88号\n购物小票\n收银台：03 收银员：王丽\n合计：¥128.50 现金 找零"
    img = docgen.make_image(tmp_path / "zh.jpg", text, fmt="jpeg", lang="zh", font_size=26)
    req = PageRequest("doc-zh-latin", 0, render_page(img, 0, render_opts(autorotate=False)).image, script="Latin")
    res = engine.submit(req).result(timeout=120)
    assert res.meta["languages"] == ["chi_sim"], res.meta
    assert res.meta["probe"][0] == ["eng"] and "chi_sim" in res.meta["probe"][1], res.meta
    assert docgen.cer(text, res.text) < 0.15, res.text


def test_plain_text_with_blank_line_between_paragraphs(engine: TesseractEngine, tmp_path: Path) -> None:
    text = "First paragraph about the invoice.\nIt has two lines.\n\n\n\nSecond paragraph after a gap."
    res = engine.submit(PageRequest("doc-2", 0, page(tmp_path, "en", text))).result(timeout=120)
    paras = res.text.split("\n\n")
    assert len(paras) == 2, res.text
    assert "First paragraph" in paras[0] and "Second paragraph" in paras[1]
    assert "\n\n\n" not in res.text and "\f" not in res.text


def test_language_hint_restricts_models(engine: TesseractEngine, tmp_path: Path) -> None:
    res = engine.submit(PageRequest("doc-3", 0, page(tmp_path, "de"), languages=["de"])).result(timeout=120)
    assert res.meta["languages"] == ["deu"]
    assert "Rechnung" in res.text


def test_document_language_learned_from_first_page(engine: TesseractEngine, tmp_path: Path) -> None:
    sv = page(tmp_path, "sv")
    first = engine.submit(PageRequest("doc-sv", 0, sv)).result(timeout=120)
    # A band of the page probed with English is Swedish: the page is read once, as Swedish.
    assert first.meta["probe"] == [["eng"]] and "first_pass" not in first.meta, first.meta
    assert first.meta["languages"] == ["swe"]  # Swedish alone: English took "på" as "pa"
    assert "lådor" in first.text and "Vänligen" in first.text, first.text
    second = engine.submit(PageRequest("doc-sv", 1, sv)).result(timeout=120)
    assert second.meta["languages"] == ["swe"] and "probe" not in second.meta
    assert "first_pass" not in second.meta
    assert len(found(docgen.SAMPLE_WORDS["sv"], second.text)) == 5, second.text
    # English pages are read with English alone; another document starts afresh.
    en = engine.submit(PageRequest("doc-en2", 0, page(tmp_path, "en"))).result(timeout=120)
    assert en.meta["languages"] == ["eng"] and en.meta["probe"] == [["eng"]] and "first_pass" not in en.meta


def test_a_later_page_in_another_language_is_read_again_in_it(engine: TesseractEngine, tmp_path: Path) -> None:
    first = engine.submit(PageRequest("doc-mixed", 0, page(tmp_path, "en"))).result(timeout=120)
    assert first.meta["languages"] == ["eng"]
    da = engine.submit(PageRequest("doc-mixed", 1, page(tmp_path, "da"))).result(timeout=120)
    # read as the document's English first; its text is Danish: read again as Danish
    assert da.meta["first_pass"] == ["eng"] and da.meta["languages"] == ["dan"], da.meta
    assert "beløb" in da.text, da.text
    # the document's language follows: the next Danish page is read as Danish at once
    again = engine.submit(PageRequest("doc-mixed", 2, page(tmp_path, "da"))).result(timeout=120)
    assert again.meta["languages"] == ["dan"] and "first_pass" not in again.meta


def test_hint_outside_config_falls_back_to_config(tmp_path: Path) -> None:
    eng = TesseractEngine(EngineCfg(tesseract=TesseractCfg(languages=["en", "fr"], threads=1)))
    eng.start()
    try:
        res = eng.submit(PageRequest("doc-h", 0, page(tmp_path, "fr"), languages=["ja"])).result(timeout=120)
    finally:
        eng.close()
    assert "jpn" not in res.meta["languages"] and "fra" in res.meta["languages"]
    assert "commande" in res.text


def test_concurrent_submits_from_threads(engine: TesseractEngine, tmp_path: Path) -> None:
    langs = ["en", "fr", "de", "ja"]
    images = {lang: page(tmp_path, lang) for lang in langs}
    results: dict[str, PageText] = {}
    errors: list[BaseException] = []

    def client(lang: str, idx: int) -> None:
        try:
            results[lang] = engine.submit(PageRequest(f"doc-{idx}", idx, images[lang])).result(timeout=300)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=client, args=(lang, i)) for i, lang in enumerate(langs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i, lang in enumerate(langs):
        assert results[lang].index == i
        assert len(found(docgen.SAMPLE_WORDS[lang], results[lang].text)) >= 4, (lang, results[lang].text)


def test_recognize_batch_keeps_request_order(engine: TesseractEngine, tmp_path: Path) -> None:
    reqs = [PageRequest("doc-9", i, page(tmp_path, lang)) for i, lang in enumerate(["sv", "it"])]
    out = engine.recognize(reqs, timeout=300)
    assert [r.index for r in out] == [0, 1]
    assert "beställning" in out[0].text and "ordine" in out[1].text


def test_blank_page_gives_empty_text(engine: TesseractEngine) -> None:
    res = engine.submit(PageRequest("doc-4", 0, Image.new("RGB", (1089, 1540), "white"))).result(timeout=60)
    assert res.text == ""


def test_empty_image_is_input_error(engine: TesseractEngine) -> None:
    fut = engine.submit(PageRequest("doc-5", 0, Image.new("RGB", (0, 0))))
    with pytest.raises(InputError):
        fut.result(timeout=60)


# ----------------------------------------------------------------------------- contract (gated)


class Gated(TesseractEngine):
    """Recognition waits for ``gate``; records the order pages start in."""

    def __init__(self, cfg: EngineCfg) -> None:
        super().__init__(cfg)
        self.gate = threading.Event()
        self.started: list[int] = []
        self.first_running = threading.Event()

    def _recognise(self, req: PageRequest) -> PageText:
        self.started.append(req.index)
        self.first_running.set()
        self.gate.wait(60)
        return PageText(index=req.index, text=f"page {req.index}", engine=self.name)


@pytest.fixture
def gated() -> Iterator[Gated]:
    eng = Gated(EngineCfg(tesseract=TesseractCfg(threads=1, languages=["en"])))
    eng.max_in_flight = 2
    eng.start()
    yield eng
    eng.gate.set()
    eng.close()


def _img() -> Image.Image:
    return Image.new("RGB", (10, 10), "white")


def test_back_pressure_blocks_submit(gated: Gated) -> None:
    submitted: list[cf.Future[PageText]] = []

    def producer() -> None:
        for i in range(4):
            submitted.append(gated.submit(PageRequest("doc-1", i, _img())))

    t = threading.Thread(target=producer)
    t.start()
    t.join(timeout=1.0)
    assert t.is_alive(), "submit did not block with max_in_flight pages pending"
    assert len(submitted) == 2
    gated.gate.set()
    t.join(timeout=30)
    assert not t.is_alive()
    assert [f.result(timeout=30).index for f in submitted] == [0, 1, 2, 3]


def test_close_fails_pending_futures(gated: Gated) -> None:
    gated.max_in_flight = 10
    futs = [gated.submit(PageRequest("doc-1", i, _img())) for i in range(3)]
    assert gated.first_running.wait(10)
    gated.close(drain_timeout=0)
    for f in futs:
        with pytest.raises(EngineDeadError):
            f.result(timeout=10)
    assert not gated.healthy()
    late = gated.submit(PageRequest("doc-2", 0, _img()))
    with pytest.raises(EngineDeadError):
        late.result(timeout=1)


def test_close_drains_within_timeout(gated: Gated) -> None:
    futs = [gated.submit(PageRequest("doc-1", i, _img())) for i in range(2)]
    threading.Timer(0.2, gated.gate.set).start()
    gated.close(drain_timeout=30)
    assert [f.result(timeout=1).text for f in futs] == ["page 0", "page 1"]


def test_close_wakes_blocked_submitter(gated: Gated) -> None:
    for i in range(2):
        gated.submit(PageRequest("doc-1", i, _img()))
    box: list[cf.Future[PageText]] = []
    t = threading.Thread(target=lambda: box.append(gated.submit(PageRequest("doc-1", 9, _img()))))
    t.start()
    t.join(timeout=0.5)
    assert t.is_alive()
    gated.close(drain_timeout=0)
    t.join(timeout=10)
    assert not t.is_alive()
    with pytest.raises(EngineDeadError):
        box[0].result(timeout=1)


def test_lower_priority_runs_first(gated: Gated) -> None:
    gated.max_in_flight = 10
    gated.submit(PageRequest("doc-1", 0, _img(), priority=0))
    assert gated.first_running.wait(10)  # page 0 occupies the only worker
    futs = [gated.submit(PageRequest("doc-1", i, _img(), priority=p)) for i, p in [(1, 200), (2, 5), (3, 1)]]
    gated.gate.set()
    for f in futs:
        f.result(timeout=10)
    assert gated.started == [0, 3, 2, 1]


# ----------------------------------------------------------------------------- start-up errors


def test_missing_language_is_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tessdata = tmp_path / "tessdata"
    tessdata.mkdir()
    for name in ("eng", "osd"):
        os.symlink(f"/usr/share/tesseract-ocr/5/tessdata/{name}.traineddata", tessdata / f"{name}.traineddata")
    monkeypatch.setenv("TESSDATA_PREFIX", str(tessdata))
    eng = TesseractEngine(EngineCfg(tesseract=TesseractCfg(languages=["en", "de", "ja"])))
    with pytest.raises(FatalError) as ei:
        eng.start()
    assert ei.value.exit_code == ExitCode.ENGINE
    msg = str(ei.value)
    assert "deu.traineddata" in msg and "jpn.traineddata" in msg and str(tessdata) in msg
    assert "eng.traineddata" not in msg
    # With only the installed language it starts.
    ok = TesseractEngine(EngineCfg(tesseract=TesseractCfg(languages=["en"], threads=1)))
    ok.start()
    ok.close()


def test_missing_tessdata_folder_is_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TESSDATA_PREFIX", str(tmp_path / "nowhere"))
    with pytest.raises(FatalError, match="nowhere") as ei:
        TesseractEngine(EngineCfg()).start()
    assert ei.value.exit_code == ExitCode.ENGINE


# ----------------------------------------------------------------------------- pure helpers


def test_choose_languages() -> None:
    all11 = ["zh", "en", "ja", "fr", "de", "es", "it", "nl", "pt", "sv", "da"]
    assert choose_languages(all11, "Han") == ["chi_sim", "chi_tra", "jpn"]
    assert choose_languages(all11, "Japanese") == ["jpn", "chi_sim", "chi_tra"]
    assert choose_languages(["zh", "en"], "Japanese") == ["chi_sim", "chi_tra"]
    assert choose_languages(["ja", "en"], "Han") == ["jpn"]
    latin = choose_languages(all11, "Latin")
    assert latin[0] == "eng" and "chi_sim" not in latin and "jpn" not in latin and len(latin) >= 1
    assert choose_languages(["de", "fr"], "Latin")[0] == "deu"
    assert choose_languages(["de", "fr"], "") == choose_languages(["de", "fr"], "Latin")
    assert choose_languages(["zh"], "") == ["chi_sim", "chi_tra"]
    assert choose_languages(all11, "Latin", known="sv") == ["swe"]  # Swedish alone (tessplan.OWN_MODEL_ONLY)
    assert choose_languages(["sv", "da"], "Latin", known="sv") == ["swe"]
    assert choose_languages(all11, "Han", known="sv") == ["chi_sim", "chi_tra", "jpn"]


def test_tidy_text() -> None:
    raw = "感 谢 您 的 订 购 。\nLine two  \n\n\n\nNext para 2024 年\f"
    assert tidy_text(raw) == "感谢您的订购。\nLine two\n\nNext para 2024 年"


def test_start_api_is_reused_by_the_first_worker(tmp_path: Path) -> None:
    """start() loads an English API to check the install; the first worker thread reads with
    it instead of loading the model again (one load less per process: ``once`` pays it per
    document, bench/cpu_profile_2026-12-03.md), and the page reads as before."""
    before = tessapi.loads()
    eng = TesseractEngine(EngineCfg(tesseract=TesseractCfg(threads=1, languages=["en"])))
    eng.start()
    try:
        assert tessapi.loads() == before + 1
        res = eng.submit(PageRequest("doc-spare", 0, page(tmp_path, "en"))).result(timeout=120)
        assert len(found(docgen.SAMPLE_WORDS["en"], res.text)) >= 4, res.text
        assert res.meta["languages"] == ["eng"]
        assert tessapi.loads() == before + 1, "the worker loaded the English model again"
    finally:
        eng.close()
    assert eng._spare is None


def test_unused_start_api_is_ended_on_close() -> None:
    """An engine closed before its workers took start()'s API ends it (no model left loaded)."""
    ended: list[bool] = []

    class Fake:
        def end(self) -> None:
            ended.append(True)

    eng = TesseractEngine(EngineCfg(tesseract=TesseractCfg(threads=1, languages=["en"])))
    eng._spare = Fake()  # type: ignore[assignment]  # as start() leaves it before a worker runs
    eng.close()
    assert ended == [True] and eng._spare is None


def test_pages_of_one_document_read_together_probe_its_language_once(engine: TesseractEngine, tmp_path: Path) -> None:
    """Two pages of one document read at the same time (2 threads): one probes the document's
    language, the other waits for that decision instead of probing a band of its own (issue 32,
    bench/cpu_profile_2026-12-03.md "Savings, round two")."""
    sv = page(tmp_path, "sv")
    futs = [engine.submit(PageRequest("doc-sv-together", i, sv, priority=i)) for i in range(2)]
    res = [f.result(timeout=240) for f in futs]
    assert sum("probe" in r.meta for r in res) == 1, [r.meta for r in res]
    assert all(r.meta["languages"] == ["swe"] for r in res), [r.meta for r in res]  # own model alone (OWN_MODEL_ONLY)
    assert all("first_pass" not in r.meta for r in res)

