"""A table continued over pages or under a broken rule is one table, its header kept, no row
repeated; tables beside each other with headers of their own stay two; a table found twice over
one region is written once (issue 32)."""

from __future__ import annotations

from daemon.document.model import Table
from daemon.document.parse import parse_document
from daemon.pages.tablecheck import overlapping


def _html(rows: list[list[str]], header: bool = True) -> str:
    body = "".join("<tr>" + "".join(f"<{'th' if header and r == 0 else 'td'}>{c}</{'th' if header and r == 0 else 'td'}>"
                                    for c in row) + "</tr>" for r, row in enumerate(rows))
    return f"<table>{body}</table>"


HEAD = ["Datum", "Wochentag", "Stunden"]
DAYS = [[f"{d:02d}.03.2026", w, h] for d, w, h in
        [(2, "Montag", "8,25"), (3, "Dienstag", "8,00"), (4, "Mittwoch", "8,00"), (5, "Donnerstag", "8,25")]]


def _tables(pages: list[str]) -> list[tuple[int, int, Table]]:
    return parse_document(pages, markdown=True).tables()


def test_a_table_continued_on_the_next_page_with_its_header_again_is_one_table() -> None:
    got = _tables([f"# Stunden\n\n{_html([HEAD, *DAYS[:2]])}", f"{_html([HEAD, *DAYS[2:]])}\n\nSumme"])
    assert [(p, n) for p, n, _ in got] == [(1, 1)]
    assert got[0][2].expanded() == [HEAD, *DAYS] and got[0][2].header_rows == 1


def test_a_table_split_on_one_page_is_joined_only_with_its_header_again() -> None:
    got = _tables([f"{_html([HEAD, *DAYS[:2]])}\n\n{_html([HEAD, *DAYS[2:]])}"])
    assert len(got) == 1 and got[0][2].expanded() == [HEAD, *DAYS]
    # without: two blocks of one list set side by side look the same in the model (two tables)
    got = _tables([f"{_html([HEAD, *DAYS[:2]])}\n\n{_html(DAYS[2:])}"])
    assert len(got) == 2
    # on the next page, a headerless piece of body rows continues it
    got = _tables([_html([HEAD, *DAYS[:2]]), _html(DAYS[2:])])
    assert len(got) == 1 and got[0][2].expanded() == [HEAD, *DAYS]


def test_tables_with_headers_of_their_own_stay_apart() -> None:
    other = [["Name", "Ort", "Anzahl"], ["Anna", "Köln", "2"], ["Ben", "Bonn", "3"]]
    got = _tables([f"{_html([HEAD, *DAYS])}\n\n{_html(other)}"])
    assert [t.expanded() for _, _, t in got] == [[HEAD, *DAYS], other]
    got = _tables([f"{_html([HEAD, *DAYS])}\n\nDazwischen ein Absatz.\n\n{_html(DAYS)}"])
    assert len(got) == 2  # text between them: two tables


def test_a_table_found_twice_is_kept_once() -> None:
    whole, tail, beside = (0, 0, 100, 320), (0, 40, 100, 320), (120, 0, 200, 100)
    assert overlapping([whole, tail, beside]) == [1]
