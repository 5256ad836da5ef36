"""daemon.engines.tessplan: which models read a page, from the probe's reads of its band.

The probe's Tesseract read is the one thing replaced here (``read_band`` answers with known text
and confidence per model set); the plan itself is the code under test."""

from __future__ import annotations

import docgen

from daemon.engines.tessplan import (
    CJK_UNDECIDED,
    band_variant,
    cjk_language,
    fits,
    models_for,
    plan_page,
    undecided_models,
)

ALL = ["zh", "en", "ja", "fr", "de", "es", "it", "nl", "pt", "sv", "da"]


class Band:
    """A probe band: what each model set reads on it (text, mean confidence); records the calls."""

    def __init__(self, latin: tuple[str, float], cjk: tuple[str, float] = ("", 0.0)) -> None:
        self.latin, self.cjk, self.calls = latin, cjk, []

    def __call__(self, models: list[str], share: float) -> tuple[str, float]:
        assert 0 < share < 0.5
        self.calls.append(models)
        return self.cjk if any(m in ("chi_sim", "chi_tra", "jpn") for m in models) else self.latin


def test_a_latin_page_is_probed_with_english_and_read_in_its_language() -> None:
    band = Band((docgen.SAMPLES["sv"] * 2, 88.0))
    plan = plan_page(ALL, "Latin", None, band)
    assert band.calls == [["eng"]]
    assert plan.models == ["swe"] and plan.language == "sv" and not plan.decide_after
    plan = plan_page(ALL, "Latin", None, Band((docgen.SAMPLES["en"] * 2, 90.0)))
    assert plan.models == ["eng"] and plan.language == "en"


def test_a_known_document_language_needs_no_probe() -> None:
    band = Band(("", 0.0))
    assert plan_page(ALL, "Latin", "de", band).models == ["deu", "eng"] and band.calls == []
    assert plan_page(ALL, "", "zh-Hant", band).models == ["chi_tra"] and band.calls == []
    # a Han page in a German document is decided for itself
    band = Band(("", 0.0), (docgen.SAMPLES["zh"] * 3, 90.0))
    plan = plan_page(ALL, "Han", "de", band)
    assert band.calls == [["chi_sim", "chi_tra", "jpn"]] and plan.models == ["chi_sim"] and plan.language == "zh-Hans"


def test_an_unsure_english_probe_is_probed_with_cjk_models() -> None:
    zh = docgen.SAMPLES["zh"] * 3
    band = Band(("l1 ,; r- ii", 41.0), (zh, 88.0))
    plan = plan_page(ALL, "Latin", None, band)
    assert band.calls == [["eng"], ["chi_sim", "chi_tra", "jpn"]]
    assert plan.models == ["chi_sim"] and plan.language == "zh-Hans"
    # ... and a Latin page that only reads badly stays Latin
    band = Band((docgen.SAMPLES["de"] * 2, 62.0), ("", 20.0))
    plan = plan_page(ALL, "Latin", None, band)
    assert plan.models == ["deu", "eng"] and plan.language == "de"


def test_japanese_and_traditional_chinese_get_their_own_model() -> None:
    assert plan_page(ALL, "Japanese", None, Band(("", 0), (docgen.SAMPLES["ja"] * 3, 90.0))).models == ["jpn"]
    trad = "這是一份繁體中文的發票，請於三十天內付款。謝謝您的訂購，我們會盡快處理並寄送貨品給您。" * 2
    assert cjk_language(trad, ALL) == "zh-Hant"
    assert plan_page(ALL, "Han", None, Band(("", 0), (trad, 90.0))).models == ["chi_tra"]


def test_an_undecided_probe_leaves_the_decision_to_the_page_text() -> None:
    plan = plan_page(ALL, "Latin", None, Band(("21.0 6 160 110 3.90", 80.0)))
    assert plan.models == ["eng"] and plan.language is None and plan.decide_after


def test_no_probe_when_there_is_nothing_to_choose() -> None:
    band = Band(("", 0.0))
    assert plan_page(["de"], "Latin", None, band).models == ["deu"]
    assert plan_page(["ja", "en"], "Han", None, band).models == ["jpn"]
    assert band.calls == []


def test_models_and_fit() -> None:
    assert models_for("sv", ALL) == ["swe"] and models_for("de", ALL) == ["deu", "eng"] and models_for("ja", ALL) == ["jpn"]
    assert fits("de", "Latin") and fits("de", "") and not fits("de", "Han") and not fits("zh-Hans", "Latin")


def test_a_page_of_numbers_is_not_made_cjk_by_a_better_cjk_read() -> None:
    """mtcars (a table of numbers): English 56, the CJK models 67, and no CJK character read."""
    numbers = "21.0 6 160.0 110 3.90 2.620 16.46 0 1 4 4\n" * 6
    band = Band((numbers, 56.0), (numbers, 67.0))
    plan = plan_page(ALL, "Latin", None, band)
    assert len(band.calls) == 2 and plan.models == ["eng"] and plan.decide_after


