"""Unit tests of daemon.understand.classify and .language: language detection, features, doctype scoring, explain text."""

from __future__ import annotations

import pytest

from daemon.config import Config, parse_config_text
from daemon.language import detect_language, fold
from daemon.models import Classification
from daemon.understand.classify import classify, detect_math, detect_table, format_explain
from daemon.understand.route import RouteExplain

# ----------------------------------------------------------------------------- language

SENTENCES = {
    "en": "Please find enclosed the signed copy of the agreement and return one copy to our office.",
    "de": "Bitte senden Sie uns die unterschriebene Kopie des Vertrags bis Ende des Monats zurück.",
    "fr": "Veuillez trouver ci-joint la copie signée du contrat et nous en retourner un exemplaire.",
    "es": "Le enviamos adjunta la copia firmada del contrato y le rogamos que nos devuelva un ejemplar.",
    "it": "In allegato trovate la copia firmata del contratto, vi preghiamo di restituircene una.",
    "nl": "Hierbij ontvangt u de ondertekende kopie van het contract; wilt u er één aan ons terugsturen?",
    "pt": "Segue em anexo a cópia assinada do contrato e pedimos que nos devolva um exemplar.",
    "sv": "Bifogat finns den undertecknade kopian av avtalet, var vänlig och skicka tillbaka ett exemplar.",
    "da": "Vedlagt finder du den underskrevne kopi af aftalen, og vi beder dig sende et eksemplar retur.",
    "zh": "随函附上已签署的合同副本，请将其中一份寄回我们的办公室。",
    "ja": "署名済みの契約書の写しを同封いたしますので、一部を弊社までご返送ください。",
}


@pytest.mark.parametrize("lang", sorted(SENTENCES))
def test_detect_language_all_eleven(lang: str) -> None:
    got, conf = detect_language(SENTENCES[lang])
    assert got == lang
    assert 0.0 < conf <= 1.0


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        # short texts where Danish/Swedish/Norwegian-ish and Dutch/German n-grams overlap
        ("Tak for dit køb og velkommen igen", "da"),
        ("Tack för ditt köp och välkommen åter", "sv"),
        ("Bedankt voor uw aankoop en tot ziens", "nl"),
        ("Vielen Dank für Ihren Einkauf und bis bald", "de"),
        ("Vi har ikke modtaget din betaling endnu", "da"),
        ("Vi har inte fått din betalning ännu", "sv"),
        ("Wij hebben uw betaling nog niet ontvangen", "nl"),
        ("Wir haben Ihre Zahlung noch nicht erhalten", "de"),
        # OCR dropped the diacritics
        ("Tack for ditt kop, valkommen ater", "sv"),
        ("Tak for dit kob, velkommen igen", "da"),
        ("Med vanliga halsningar och tack for hjalpen", "sv"),
        ("Med venlig hilsen og tak for hjaelpen", "da"),
    ],
)
def test_detect_language_short_nordic_dutch_german(text: str, lang: str) -> None:
    assert detect_language(text)[0] == lang


def test_kanji_heavy_japanese_with_little_kana_is_ja() -> None:
    # Mostly kanji (a company address + amounts) with only a few kana particles.
    text = "東京都千代田区丸の内一丁目 株式会社東都商事 代表取締役 山田太郎 請求金額 合計 消費税 振込期限 令和六年"
    assert detect_language(text)[0] == "ja"
    # The same without any kana, but with Japanese-only word forms (株式会社, 消費税, 振込).
    assert detect_language("東京都千代田区 株式会社東都商事 請求金額 消費税 振込期限")[0] == "ja"


def test_chinese_is_zh_simplified_and_traditional() -> None:
    assert detect_language("北京市海淀区中关村大街 发票 金额合计 人民币 税额")[0] == "zh"
    assert detect_language("台北市信義區 統一發票 總計金額 新臺幣 營業稅")[0] == "zh"


