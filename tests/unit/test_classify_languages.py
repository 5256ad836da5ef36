"""Issue 15 items 4 and 5 in ``daemon.language`` and ``classify``: language scored on clean text,
Chinese variant from the page, keywords of the document's own language, tables that are tables.
Runs against the shipped rules.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.config import load_config
from daemon.language import chinese_variant, clean_text, detect_language
from daemon.understand.classify import classify, detect_table, keyword_languages

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cfg():  # type: ignore[no-untyped-def]
    return load_config(ROOT / "rules.yaml")


def test_french_with_ocr_junk_is_french() -> None:
    # A short French note whose scan margins OCRed as specks: "a", "o", "e", "os", "ao", "do"
    # are Portuguese function words; on the raw text the detector said pt.
    text = "Merci pour votre message.\na o e ao os do da o a e\nã o a | e do os as o a e ao\n"
    assert detect_language(text)[0] == "fr"
    assert "ao" not in clean_text(text).split()


def test_clean_text_keeps_table_labels_and_drops_mixed_tokens() -> None:
    text = "Datum  Text  Belopp\n2024-06-03  Hyra Riksbyggen  -8 940,00\nl1ne C0de |ist\n"
    words = clean_text(text).split()
    assert "Riksbyggen" in words and "Belopp" in words
    assert not {"l1ne", "C0de", "|ist", "-8"} & set(words)


def test_chinese_variant_from_the_page() -> None:
    assert chinese_variant("这是一个关于学习的问题，为了发展经济。") == "simplified"
    assert chinese_variant("這是一個關於學習的問題，為了發展經濟。") == "traditional"
    assert chinese_variant("中文") is None  # no variant-only characters


def test_swedish_receipt_words_do_not_fire_english(cfg) -> None:  # type: ignore[no-untyped-def]
    # English "till" (a cash register) is the Swedish preposition "to": it fired in every
    # Swedish text. "firma" (Spanish: signature) is German "Firma" (company).
    sv = ("Hej Anna,\n\nTack för ditt brev. Jag skriver till dig angående mötet på fredag. "
          "Vi ses klockan tio på kontoret.\n\nMed vänliga hälsningar\nErik")
    c = classify(sv, cfg=cfg, filename="brev.pdf", pages=1, markdown=False)
    assert c.language == "sv"
    assert not any(f.startswith("kw:en:") for fired in c.fired.values() for f in fired), c.fired
    assert c.doctype == "letter"
    de = ("Sehr geehrte Damen und Herren,\n\nunsere Firma zieht zum 1. März um. Bitte senden Sie "
          "Post ab dann an die neue Adresse.\n\nMit freundlichen Grüßen\nMüller GmbH")
    c = classify(de, cfg=cfg, filename="brief.pdf", pages=1, markdown=False)
    assert not any(f.startswith("kw:es:") for fired in c.fired.values() for f in fired), c.fired


def test_english_counts_as_second_language_only_with_english_text() -> None:
    sv = "Jag skriver till dig om mötet. Vi ses på fredag och det blir bra för alla."
    assert keyword_languages(sv, "sv") == frozenset({"sv"})
    bilingual = sv + "\nPlease note that the invoice for the order of May is due on the first of the month and we will send it to you."
    assert keyword_languages(bilingual, "sv") == frozenset({"sv", "en"})
    assert keyword_languages("whatever", "unknown") is None


def test_table_of_contents_is_not_a_table() -> None:
    toc = "\n".join(
        [
            "Inhaltsverzeichnis",
            "1 Einführung in GNU/Linux . . . . . . . . . . . . . 1",
            "1.1 Grundlagen für Einsteiger . . . . . . . . . . . 1",
            "1.1.1 Root-Konto . . . . . . . . . . . . . . . . . 1",
            "1.1.2 Root-Shell-Eingabeaufforderung . . . . . . . 2",
            "1.2 Dateisystem-artiges Denken 13",
            "1.3 Midnight Commander (MC) 21",
            "1.4 Die grundlegende Unix-artige Arbeitsumgebung 25",
            "1.5 Der einfache Shell-Befehl 30",
        ]
    )
    assert not detect_table(toc, markdown=False)
    items = "\n".join(
        [
            "Pos  Artikel            Menge  Preis   Betrag",
            "1    Schrauben M4       100    0,05    5,00",
            "2    Muttern M4         100    0,04    4,00",
            "3    Scheiben M4        200    0,01    2,00",
            "4    Dübel 6 mm         50     0,10    5,00",
        ]
    )
    assert detect_table(items, markdown=False)


def test_stray_kana_do_not_make_chinese_japanese() -> None:
    from daemon.language import looks_chinese

    zh = "商品编码 数量 商品名称 商品基本条码 向称华联粉条 鸡边腿 单价 金额 合计 供应商 采购订单 日期 备注"
    assert looks_chinese(zh + " ー つ の")  # a few kana that jpn made of table rules
    ja_prose = "本日はお忙しいところ、ご来店いただきまして誠にありがとうございました。またのお越しをお待ちしております。"
    assert not looks_chinese(ja_prose)
    ja_table = "請求書 株式会社山田商事 御中 品名 数量 単価 金額 消費税 合計 支払期限 振込先 銀行 支店 普通 口座"
    assert not looks_chinese(ja_table)  # kanji-heavy, but Japanese-only words
