"""The shipped rules.yaml: it loads, shows every key with its default and a comment, and
classifies the corpus. (The generated reference and the JSON Schema: test_config_reference.py.)"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from daemon import config as C  # noqa: E402
from daemon.config import LANGUAGES, config_warnings, load_config, reference  # noqa: E402
from daemon.understand.classify import classify  # noqa: E402
from daemon.understand.route import choose_route  # noqa: E402

SHIPPED = REPO / "rules.yaml"
DOCTYPES = ("invoice", "receipt", "contract", "bank_statement", "scientific_paper", "letter")

# ----------------------------------------------------------------------------- tests


def _flatten(data: Any, prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(data, dict):
        for k, v in data.items():
            out[f"{prefix}.{k}" if prefix else str(k)] = v
            if isinstance(v, dict):
                out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


def test_shipped_file_lists_every_setting_with_its_default() -> None:
    """daemon/engine/inbox keys all appear in rules.yaml, with the models' default value (except
    the inbox's path and name, which are the production values); the keys come from the same walk
    of the models as docs/configuration.md (daemon.config.reference)."""
    raw = yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))
    flat = _flatten({"daemon": raw["daemon"], "engine": raw["engine"]}, "")
    flat.update(_flatten(raw["inboxes"][0], "inboxes[]"))
    keys = [k for k in reference.config_keys() if k.path.split(".")[0] in ("daemon", "engine", "inboxes[]")]
    assert len(keys) > 60
    for key in keys:
        assert key.path in flat, f"rules.yaml does not show {key.path}"
        if key.section or key.path in ("inboxes[].path", "inboxes[].name"):
            continue
        default = key.field.get_default(call_default_factory=True)
        shown = flat[key.path]
        assert shown == (str(default) if isinstance(default, Path) else default), (
            f"{key.path}: rules.yaml has {shown!r}, the model {default!r}"
        )


def test_shipped_rules_load_with_production_paths() -> None:
    cfg = load_config(SHIPPED)
    assert cfg.daemon.state_dir == Path("/var/lib/ocr-daemon")
    assert cfg.daemon.failed_dir == Path("/srv/ocr/failed")
    assert [i.path for i in cfg.inboxes] == [Path("/srv/ocr/inbox")]
    assert all(r.destination == "beside" or r.destination.startswith("/srv/ocr/archive/") for r in cfg.routes)
    assert all(r.archive_to is None or r.archive_to.startswith("/srv/ocr/archive/") for r in cfg.routes)
    # no loops into the inbox; the only warning-free outcome we ship
    assert config_warnings(cfg) == []
    assert cfg.routes[-1].match.is_catch_all()
    assert cfg.routes[-1].destination == "beside" and cfg.routes[-1].source == "keep"


def test_shipped_doctypes_cover_all_languages() -> None:
    cfg = load_config(SHIPPED)
    assert tuple(cfg.doctypes) == DOCTYPES
    for name, dt in cfg.doctypes.items():
        assert set(dt.keywords) == set(LANGUAGES), f"{name}: keywords for {sorted(set(LANGUAGES) - set(dt.keywords))} missing"
        for lang, kws in dt.keywords.items():
            assert len(kws) >= 5, f"{name}.{lang}: only {len(kws)} keywords"


def test_packaged_default_doctypes_are_the_shipped_rules_doctypes() -> None:
    """One source of truth: rules.yaml shows users the doctypes a file without ``doctypes:`` gets
    (daemon/config/doctypes.yaml); edit both together."""
    packaged = yaml.safe_load((REPO / "daemon/config/doctypes.yaml").read_text(encoding="utf-8"))
    assert set(packaged) == {"doctypes"}
    assert packaged["doctypes"] == yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))["doctypes"]
    assert C.shipped_doctypes() == packaged["doctypes"]
    no_section = C.parse_config_text("inboxes: [{path: in}]\n")
    assert no_section.doctypes == load_config(SHIPPED).doctypes


def test_every_shipped_key_has_a_comment() -> None:
    """Every ``key: value`` line of the daemon/engine/inboxes sections carries a comment
    (block headers such as ``vllm:`` are exempt)."""
    section = None
    uncommented = []
    for line in SHIPPED.read_text(encoding="utf-8").splitlines():
        if re.match(r"^[a-z]", line):
            section = line.split(":")[0]
            continue
        if section not in ("daemon", "engine", "inboxes") or not line.strip() or line.lstrip().startswith("#"):
            continue
        key, _, value = line.strip().lstrip("- ").partition(":")
        if value.strip() and "#" not in value:
            uncommented.append(line)
    assert not uncommented, uncommented


# the tuning corpus, through the shipped rules.yaml
from corpus import CORPUS  # noqa: E402


@pytest.fixture(scope="module")
def shipped() -> C.Config:
    return load_config(SHIPPED)


@pytest.mark.parametrize(("lang", "doctype", "text"), CORPUS, ids=[f"{d}-{lang}" for lang, d, _ in CORPUS])
def test_shipped_rules_classify_corpus(shipped: C.Config, lang: str, doctype: str, text: str) -> None:
    c = classify(text, cfg=shipped, filename="scan.pdf", pages=1, markdown=False)
    assert (c.language, c.doctype) == (lang, doctype), (c.doctype_scores, c.fired.get(doctype))


def test_shipped_routes_send_corpus_where_documented(shipped: C.Config) -> None:
    from datetime import datetime

    expected = {
        "invoice": ("invoices-and-receipts", "/srv/ocr/archive/invoice/2024", "archive"),
        "receipt": ("invoices-and-receipts", "/srv/ocr/archive/receipt/2024", "archive"),
        "bank_statement": ("bank-statements", "/srv/ocr/archive/bank_statement/2024/05", "archive"),
        "contract": ("contracts", "/srv/ocr/archive/contract/2024", "archive"),
        "scientific_paper": ("scientific-papers", "/srv/ocr/archive/scientific_paper/de", "keep"),
        "letter": ("everything-else", "/srv/ocr/inbox", "keep"),
        "other": ("everything-else", "/srv/ocr/inbox", "keep"),
    }
    for lang, doctype, text in CORPUS:
        if lang != "de":
            continue
        c = classify(text, cfg=shipped, filename="scan.pdf", pages=1, markdown=False)
        decision, _ = choose_route(shipped, path=Path("/srv/ocr/inbox/scan.pdf"), inbox="inbox", cls=c, pages=1,
                                   when=datetime(2024, 5, 2))
        assert (decision.name, str(decision.destination), decision.source_action) == expected[doctype]


@pytest.mark.parametrize(("lang", "doctype"), [("de", "invoice"), ("ja", "receipt"), ("da", "letter")])
def test_shipped_rules_classify_real_tesseract_output(shipped: C.Config, lang: str, doctype: str) -> None:
    """A corpus document drawn as a page image and read by the real Tesseract engine."""
    from corpus import DOCTYPE_TEXTS
    from docgen import text_image

    from daemon.engines.base import PageRequest
    from daemon.engines.tesseract import TesseractEngine

    img = text_image(DOCTYPE_TEXTS[doctype][lang], font_size=28, lang=lang if lang in ("zh", "ja") else None)
    eng = TesseractEngine(C.EngineCfg(kind="tesseract", tesseract=C.TesseractCfg(threads=1)))
    eng.start()
    try:
        text = eng.submit(PageRequest("t", 0, img)).result(timeout=120).text
    finally:
        eng.close()
    c = classify(text, cfg=shipped, filename="scan.png", pages=1, markdown=False)
    assert (c.language, c.doctype) == (lang, doctype), (text[:300], c.doctype_scores)
