"""daemon.quality: the page confidence figure, the review record and the output checks' pure parts."""

from __future__ import annotations

import pickle

from pagerecords import ocr_page

from daemon.models import PageLayout, TextBox, TextLine
from daemon.pagerecord import LayerBlocks, PageResult
from daemon.quality import Review
from daemon.quality.checks import check_tables, check_txt, found_in_order, tokens
from daemon.quality.confidence import is_low, page_confidence, wordlike
from daemon.quality.run import LOW_CONFIDENCE, assess_pages, with_quality

CLEAN_EN = (
    "Thank you for finishing the extension to our kitchen last month. I am writing to ask whether you "
    "could come back to look at a small crack that has appeared above the new window, 12 April 2024."
)
#: What Tesseract made of a page of vertical Japanese read across (issue 32), and of heavy noise.
JUNK_CJK = "磊 宮中 和伸 1 じ 時 些 | 選 自 骨 施 ~~ p め 繼 JJ@ 旨 | 盡 革 らき 概 只 記"
JUNK_LATIN = "i1l |' ~~ ,. _=- rnnl Wwvv. 'l, ;: | il1 :! %% .,' -_- Ii| mrnm ~-- ;."


def _page(text: str, *, conf: float | None = None, engine: str = "tesseract", flags: tuple[str, ...] = (),
          source: str = "ocr", meta: dict | None = None, layout: PageLayout | None = None, index: int = 0) -> PageResult:
    m = dict(meta or {})
    if conf is not None:
        m["word_confidence"] = conf
    if source == "text_layer":
        return PageResult(index=index, engine=engine, content=LayerBlocks((), text), flags=flags, meta=m)
    return ocr_page(index, text, engine, layout=layout, flags=flags, meta=m)


def test_wordlike_counts_words_numbers_and_cjk_and_not_symbol_soup() -> None:
    assert wordlike(CLEAN_EN)[0] == 1.0
    assert wordlike("Rechnung Nr. 2024-117 vom 12.03.2024: Gesamtbetrag 1.510,50 € — fällig.")[0] == 1.0
    assert wordlike("ご注文ありがとうございます。合計金額を三十日以内にお支払いください。")[0] == 1.0
    share, n = wordlike(JUNK_LATIN)
    assert n > 10 and share < 0.3
    # mixed case inside a word, tripled letters, no vowel in a long token: not words
    assert wordlike("hEllo")[0] == 0.0
    assert wordlike("aaaah")[0] == 0.0
    assert wordlike("bcdfgh")[0] == 0.0
    assert wordlike("") == (1.0, 0)


def test_clean_page_scores_high_and_junk_low() -> None:
    clean = page_confidence(_page(CLEAN_EN, conf=93.0))
    junk = page_confidence(_page(JUNK_LATIN, conf=61.0))
    assert clean is not None and junk is not None
    assert clean.value > 90 and clean.wordlike == 1.0
    assert junk.value < 20  # Tesseract's middling confidence times a share of words near zero
    cjk = page_confidence(_page(JUNK_CJK, conf=22.3), "ja")
    assert cjk is not None and cjk.value < 25  # the characters are CJK, but Tesseract is unsure of them


def test_confidence_falls_back_to_the_plain_mean_and_skips_text_layer_and_blank_pages() -> None:
    older = page_confidence(_page(CLEAN_EN, meta={"confidence": 40.0}))
    assert older is not None and older.engine == 40.0
    assert page_confidence(_page(CLEAN_EN, source="text_layer", engine="text_layer")) is None
    assert page_confidence(_page("", conf=None, meta={"ink_ppm": 3})) is None  # a blank page is not a bad read
    inked = page_confidence(_page("", conf=None, meta={"ink_ppm": 40000}))  # ink, no word read
    assert inked is not None and inked.value == 0.0


def test_vlm_pages_are_judged_by_their_words_and_the_loop_guard() -> None:
    good = page_confidence(_page(CLEAN_EN, engine="vllm"))
    looped = page_confidence(_page(CLEAN_EN, engine="vllm", flags=("repetition",)))
    soup = page_confidence(_page(JUNK_LATIN, engine="vllm"))
    assert good is not None and looped is not None and soup is not None
    assert good.value == 100.0 and looped.value == 50.0 and soup.value < 30


def test_is_low_and_threshold_zero_never_flags() -> None:
    c = page_confidence(_page(JUNK_LATIN, conf=61.0))
    assert is_low(c, 50) and not is_low(c, 0) and not is_low(None, 50)


def test_review_reasons_read_as_short_strings_once_each_and_pickle() -> None:
    r = Review()
    assert not r and r.to_json() == {"review": False, "review_reasons": []}
    r.add("low_confidence", page=2, detail="conf 19")
    r.add("low_confidence", page=2, detail="conf 19")
    r.add("classification unsure", detail="invoice 3.2")
    assert r.needed and r.to_json() == {
        "review": True, "review_reasons": ["page 2: low_confidence (conf 19)", "classification unsure (invoice 3.2)"],
    }
    assert [str(x) for x in r.on_page(2)] == ["page 2: low_confidence (conf 19)"]
    assert pickle.loads(pickle.dumps(r)) == r