def test_a_latin_page_of_a_document_with_an_undecided_cjk_page_is_probed_with_cjk_models() -> None:
    # the English band reads well (72: above the CJK retry's 70), the CJK band better, as Japanese
    ja = docgen.SAMPLES["ja"] * 3
    band = Band((docgen.SAMPLES["en"] * 2, 72.0), (ja, 91.0))
    plan = plan_page(ALL, "Latin", CJK_UNDECIDED, band)
    assert band.calls == [["eng"], ["chi_sim", "chi_tra", "jpn"]]
    assert plan.models == ["jpn"] and plan.language == "ja"
    # ... not in a document without one
    band = Band((docgen.SAMPLES["en"] * 2, 72.0), (ja, 91.0))
    assert plan_page(ALL, "Latin", None, band).models == ["eng"] and band.calls == [["eng"]]
    # a Latin page of such a document that the CJK models read no better stays Latin
    band = Band((docgen.SAMPLES["de"] * 2, 90.0), ("", 40.0))
    plan = plan_page(ALL, "Latin", CJK_UNDECIDED, band)
    assert plan.models == ["deu", "eng"] and plan.language == "de"


def test_a_chinese_band_among_code_keeps_the_chinese_model_beside_english() -> None:
    """A Chinese page with code lines (OSD: Latin): English reads the band at 66, the CJK models
    at 64 with 40 Han characters among many more Latin letters (the code): not a CJK "win",
    but the Han characters are read, so chi_sim stays, with English for the code (issue 32)."""
    zh = "在执行这些命令之前请确认您拥有管理员权限并且系统已经连接到网络如果命令执行失败系统会显示错误信息"
    code = "$ sudo apt-get install tesseract-ocr\nfor f in *.png; do tesseract $f out; done\n" * 3
    band = Band((code + "ARE IE tt", 66.0), (zh + "\n" + code, 64.0))
    plan = plan_page(ALL, "Latin", None, band)
    assert plan.models == ["chi_sim", "eng"] and plan.language == "zh-Hans"
    # a Latin band read with the CJK models that names no CJK language stays Latin
    band = Band((docgen.SAMPLES["de"] * 2, 62.0), ("Rechnung 一 Nummer", 64.0))
    assert plan_page(ALL, "Latin", None, band).models == ["deu", "eng"]


def test_a_short_cjk_band_that_reads_far_better_with_cjk_models_is_read_with_them() -> None:
    """A Japanese receipt OSD could not place: its 12 % band holds 10 kana and 5 Han characters,
    too few to tell Japanese from Chinese, read at 91 with the CJK models against 45 with
    English (tests/integration/test_rules_yaml.py's receipt). It was read with English alone."""
    band = Band(("ART APATIE IA ATI -L-1\nBag 03-1234-5678", 45.0),
                ("おにぎり 鮭      \\160\n\n緑茶 500ml        \\140\nサンドイッチ         \\330\n小計             \\630", 91.0))
    plan = plan_page(ALL, "", None, band)
    assert plan.models == ["chi_sim", "chi_tra", "jpn"] and plan.language is None


def test_a_short_chinese_band_drops_the_other_variants_model() -> None:
    cands = ["chi_sim", "chi_tra", "jpn"]
    # what the gate's simplified table band read with the three models (6 Han characters)
    plan = plan_page(ALL, "Han", None, Band(("", 0), ("项目  数量  金额\n", 93.0)))
    assert plan.models == ["chi_sim", "jpn"] and plan.language is None
    assert undecided_models("項目 數量 金額 號碼", cands) == ["chi_tra", "jpn"]
    # kana, a tie, or too few variant characters: every model, as before
    assert undecided_models("数量 金額 ご注文", cands) == cands
    assert undecided_models("数量 金額", cands) == cands
    assert undecided_models("目 量 合计", cands) == cands
    assert undecided_models("项目 数量 金额", ["jpn"]) == ["jpn"]


def test_a_mixed_band_is_traditional_only_with_a_clear_majority() -> None:
    # Both Chinese models read either variant's glyphs, and a band read with chi_sim+chi_tra+jpn
    # takes each line from either: a simplified manual page's band came out 9 simplified /
    # 11 traditional forms and the page was read with chi_tra alone (issue 32). A 3:2 majority
    # is needed for traditional; below it simplified, the common case, wins.
    simp, trad = "数学符号切换字体给出", "數學符號切換字體給出"  # 6 variant-only characters each
    line = "一部分命令需要宏包的支持。"  # none
    mixed = (simp + line) * 3 + (trad + line) * 4  # 18 simplified / 24 traditional forms
    assert band_variant(mixed) == "simplified"
    assert cjk_language(mixed, ALL) == "zh-Hans"
    assert undecided_models(mixed, ["chi_sim", "chi_tra", "jpn"]) == ["chi_sim", "jpn"]
    clear = (simp + line) + (trad + line) * 2  # 6 / 12: a 2:1 majority
    assert band_variant(clear) == "traditional" and cjk_language(clear, ALL) == "zh-Hant"
    # the tests' traditional invoice, its 12 % band read with the three models: 7 / 12 (1.71)
    assert band_variant(simp + "数" + line + (trad * 2) + line) == "traditional"
    assert band_variant("数學") is None  # too few to tell
