"""Unit tests of daemon.understand.route: every match key, every action field, templates and sanitising."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from daemon.config import Config, parse_config_text
from daemon.config.templates import expand_template, sanitize_field
from daemon.models import Classification
from daemon.understand.route import RouteExplain, choose_route, match_route

WHEN = datetime(2024, 3, 7, 12, 0)
SRC = Path("/srv/in/scans/Rechnung 42.PDF")


def cls(**kw: object) -> Classification:
    base: dict[str, object] = {"language": "de", "language_confidence": 0.9, "doctype": "invoice"}
    base.update(kw)
    return Classification(**base)  # type: ignore[arg-type]


def config(routes_yaml: str) -> Config:
    return parse_config_text(
        "inboxes: [{path: /srv/in/scans, name: scans}, {path: /srv/in/mail, name: mail}]\n"
        "doctypes: {invoice: {keywords: {de: {Rechnung: 3}}}, paper: {keywords: {en: {abstract: 3}}}}\n"
        + routes_yaml
    )


def only_route(match_yaml: str) -> Config:
    return config(f"routes:\n  - name: r\n    match: {match_yaml}\n")


def explain(cfg: Config, c: Classification | None = None, *, inbox: str = "scans", pages: int = 1,
            path: Path = SRC) -> RouteExplain:
    return match_route(cfg.routes[0], path=path, inbox=inbox, cls=c or cls(), pages=pages)


@pytest.mark.parametrize(
    ("match", "kwargs", "matched", "reason"),
    [
        ("{inbox: scans}", {}, True, ""),
        ("{inbox: [mail]}", {}, False, "inbox 'scans' not in [mail]"),
        ("{filename: '*.pdf'}", {}, True, ""),  # case-insensitive
        ("{filename: ['rechnung*', '*.tif']}", {}, True, ""),
        ("{filename: '*.tif'}", {}, False, "filename 'Rechnung 42.PDF' matches none of [*.tif]"),
        ("{filename: 'scans'}", {}, False, "filename 'Rechnung 42.PDF' matches none of [scans]"),  # name, not folder
        ("{language: de}", {}, True, ""),
        ("{language: [fr, en]}", {}, False, "language 'de' not in [fr, en]"),
        ("{language: unknown}", {"c": cls(language="unknown")}, True, ""),
        ("{language: unknown}", {}, False, "language 'de' not in [unknown]"),
        ("{doctype: [invoice, paper]}", {}, True, ""),
        ("{doctype: other}", {}, False, "doctype 'invoice' not in [other]"),
        ("{doctype: other}", {"c": cls(doctype="other")}, True, ""),
        ("{pages: {min: 2}}", {"pages": 2}, True, ""),
        ("{pages: {min: 2}}", {"pages": 1}, False, "pages 1 outside (min 2)"),
        ("{pages: {min: 2, max: 5}}", {"pages": 6}, False, "pages 6 outside (min 2, max 5)"),
        ("{pages: {max: 5}}", {"pages": 5}, True, ""),
        ("{has_table: true}", {"c": cls(has_table=True)}, True, ""),
        ("{has_table: true}", {}, False, "has_table is false, route wants true"),
        ("{has_table: false}", {}, True, ""),
        ("{has_math: true}", {"c": cls(has_math=True)}, True, ""),
        ("{has_math: false}", {"c": cls(has_math=True)}, False, "has_math is true, route wants false"),
    ],
)
def test_each_match_key(match: str, kwargs: dict[str, object], matched: bool, reason: str) -> None:
    row = explain(only_route(match), **kwargs)  # type: ignore[arg-type]
    assert row == RouteExplain("r", matched, reason)


def test_first_failing_condition_is_reported() -> None:
    cfg = only_route("{inbox: mail, language: fr, doctype: paper}")
    assert explain(cfg).reason.startswith("inbox ")
    assert explain(cfg, inbox="mail").reason.startswith("language ")
    assert explain(cfg, cls(language="fr"), inbox="mail").reason.startswith("doctype ")
    assert explain(cfg, cls(language="fr", doctype="paper"), inbox="mail").matched


def test_empty_match_is_catch_all() -> None:
    cfg = config("routes:\n  - name: all\n")
    assert explain(cfg, cls(language="unknown", doctype="other")).matched


ROUTES = """
routes:
  - name: papers
    match: {doctype: paper}
    formats: [md, json]
    destination: /out/papers/{language}
  - name: bills
    match: {doctype: invoice, inbox: scans}
    formats: [txt, json]
    destination: /out/{inbox}/{doctype}/{yyyy}/{mm}/{dd}
    source: archive
    archive_to: /archive/{doctype}/{yyyy}/{stem}
  - name: junk
    match: {language: unknown}
    source: delete
    destination: /out/unknown
