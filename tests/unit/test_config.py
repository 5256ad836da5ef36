"""rules.yaml validation and ``ocr-daemon check-config``."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import run_cli

from daemon.config import config_warnings, load_config, parse_config_text
from daemon.errors import ConfigError

BAD = """\
daemon:
  workers: -1
  bogus_key: 1
engine:
  kind: tesseract
inboxes:
  - path: inbox
    watch: sometimes
    schedule: "99 * * * *"
doctypes:
  invoice:
    keywords:
      en: {invoice: 3}
    regex:
      - pattern: "([unclosed"
routes:
  - name: a
    match:
      language: [en, xx]
      doctype: invoic
    destination: "/out/{colour}"
  - name: b
    source: archive
"""


def test_every_error_reported_at_once_with_line_and_key_path(tmp_path: Path) -> None:
    p = tmp_path / "rules.yaml"
    p.write_text(BAD)
    with pytest.raises(ConfigError) as ei:
        load_config(p)
    problems = ei.value.problems
    text = "\n".join(problems)
    # One message per mistake, each with FILE:LINE key.path
    assert f"{p}:2 daemon.workers:" in text
    assert f"{p}:3 daemon.bogus_key: unknown key" in text
    assert f"{p}:8 inboxes[0].watch: 'sometimes'" in text
    assert f"{p}:9 inboxes[0].schedule: not a valid cron expression" in text
    assert f"{p}:15 doctypes.invoice.regex[0].pattern: invalid regular expression" in text
    assert f"{p}:19 routes[0].match.language[1]: 'xx'" in text
    assert "routes[0].destination: unknown placeholder(s) ['colour']" in text
    assert "routes[1]: source: archive needs archive_to" in text
    # the route's unknown doctype too, although other sections have errors (issue 17, defect 4)
    assert f"{p}:20 routes[0].match.doctype: 'invoic' is not one of ['invoice', 'other']" in text
    assert len(problems) == 9, text


def test_unknown_doctype_and_inbox_references_are_errors(tmp_path: Path) -> None:
    text = """\
inboxes:
  - path: in
doctypes:
  invoice: {keywords: {en: {invoice: 3}}}
routes:
  - name: r
    match:
      doctype: [invoice, recipe]
      inbox: elsewhere