def test_chinese_with_spaces_between_characters_as_tesseract_writes_it() -> None:
    assert detect_language("增 值 税 普 通 发 票 价 税 合 计 开 票 日 期")[0] == "zh"


def test_one_stray_kana_does_not_make_chinese_japanese() -> None:
    assert detect_language("上海市浦东新区 增值税专用发票 价税合计 人民币 开票日期 ノ")[0] == "zh"


def test_chinese_page_with_english_labels_stays_chinese() -> None:
    text = "Invoice No. 0012 发票号码 开票日期 2024年3月1日 购买方 销售方 价税合计 Total"
    assert detect_language(text)[0] == "zh"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n\t ",
        "12.03.2024 4711 0815 99,95",
        "Hi",  # too little text
        "Добрый день, высылаем вам подписанный договор и счёт на оплату.",
        "안녕하세요. 계약서 사본을 보내드립니다. 확인 부탁드립니다.",
        "Καλημέρα, σας στέλνουμε το υπογεγραμμένο συμβόλαιο.",
    ],
)
def test_unknown_for_little_text_or_other_scripts(text: str) -> None:
    assert detect_language(text)[0] == "unknown"


def test_allowed_restricts_the_answer() -> None:
    assert detect_language(SENTENCES["da"], allowed=["da", "sv"])[0] == "da"
    assert detect_language(SENTENCES["de"], allowed=["en", "fr", "nl"])[0] in {"en", "fr", "nl"}
    assert detect_language(SENTENCES["zh"], allowed=["en", "de"]) == ("unknown", 0.0)


def test_confidence_lower_for_ambiguous_text() -> None:
    _, clear = detect_language(SENTENCES["de"] + " " + SENTENCES["de"])
    _, mixed = detect_language(SENTENCES["de"] + " " + SENTENCES["nl"])
    assert clear > mixed


# ----------------------------------------------------------------------------- features


