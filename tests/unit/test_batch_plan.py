"""Unit tests of the pure parts of scanner batches: how pages become parts
(``daemon.intake.batch.plan_parts``), the inbox keys' validation, and ``{subdir}`` /
``match.subdir`` in routes (``daemon.understand.route``)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from daemon.config import Config, parse_config_text
from daemon.config.templates import expand_template, subdir_of
from daemon.errors import ConfigError
from daemon.intake.batch import Part, archive_dir, plan_parts
from daemon.intake.pagescan import PageScan
from daemon.models import Classification
from daemon.understand.route import choose_route

WHEN = datetime(2026, 12, 2, 9, 30)


def pages(spec: str) -> list[PageScan]:
    """``"d b S b d"``: d = a page with content, b = blank, S = separator."""
    return [PageScan(i, c == "S", c == "b", 0.0) for i, c in enumerate(spec.split())]


@pytest.mark.parametrize(
    ("spec", "parts"),
    [
        # a duplex stack: three documents, blank backs, two separator sheets with blank backs
        ("d b S b d b d b S b d b", [
            Part((0,), ((1, "blank"),)),
            Part((4, 6), ((2, "separator"), (3, "blank"), (5, "blank"), (7, "blank"))),
            Part((10,), ((8, "separator"), (9, "blank"), (11, "blank"))),
        ]),
        ("d d d", None),  # nothing to leave out: the original goes on as it is
        ("b b S b", None),  # nothing left: the original goes on as it is
        ("d b d", [Part((0, 2), ((1, "blank"),))]),  # blank pages only: one cleaned part
        ("S d d S", [Part((1, 2), ((0, "separator"), (3, "separator")))]),  # leading/trailing sheets
        # two sheets in a row (and a blank range) give their pages to the next part with pages
        ("d S S b d", [Part((0,), ()), Part((4,), ((1, "separator"), (2, "separator"), (3, "blank")))]),
    ],
)
def test_plan_parts(spec: str, parts: list[Part] | None) -> None:
    assert plan_parts(pages(spec)) == parts


def test_every_page_is_in_exactly_one_part() -> None:
    spec = "b S d b d S S b d b b d S b"
    parts = plan_parts(pages(spec))
    assert parts is not None
    seen = sorted([i for p in parts for i in p.pages] + [i for p in parts for i, _ in p.dropped])
    assert seen == list(range(len(spec.split())))


def config(inbox: str, routes: str = "") -> Config:
    return parse_config_text(f"inboxes:\n  - {inbox}\n{routes}", base_dir=Path("/srv/cfg"))


def test_inbox_batch_keys_validate() -> None:
    cfg = config("{path: /srv/in, separator: 'PATCH T', drop_blank_pages: true, batch_archive: 'orig/{yyyy}/{subdir}'}")
    ib = cfg.inboxes[0]
    assert ib.splits() and ib.separator == "PATCH T" and ib.batch_archive == "/srv/cfg/orig/{yyyy}/{subdir}"
    assert not config("{path: /srv/in}").inboxes[0].splits()
    with pytest.raises(ConfigError, match="doctype"):  # not known before the file is read
        config("{path: /srv/in, separator: X, batch_archive: '/o/{doctype}'}")
    with pytest.raises(ConfigError, match="separator"):
        config("{path: /srv/in, separator: ''}")


def test_archive_dir_default_and_template() -> None:
    cfg = config("{path: /srv/in, name: scans, separator: X, recursive: true}")
    ib = cfg.inboxes[0]
    assert archive_dir(ib, Path("/srv/in/scan.pdf"), WHEN) == Path("/srv/in/batch-originals")
    assert archive_dir(ib, Path("/srv/in/acme/2026/scan.pdf"), WHEN) == Path("/srv/in/batch-originals/acme/2026")
    ib.batch_archive = "/arch/{inbox}/{subdir}/{yyyy}-{mm}/{stem}"
    assert archive_dir(ib, Path("/srv/in/acme/scan.pdf"), WHEN) == Path("/arch/scans/acme/2026-12/scan")


def test_subdir_of() -> None:
    assert subdir_of(Path("/srv/in/a/b/x.pdf"), Path("/srv/in")) == "a/b"
    assert subdir_of(Path("/srv/in/x.pdf"), Path("/srv/in")) == ""
    assert subdir_of(Path("/elsewhere/x.pdf"), Path("/srv/in")) == ""
    assert subdir_of(Path("/srv/in/x.pdf"), None) == ""


def test_subdir_template_keeps_levels_and_stays_inside() -> None:
    assert expand_template("/out/{subdir}/{stem}", {"subdir": "acme/2026", "stem": "x"}) == Path("/out/acme/2026/x")
    assert expand_template("/out/{subdir}/{stem}", {"subdir": "", "stem": "x"}) == Path("/out/x")
    # a folder name can never climb out: each level is sanitised like any other value
    assert expand_template("/out/{subdir}", {"subdir": "../../etc"}) == Path("/out/_/_/etc")
    assert expand_template("/out/{subdir}", {"subdir": ".hidden/-rf"}) == Path("/out/_hidden/_rf")


ROUTES = """
routes:
  - {name: acme, match: {subdir: ['acme', 'acme/*']}, destination: '/out/{subdir}/{doctype}'}
  - {name: root, match: {subdir: ''}, destination: '/out/root'}
  - {name: rest, destination: '/out/other/{subdir}'}
"""


@pytest.mark.parametrize(
    ("path", "route", "dest"),
    [
        ("/srv/in/acme/r.pdf", "acme", "/out/acme/invoice"),
        ("/srv/in/ACME/2026/r.pdf", "acme", "/out/ACME/2026/invoice"),  # globs are case-insensitive
        ("/srv/in/r.pdf", "root", "/out/root"),
        ("/srv/in/beta/r.pdf", "rest", "/out/other/beta"),
    ],
)
def test_match_subdir_and_template(path: str, route: str, dest: str) -> None:
    cfg = config("{path: /srv/in, name: in, recursive: true}", ROUTES)
    c = Classification(language="de", language_confidence=0.9, doctype="invoice")
    decision, rows = choose_route(cfg, path=Path(path), inbox="in", cls=c, pages=1, when=WHEN)
    assert (decision.name, decision.destination) == (route, Path(dest))
    if route != "acme":
        assert "subdir" in rows[0].reason and "matches none of" in rows[0].reason