"""
    with pytest.raises(ConfigError) as ei:
        parse_config_text(text, "r.yaml")
    msgs = ei.value.problems
    assert any(m.startswith("r.yaml:8 routes[0].match.doctype: 'recipe' is not one of") for m in msgs), msgs
    assert any("routes[0].match.inbox: 'elsewhere' is not one of ['in']" in m for m in msgs), msgs


def test_check_config_reports_a_misspelt_doctype_together_with_other_errors(tmp_path: Path) -> None:
    # issue 17, defect 4: the unknown doctype was reported only once the file had no other error
    p = tmp_path / "rules.yaml"
    p.write_text(
        "daemon: {workers: many}\n"
        "inboxes:\n  - {path: in, name: mail}\n  - {path: in2, name: mail}\n"
        "routes:\n"
        "  - name: bank\n    match: {doctype: bank_statment, inbox: post}\n    formats: [txt, docx]\n"
        "  - name: bank\n"
    )
    r = run_cli("check-config", "--config", str(p))
    assert r.returncode == 2, r.stderr
    assert f"{p}:1 daemon.workers:" in r.stderr
    assert f"{p}:8 routes[0].formats[1]: 'docx'" in r.stderr
    assert f"{p}:7 routes[0].match.doctype: 'bank_statment' is not one of" in r.stderr
    assert "'bank_statement'" in r.stderr  # the shipped doctypes are the default: the right name is listed
    assert f"{p}:7 routes[0].match.inbox: 'post' is not one of ['mail']" in r.stderr
    assert f"{p}:4 inboxes[1]: inbox names must be unique; repeated: ['mail']" in r.stderr
    assert f"{p}:9 routes[1]: route names must be unique; repeated: ['bank']" in r.stderr
    assert "6 error(s)" in r.stderr, r.stderr


def test_defining_the_fallback_doctype_is_an_error_with_its_line() -> None:
    with pytest.raises(ConfigError) as ei:
        parse_config_text("inboxes: [{path: in}]\ndoctypes:\n  other: {keywords: {en: {misc: 3}}}\n", "r.yaml")
    assert ei.value.problems == ["r.yaml:3 doctypes.other: doctype 'other' is the built-in fallback and cannot be defined"]


def test_no_doctypes_section_gets_the_shipped_doctypes_and_an_empty_one_warns(tmp_path: Path) -> None:
    # issue 15, item 5: a config without doctypes: used to get none and file everything as "other"
    shipped = load_config(Path(__file__).resolve().parents[2] / "rules.yaml")
    cfg = parse_config_text("inboxes: [{path: in}]\nroutes:\n  - {name: b, match: {doctype: bank_statement}}\n  - {name: all}\n")
    assert cfg.doctypes == shipped.doctypes
    assert not any("doctypes" in w for w in config_warnings(cfg))
    p = tmp_path / "rules.yaml"
    p.write_text("inboxes: [{path: in}]\ndoctypes: {}\nroutes:\n  - {name: o, match: {doctype: other}}\n  - {name: all}\n")
    assert load_config(p).doctypes == {}
    r = run_cli("check-config", "--config", str(p))
    assert r.returncode == 0, r.stderr
    assert "warning:" in r.stderr and "doctypes: none is defined, but routes[0] match on doctype" in r.stderr


def test_yaml_syntax_python_tags_and_alias_bombs_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"r.yaml:3 YAML syntax error: .*started at line 2"):
        parse_config_text("inboxes:\n  - path: [unclosed\n", "r.yaml")
    with pytest.raises(ConfigError, match="python/object"):
        parse_config_text("inboxes: !!python/object/apply:os.system ['true']\n", "r.yaml")
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for i in range(1, 9):
        prev = chr(ord("a") + i - 1)
        cur = chr(ord("a") + i)
        bomb += f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 10) + "]\n"
    with pytest.raises(ConfigError, match="aliases expand"):
        parse_config_text(bomb, "r.yaml")
    big = tmp_path / "big.yaml"
    big.write_text("inboxes:\n  - path: x\n" + "#" * (2 << 20))
    with pytest.raises(ConfigError, match="larger than|more than"):
        load_config(big)


def test_relative_paths_resolve_against_the_config_folder_and_defaults(tmp_path: Path) -> None:
    p = tmp_path / "rules.yaml"
    p.write_text("daemon: {state_dir: st}\ninboxes:\n  - path: in\nroutes:\n  - name: r\n    match: {language: en}\n    destination: 'out/{doctype}'\n")
    cfg = load_config(p)
    assert cfg.daemon.state_dir == tmp_path / "st"
    assert cfg.inboxes[0].path == tmp_path / "in"
    assert cfg.inboxes[0].name == "in"
    assert cfg.routes[0].destination == str(tmp_path / "out/{doctype}")
    assert cfg.engine.sampling.temperature == 0.2 and cfg.engine.sampling.top_p == 0.9
    assert cfg.engine.render_longest_edge == 1540
    # No catch-all route: the built-in default is appended and a warning says so.
    assert cfg.route_list()[-1].name == "default"
    assert any("no catch-all route" in w for w in config_warnings(cfg))


def test_destination_inside_an_inbox_warns(tmp_path: Path) -> None:
    p = tmp_path / "rules.yaml"
    p.write_text(
        "inboxes:\n  - {path: in, recursive: true}\nroutes:\n"
        "  - {name: r, destination: 'in/done/{doctype}', source: archive, archive_to: 'in/archived'}\n"
    )
    warns = config_warnings(load_config(p))
    assert any("routes[0].destination" in w and "inside watched inbox 'in'" in w for w in warns), warns
    assert any("routes[0].archive_to" in w for w in warns), warns


def test_check_config_cli_exit_codes(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD)
    r = run_cli("check-config", "--config", str(bad))
    assert r.returncode == 2
    assert f"{bad}:3 daemon.bogus_key: unknown key" in r.stderr
    assert "9 error(s)" in r.stderr
    good = tmp_path / "good.yaml"
    good.write_text("inboxes:\n  - path: in\nroutes:\n  - name: all\n")
    r = run_cli("check-config", "--config", str(good))
    assert r.returncode == 0, r.stderr
    assert "OK (1 inbox(es)" in r.stdout
    r = run_cli("check-config", "--config", str(tmp_path / "missing.yaml"))
    assert r.returncode == 2 and "no such file" in r.stderr


def test_shipped_rules_yaml_is_valid() -> None:
    shipped = Path(__file__).resolve().parents[2] / "rules.yaml"
    cfg = load_config(shipped)
    assert {"invoice", "receipt", "contract", "bank_statement", "scientific_paper", "letter"} <= set(cfg.doctypes)
    assert cfg.routes and cfg.routes[-1].match.is_catch_all()