def test_table_html_and_markdown() -> None:
    assert detect_table("text <TABLE><tr><td>1</td></tr></table>")
    assert detect_table("| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert detect_table("a | b\n:--- | ---:\n1 | 2")
    assert not detect_table("a | b is not a table\njust a pipe")


def test_table_plain_text_heuristics() -> None:
    columns = "Item      Qty     Price\nApples    2       1.00\nPears     3       2.50\n"
    assert detect_table(columns, markdown=False)
    rows = "\n".join(f"0{i}.05 Payment {i} 12,50 {100 + i},00" for i in range(1, 5))
    assert detect_table(rows, markdown=False)
    prose = "We met on 3 May.\nThe price was 12 euros.\nNothing else happened.\nThe end."
    assert not detect_table(prose, markdown=False)


@pytest.mark.parametrize(
    "text",
    ["the energy $E = mc^2$ holds", "$$\\int_0^1 x\\,dx$$", "where \\(a_i\\) is", "\\[ x \\]", "\\frac{1}{2}",
     "\\begin{equation} y \\end{equation}", "with $\\alpha$ fixed"],
)
def test_math_detected(text: str) -> None:
    assert detect_math(text)


@pytest.mark.parametrize("text", ["it costs $5 and $10", "Total: $ 12.00", "price in US$ 40", "plain text"])
def test_math_not_detected_in_prices(text: str) -> None:
    assert not detect_math(text)


def test_fold_is_case_and_diacritic_insensitive() -> None:
    assert fold("Fälligkeit") == fold("FALLIGKEIT")
    assert fold("Straße") == "strasse"
    assert fold("Næstved Søndergade") == "naestved sondergade"


# ----------------------------------------------------------------------------- doctype scoring

RULES = """
inboxes: [{path: /tmp/in}]
doctypes:
  invoice:
    threshold: 4
    keywords:
      de: {Rechnung: 3, Rechnungsnummer: 1.5}
      sv: {faktura: 3}
      da: {faktura: 2}
      zh: {发票: 3}
    regex:
      - {pattern: 'IBAN', weight: 1}
    features: {has_table: 0.5}
    filename: {"*rechnung*": 2}
  paper:
    threshold: 3
    keywords:
      en: {abstract: 2, "et al": 1}
    features: {has_math: 1.5, pages: {min: 4}, pages_weight: 1}
  memo:
    threshold: 2
    keywords:
      en: {memo: 2}
"""


@pytest.fixture()
def cfg() -> Config:
    return parse_config_text(RULES)


def _cls(text: str, cfg: Config, *, filename: str = "scan.pdf", pages: int = 1) -> Classification:
    return classify(text, cfg=cfg, filename=filename, pages=pages, markdown=False)


def test_keyword_counts_once_per_document(cfg: Config) -> None:
    once = _cls("Rechnung für Sie, bitte bezahlen.", cfg)
    many = _cls("Rechnung Rechnung Rechnung Rechnung, bitte bezahlen.", cfg)
    assert once.doctype_scores["invoice"] == many.doctype_scores["invoice"] == 3
    assert any("(x4)" in f for f in many.fired["invoice"])


def test_keyword_word_boundaries_case_and_diacritics(cfg: Config) -> None:
    # "Rechnungsnummer" must not count as "Rechnung" (word boundary) but as itself.
    c = _cls("RECHNUNGSNUMMER 17", cfg)
    assert c.doctype_scores["invoice"] == 1.5
    assert _cls("Abrechnungen folgen", cfg).doctype_scores["invoice"] == 0


def test_keyword_inside_a_longer_matched_keyword_does_not_count_again() -> None:
    cfg = parse_config_text(
        "inboxes: [{path: /tmp/in}]\n"
        "doctypes: {bank: {keywords: {ja: {普通預金: 2, 預金: 1.5}, en: {total due: 1.5, total: 0.5}}}}\n"
    )
    assert _cls("普通預金 1234567", cfg).doctype_scores["bank"] == 2
    assert _cls("普通預金 1234567 定期預金", cfg).doctype_scores["bank"] == 3.5  # 預金 also on its own
    assert _cls("Total due: 12.00", cfg).doctype_scores["bank"] == 1.5
    assert _cls("Total: 10.00 ... total due: 12.00", cfg).doctype_scores["bank"] == 2


def test_germanic_compounds_match_their_last_part_only() -> None:
    cfg = parse_config_text(
        "inboxes: [{path: /tmp/in}]\n"
        "doctypes: {c: {keywords: {de: {Vertrag: 2, Bon: 1}, sv: {avtal: 2}, en: {contract: 2}}}}\n"
    )
    assert _cls("Wartungsvertrag", cfg).doctype_scores["c"] == 2
    assert _cls("Uppdragsavtal", cfg).doctype_scores["c"] == 2
    assert _cls("Vertragslaufzeit", cfg).doctype_scores["c"] == 0  # first part: no
    assert _cls("subcontract", cfg).doctype_scores["c"] == 0  # English: whole words only
    assert _cls("Karbon", cfg).doctype_scores["c"] == 0  # too short to be a compound head


def test_same_keyword_in_two_languages_counts_once_with_best_weight(cfg: Config) -> None:
    c = _cls("Faktura nr 17", cfg)
    assert c.doctype_scores["invoice"] == 3


def test_cjk_keyword_matches_across_ocr_spaces(cfg: Config) -> None:
    c = _cls("增 值 税 普 通 发 票", cfg)
    assert c.doctype_scores["invoice"] == 3


def test_keywords_of_all_languages_are_checked(cfg: Config) -> None:
    # An English sentence mentioning a German keyword still scores it.
    c = _cls("Please pay the attached Rechnung by Friday, thank you very much.", cfg)
    assert c.language == "en"
    assert c.doctype_scores["invoice"] == 3


def test_regex_feature_filename_and_pages(cfg: Config) -> None:
    c = _cls("IBAN DE00 only", cfg, filename="Rechnung_März.PDF")
    assert c.doctype_scores["invoice"] == 3  # regex 1 + filename glob (case-insensitive) 2
    assert "filename:*rechnung* +2" in c.fired["invoice"]
    paper = classify("Abstract: the value $x^2$ grows", cfg=cfg, filename="p.pdf", pages=5, markdown=True)
    assert paper.has_math
    assert paper.doctype == "paper"
    assert paper.doctype_scores["paper"] == 2 + 1.5 + 1
    assert "feature:pages=5 +1" in paper.fired["paper"]


def test_below_threshold_is_other(cfg: Config) -> None:
    c = _cls("Nothing to see here, just some words in a sentence.", cfg)
    assert c.doctype == "other"
    assert set(c.doctype_scores) == {"invoice", "paper", "memo"}
    assert c.fired["invoice"] == []


def test_highest_score_among_those_over_threshold_wins(cfg: Config) -> None:
    c = _cls("Memo: Rechnung Rechnungsnummer 12, IBAN attached", cfg)
    assert c.doctype_scores["invoice"] == 5.5
    assert c.doctype_scores["memo"] == 2
    assert c.doctype == "invoice"
    # paper scores 3 (its threshold) and memo 2 (its threshold): the higher score wins
    c2 = _cls("memo with abstract and Smith et al here", cfg)
    assert c2.doctype == "paper"


def test_table_feature_sets_has_table(cfg: Config) -> None:
    c = classify("| a | b |\n|---|---|\n| 1 | 2 |\nRechnung", cfg=cfg, filename="x.pdf", pages=1, markdown=True)
    assert c.has_table
    assert c.doctype_scores["invoice"] == 3.5


# ----------------------------------------------------------------------------- explain


def test_format_explain_content(cfg: Config) -> None:
    c = _cls("Rechnung Nr. 12, IBAN DE00 1234, bitte überweisen Sie den Betrag bis Freitag.", cfg)
    rows = [
        RouteExplain("papers", False, "doctype 'invoice' not in [paper]"),
        RouteExplain("bills", True, ""),
        RouteExplain("default", True, ""),
    ]
    text = format_explain(c, rows)  # thresholds recorded by classify()
    assert f"language: de (confidence {c.language_confidence:.2f})" in text
    assert "doctype: invoice" in text
    assert "invoice  score 4 / threshold 4  <- chosen" in text
    assert "kw:de:Rechnung +3" in text
    assert "regex:/IBAN/ +1" in text
    assert "papers   no: doctype 'invoice' not in [paper]" in text
    assert "bills    MATCH (chosen)" in text
    assert "default  match (not reached" in text
    # Explicit thresholds override; without any, the scores are still shown.
    assert "invoice  score 4 / threshold 9" in format_explain(c, rows, {"invoice": 9})
    c.doctype_thresholds = {}
    assert "invoice  score 4  <- chosen" in format_explain(c, rows)


def test_markdown_markup_does_not_drown_a_short_cjk_text() -> None:
    """VLM output: a short Chinese text with a large HTML table of numbers. The table's tags are
    Latin letters; language must come from the words."""
    from daemon.config import Config, InboxCfg

    rows = "".join(f"<tr><td>{2000 + i}</td><td>{i * 17}</td><td>{i * 3.5}</td></tr>" for i in range(40))
    md = f"# 统计年报\n\n本表列出各年度的销售数量与平均价格。\n\n<table border=\"1\" class=\"dataframe\"><thead><tr><th>年份</th><th>数量</th><th>价格</th></tr></thead><tbody>{rows}</tbody></table>\n"
    cfg = Config(inboxes=[InboxCfg(path="/tmp/in")])
    cls = classify(md, cfg=cfg, filename="x.pdf", pages=1, markdown=True)
    assert cls.language == "zh", cls
    assert cls.has_table