def test_assess_pages_flags_the_junk_page_and_says_why() -> None:
    pages = [_page(CLEAN_EN, conf=93.0, index=0), _page(JUNK_LATIN, conf=61.0, index=1)]
    review = Review()
    quality = assess_pages(pages, "en", 50.0, review)
    assert not quality[0].low and quality[1].low
    assert [str(x) for x in review.reasons] == [f"page 2: low_confidence (conf {quality[1].confidence['value']:.0f})"]
    out = with_quality(pages, quality)
    assert out[0].flags == () and out[1].flags == (LOW_CONFIDENCE,)
    side = out[1].sidecar()
    assert side["flags"] == [LOW_CONFIDENCE] and side["confidence"]["value"] < 50


def test_tokens_and_order() -> None:
    assert tokens("Hello, World! 請求書") == ["hello", "world", "請", "求", "書"]
    assert found_in_order(["a", "b", "c", "d"], ["a", "b", "c", "d"]) == 1.0
    assert found_in_order(["a", "b", "c", "d"], ["d", "c", "b", "a"]) == 0.25  # lines read backwards
    assert found_in_order(["a"], []) == 0.0 and found_in_order([], ["a"]) == 1.0


def test_txt_check_fails_a_page_missing_from_the_txt() -> None:
    texts = [CLEAN_EN, "Second page with its own words entirely."]
    good = check_txt(("\f\n".join(texts)).encode(), texts, False)
    assert [c.ok for c in good] == [True, True]
    bad = check_txt(CLEAN_EN.encode(), texts, False)
    assert [c.ok for c in bad] == [True, False] and bad[1].score == 0.0


def test_table_check_catches_repeated_rows() -> None:
    from daemon.document.model import Cell, Page, Table
    from daemon.document.model import Document as Parsed

    words = ["Tag", "Beginn", "Ende", "Montag", "8:00", "16:00", "Dienstag", "Ruhetag"]
    layout = PageLayout((100, 100), [TextLine((0, 0, 10, 10), [TextBox(w, (0, 0, 1, 1)) for w in words])], True)
    page = _page(" ".join(words), conf=90.0, layout=layout)

    def table(rows: list[list[str]]) -> Table:
        cells = [Cell(t, r, c) for r, row in enumerate(rows) for c, t in enumerate(row)]
        return Table(n_rows=len(rows), n_cols=3, cells=cells)

    right = table([["Tag", "Beginn", "Ende"], ["Montag", "8:00", "16:00"], ["Dienstag", "Ruhetag", ""]])
    repeated = table([["Tag", "Beginn", "Ende"], ["Montag", "8:00", "16:00"]] + [["Dienstag", "Ruhetag", ""]] * 6)
    lost = table([["Tag", "Beginn", "Ende"], ["M0ntaq", "", ""]])  # read as junk, rows lost
    ok = check_tables(Parsed([Page(1, [right])]), [page])
    bad = check_tables(Parsed([Page(1, [repeated])]), [page])
    short = check_tables(Parsed([Page(1, [lost])]), [page])
    assert [(c.check, c.ok) for c in ok] == [("page_words", True), ("table_words", True)]
    assert [(c.check, c.ok) for c in bad] == [("page_words", True), ("table_words", False)]
    assert "table 1" in bad[1].detail
    assert [(c.check, c.ok) for c in short][0] == ("page_words", False) and short[0].score == 3 / 8


def test_match_review_routes_the_documents_that_need_review() -> None:
    from datetime import datetime
    from pathlib import Path

    from daemon.config import parse_config_text
    from daemon.models import Classification
    from daemon.understand.route import choose_route

    cfg = parse_config_text(
        "inboxes: [{path: /srv/in, name: in}]\n"
        "routes:\n"
        "  - {name: needs-review, match: {review: true}, destination: /srv/review}\n"
        "  - {name: rest, destination: /srv/out}\n"
    )
    c = Classification(language="en", language_confidence=0.9, doctype="other")
    src, when = Path("/srv/in/a.png"), datetime(2024, 1, 1)
    flagged, rows = choose_route(cfg, path=src, inbox="in", cls=c, pages=1, when=when, review=True)
    plain, rows2 = choose_route(cfg, path=src, inbox="in", cls=c, pages=1, when=when)
    assert flagged.name == "needs-review" and flagged.destination == Path("/srv/review")
    assert plain.name == "rest" and rows2[0].reason == "review is false, route wants true"
    assert cfg.quality.min_confidence > 0 and cfg.quality.check_outputs