"""


def test_first_match_wins_and_every_route_is_explained() -> None:
    cfg = config(ROUTES)
    decision, rows = choose_route(cfg, path=SRC, inbox="scans", cls=cls(), pages=1, when=WHEN)
    assert decision.name == "bills"
    assert [r.name for r in rows] == ["papers", "bills", "junk", "default"]  # built-in default appended
    assert [r.matched for r in rows] == [False, True, False, True]
    assert decision.formats == ["txt", "json"]
    assert decision.destination == Path("/out/scans/invoice/2024/03/07")
    assert decision.source_action == "archive"
    assert decision.archive_dir == Path("/archive/invoice/2024/Rechnung 42")


def test_no_match_falls_to_builtin_default_beside_source() -> None:
    cfg = config(ROUTES)
    decision, _ = choose_route(cfg, path=SRC, inbox="mail", cls=cls(), pages=1, when=WHEN)
    assert decision.name == "default"
    assert decision.destination == SRC.parent
    assert decision.formats == ["txt", "md", "json"]
    assert decision.source_action == "keep"
    assert decision.archive_dir is None


def test_delete_action_and_language_unknown() -> None:
    cfg = config(ROUTES)
    decision, _ = choose_route(cfg, path=SRC, inbox="mail", cls=cls(language="unknown"), pages=1, when=WHEN)
    assert (decision.name, decision.source_action, decision.destination) == ("junk", "delete", Path("/out/unknown"))


def test_papers_destination_uses_language() -> None:
    cfg = config(ROUTES)
    decision, _ = choose_route(cfg, path=SRC, inbox="scans", cls=cls(doctype="paper", language="ja"),
                               pages=9, when=WHEN)
    assert decision.name == "papers"
    assert decision.destination == Path("/out/papers/ja")
    assert decision.formats == ["md", "json"]


def test_configured_catch_all_replaces_builtin_default() -> None:
    cfg = config("routes:\n  - name: everything\n    destination: beside\n    formats: [md]\n")
    decision, rows = choose_route(cfg, path=SRC, inbox="scans", cls=cls(), pages=1, when=WHEN)
    assert [r.name for r in rows] == ["everything"]
    assert decision.destination == SRC.parent
    assert decision.formats == ["md"]


def test_relative_templates_resolve_against_config_folder(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "inboxes: [{path: in}]\nroutes:\n  - name: r\n    destination: out/{doctype}\n"
        "    source: archive\n    archive_to: arch/{yyyy}\n"
    )
    from daemon.config import load_config

    cfg = load_config(rules)
    decision, _ = choose_route(cfg, path=tmp_path / "in" / "a.png", inbox="in", cls=cls(), pages=1, when=WHEN)
    assert decision.destination == tmp_path.resolve() / "out" / "invoice"
    assert decision.archive_dir == tmp_path.resolve() / "arch" / "2024"


# ----------------------------------------------------------------------------- templates


def test_expand_template_fills_all_fields() -> None:
    fields = {"inbox": "scans", "language": "zh", "doctype": "receipt", "yyyy": "2024", "mm": "01",
              "dd": "09", "stem": "scan 7"}
    got = expand_template("/o/{inbox}/{language}/{doctype}/{yyyy}-{mm}-{dd}/{stem}", fields)
    assert got == Path("/o/scans/zh/receipt/2024-01-09/scan 7")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("../../etc", "____etc"),
        ("a/b\\c", "a_b_c"),
        ("..", "_"),
        (".", "_"),
        ("-rf", "_rf"),
        (".hidden", "_hidden"),
        ("nul\x00byte\n", "nulbyte"),
        ("", "_"),
        ("normal name", "normal name"),
        ("日本語の請求書", "日本語の請求書"),
    ],
)
def test_sanitize_field(value: str, expected: str) -> None:
    got = sanitize_field(value)
    assert got == expected
    assert "/" not in got and ".." not in got and "\x00" not in got and not got.startswith("-")


def test_hostile_stem_cannot_escape_destination() -> None:
    cfg = config("routes:\n  - name: r\n    destination: /out/{stem}\n")
    evil = Path("/srv/in/scans/..")  # a stem of '..' (Path('..').stem == '..')
    decision, _ = choose_route(cfg, path=evil, inbox="scans", cls=cls(), pages=1, when=WHEN)
    assert decision.destination.parent == Path("/out")
    assert ".." not in decision.destination.parts
    odd = Path("/srv/in/scans/-x..y.pdf")
    decision, _ = choose_route(cfg, path=odd, inbox="scans", cls=cls(), pages=1, when=WHEN)
    assert decision.destination == Path("/out/_x_y")


def test_unknown_placeholder_raises() -> None:
    with pytest.raises(KeyError):
        expand_template("/o/{user}", {})


def test_csv_bom_follows_the_route() -> None:
    cfg = parse_config_text(
        "inboxes: [{path: /in}]\nroutes:\n  - {name: excel, match: {filename: '*.xls.pdf'}, formats: [csv], csv_bom: true}\n  - {name: rest}\n"
    )
    when = datetime(2026, 1, 2)
    d1, _ = choose_route(cfg, path=Path("/in/report.xls.pdf"), inbox="in", cls=cls(), pages=1, when=when)
    d2, _ = choose_route(cfg, path=Path("/in/other.pdf"), inbox="in", cls=cls(), pages=1, when=when)
    assert (d1.name, d1.csv_bom) == ("excel", True)
    assert (d2.name, d2.csv_bom) == ("rest", False)
