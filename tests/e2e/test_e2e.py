"""End to end with the shipped rules.yaml: ``ocr-daemon run`` (Tesseract engine) on a temp inbox,
real multi-language documents (PDFs and images; Latin and CJK scripts; several doctypes) dropped
while it runs, routed outputs and sidecars checked."""

from __future__ import annotations

import json
import time
from pathlib import Path

import corpus
import docgen
import yaml
from conftest import wait_for

REPO = Path(__file__).resolve().parents[2]

# (file name, maker, language, doctype) -- the texts come from tests/data/corpus.yaml (tests/corpus.py)
DOCS = [
    ("rechnung.png", "png", "de", "invoice"),
    ("facture.pdf", "pdf-scan", "fr", "invoice"),
    ("contrato.pdf", "pdf-text", "es", "contract"),
    ("收据.jpg", "jpeg", "zh", "receipt"),
    ("手紙.png", "png", "ja", "letter"),
    ("paper.pdf", "pdf-2pages", "en", "scientific_paper"),
    ("kontoudtog.tiff", "tiff", "da", "bank_statement"),
    ("brief.webp", "webp", "nl", "letter"),
]


def shipped_rules_for(tmp: Path) -> Path:
    """The shipped rules.yaml with its /srv and /var paths moved into ``tmp``."""
    text = (REPO / "rules.yaml").read_text(encoding="utf-8")
    text = text.replace("/srv/ocr", str(tmp / "srv")).replace("/var/lib/ocr-daemon", str(tmp / "state"))
    data = yaml.safe_load(text)
    data["engine"]["kind"] = "tesseract"
    data["daemon"].update({"rescan_interval": 5, "workers": 2, "render_workers": 1})
    data["daemon"]["http"]["listen"] = "127.0.0.1:0"  # the shipped endpoint, on a free port (tests run side by side)
    for ib in data["inboxes"]:
        ib["stability_delay"] = 0.5
    out = tmp / "rules.yaml"
    out.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return out


def make(path: Path, kind: str, lang: str, text: str) -> None:
    cjk_lang = lang if lang in ("zh", "ja") else None
    if kind == "png":
        docgen.make_image(path, text, lang=cjk_lang, font_size=26)
    elif kind == "jpeg":
        docgen.make_image(path, text, fmt="jpeg", lang=cjk_lang, font_size=26)
    elif kind == "webp":
        docgen.make_image(path, text, fmt="webp", font_size=26)
    elif kind == "tiff":
        docgen.make_multipage_tiff(path, [text])
    elif kind == "pdf-scan":
        docgen.make_pdf(path, [text], scanned=True, lang=cjk_lang)
    elif kind == "pdf-text":
        docgen.make_pdf(path, [text], lang=cjk_lang)
    elif kind == "pdf-2pages":
        half = len(text) // 2
        cut = text.rfind("\n", 0, half) + 1 or half
        docgen.make_pdf(path, [text[:cut], text[cut:]])
    else:
        raise ValueError(kind)


def test_end_to_end_multilanguage_with_shipped_rules(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    cfg = shipped_rules_for(tmp_path)
    inbox = tmp_path / "srv" / "inbox"
    d = start_daemon(cfg)
    d.wait_ready()
    staging = tmp_path / "staging"
    staging.mkdir()
    for name, kind, lang, doctype in DOCS:
        src = staging / name
        make(src, kind, lang, corpus.DOCTYPE_TEXTS[doctype][lang])
        src.rename(inbox / name)  # atomic drop, as `mv` does
    rows_done = lambda: [p for p in (tmp_path / "srv").rglob("*.json")]  # noqa: E731
    wait_for(lambda: len(rows_done()) >= len(DOCS), 300, "all sidecars")
    time.sleep(1)
    assert d.stop() == 0
    by_name = {}
    for p in rows_done():
        side = json.loads(p.read_text(encoding="utf-8"))
        by_name[Path(side["source"]).name] = (p, side)
    year = time.strftime("%Y")
    srv = tmp_path / "srv"
    expected_folder = {
        "invoice": srv / "archive" / "invoice" / year,
        "receipt": srv / "archive" / "receipt" / year,
        "contract": srv / "archive" / "contract" / year,
        "bank_statement": srv / "archive" / "bank_statement" / year / time.strftime("%m"),
        "scientific_paper": srv / "archive" / "scientific_paper" / "en",
        "letter": inbox,
    }
    wrong = []
    for name, _kind, lang, doctype in DOCS:
        assert name in by_name, f"{name} has no sidecar; got {sorted(by_name)}"
        path, side = by_name[name]
        if (side["language"], side["doctype"]) != (lang, doctype):
            wrong.append((name, side["language"], side["doctype"], side["doctype_scores"]))
            continue
        assert path.parent == expected_folder[doctype], (name, path)
        assert side["engine"] == "tesseract"
        assert all(Path(o).exists() for o in side["outputs"]), side["outputs"]
        assert side["sha256"] and side["pages"]
    assert not wrong, f"misclassified: {wrong}"
    # sources: archived for bookkeeping doctypes, kept for letters and papers
    assert (srv / "archive" / "invoice" / year / "originals" / "rechnung.png").exists()
    assert not (inbox / "rechnung.png").exists()
    assert (inbox / "手紙.png").exists() and (inbox / "手紙.txt").exists()
    assert len(by_name["paper.pdf"][1]["pages"]) == 2
    # the paper route writes md + json only
    paper_outs = sorted(Path(o).suffix for o in by_name["paper.pdf"][1]["outputs"])
    assert paper_outs == [".json", ".md"]
    # CJK text survived OCR into the outputs
    zh_txt = next(Path(o) for o in by_name["收据.jpg"][1]["outputs"] if o.endswith(".txt"))
    assert sum("\u4e00" <= c <= "\u9fff" for c in zh_txt.read_text(encoding="utf-8")) > 20
