"""Scanner batches on real files: pages told apart (``daemon.intake.pagescan``: zxing-cpp, the
blank measure) and files split (``daemon.intake.batch.Splitter`` with a real render pool,
pikepdf, img2pdf), on scans generated as a feeder makes them (tests/scangen.py)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import docgen
import pikepdf
import pymupdf
import pytest
import scangen

from daemon.config import Config, parse_config_text
from daemon.intake import pagescan
from daemon.intake.batch import Splitter, part_info
from daemon.pages.renderpool import RenderPool

DOCS = [[docgen.SAMPLES["en"], docgen.SAMPLES["en"][:60]], [docgen.SAMPLES["de"]], [docgen.SAMPLES["fr"]]]


@pytest.fixture(scope="module")
def batch_pdf(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    path = tmp_path_factory.mktemp("batch") / "scan.pdf"
    return path, scangen.duplex_batch(path, DOCS, ["PATCH T", "PATCH T"], seed=7)


@pytest.fixture(scope="module")
def pool() -> Iterator[RenderPool]:
    p = RenderPool(1)
    yield p
    p.close()


def cfg_for(tmp: Path, inbox: str) -> Config:
    (tmp / "inbox").mkdir(exist_ok=True)
    return parse_config_text(f"daemon: {{state_dir: state, failed_dir: failed}}\ninboxes:\n  - {inbox}\n", base_dir=tmp)


def test_pages_told_apart(tmp_path: Path) -> None:
    opts = pagescan.scan_options(100, 200_000_000)
    front = scangen.text_page(docgen.SAMPLES["en"])
    kind = scangen.Scan(bleed=0.12, holes="right", dust=20, noise=5, jpeg=55)
    pages = {
        "qr": scangen.scan(scangen.separator_sheet("PATCH T", "qr"), seed=1),
        "code128": scangen.scan(scangen.separator_sheet("PATCH T", "code128"), seed=2),
        "other code": scangen.scan(scangen.separator_sheet("PATCH X", "qr"), seed=3),
        "blank back": scangen.scan(scangen.blank_page(), seed=4, back_of=front, kind=kind),
        "back of a separator": scangen.scan(scangen.blank_page(), seed=5, back_of=scangen.separator_sheet("PATCH T"),
                                            kind=kind),
        "signature": scangen.scan(scangen.signature_page(6, pen=120, width=2), seed=6, kind=kind),
        "page number": scangen.scan(scangen.page_number_page(4, pt=10), seed=7, kind=kind),
        "text": scangen.scan(front, seed=8),
    }
    pdf = scangen.scanned_pdf(tmp_path / "pages.pdf", list(pages.values()))
    got = {name: pagescan.scan_page(pdf, i, "PATCH T", True, opts) for i, name in enumerate(pages)}
    assert {n for n, s in got.items() if s.separator} == {"qr", "code128"}, got
    assert {n for n, s in got.items() if s.blank} == {"blank back", "back of a separator"}, got
    # without blank detection a page is never blank, and the same code with other text never splits
    plain = pagescan.scan_page(pdf, 3, "PATCH X", False, opts)
    assert not plain.blank and not plain.separator and plain.ink_ppm < 0
    assert pagescan.scan_page(pdf, 2, "PATCH X", False, opts).separator


def test_pdf_batch_split_into_parts_pages_copied_as_they_are(tmp_path: Path, batch_pdf: tuple[Path, list[str]],
                                                            pool: RenderPool) -> None:
    cfg = cfg_for(tmp_path, "{path: inbox, name: scans, separator: 'PATCH T', drop_blank_pages: true}")
    src = shutil.copy(batch_pdf[0], tmp_path / "inbox" / "scan.pdf")
    plan = batch_pdf[1]
    sp = Splitter(cfg, pool)
    assert sp.wants(Path(src), "scans") and not sp.wants(Path(src), "nope")
    res = sp.split(Path(src), "scans")
    assert not res.passed and [p.name for p in res.parts] == ["scan.part1.pdf", "scan.part2.pdf", "scan.part3.pdf"]
    assert res.original_to == tmp_path / "inbox" / "batch-originals" / "scan.pdf" and res.original_to.is_file()
    assert not (tmp_path / "inbox" / "scan.pdf").exists()
    assert not list((tmp_path / "state" / "batches").glob("*.json"))  # the record is gone once finished
    assert not list(tmp_path.rglob("*.ocr-tmp"))
    with pymupdf.open(str(res.original_to)) as orig:
        for k, part in enumerate(res.parts):
            info = part_info(part)
            assert info is not None and (info["part"], info["parts"]) == (k + 1, 3)
            want = [i + 1 for i, what in enumerate(plan) if what == f"doc{k}"]
            assert info["pages"] == want
            assert not sp.wants(part, "scans")  # a part is never split again
            with pymupdf.open(str(part)) as doc:
                assert doc.page_count == len(want)
                for j, n in enumerate(want):  # the scanner's JPEG, byte for byte: nothing re-encoded
                    (xa, *_), (xb, *_) = orig[n - 1].get_images()[0], doc[j].get_images()[0]
                    assert orig.xref_stream_raw(xa) == doc.xref_stream_raw(xb)
        # every page of the original is kept in one part or listed as dropped in one part
        listed = sorted([p for part in res.parts for p in part_info(part)["pages"]]  # type: ignore[index]
                        + [d["page"] for part in res.parts for d in part_info(part)["dropped_pages"]])  # type: ignore[index]
        assert listed == list(range(1, orig.page_count + 1))
    dropped = {d["page"]: d["reason"] for part in res.parts for d in part_info(part)["dropped_pages"]}  # type: ignore[index]
    assert dropped == {i + 1: ("separator" if what == "separator" else "blank")
                       for i, what in enumerate(plan) if what in ("blank", "separator")}

    # the same batch dropped again while the first parts are still there: new names, nothing overwritten
    again = shutil.copy(batch_pdf[0], tmp_path / "inbox" / "scan.pdf")
    res2 = sp.split(Path(again), "scans")
    assert [p.name for p in res2.parts] == ["scan-2.part1.pdf", "scan-2.part2.pdf", "scan-2.part3.pdf"]
    assert res2.original_to == tmp_path / "inbox" / "batch-originals" / "scan-1.pdf"
    assert [p.read_bytes() for p in res2.parts] == [p.read_bytes() for p in res.parts]  # deterministic bytes


def test_tiff_batch_split(tmp_path: Path, pool: RenderPool) -> None:
    cfg = cfg_for(tmp_path, "{path: inbox, separator: 'PATCH T', drop_blank_pages: true}")
    src = tmp_path / "inbox" / "stack.tif"
    plan = scangen.duplex_batch(src, [[docgen.SAMPLES["it"]], [docgen.SAMPLES["nl"]]], ["PATCH T"], seed=3, tiff=True)
    res = Splitter(cfg, pool).split(src, "inbox")
    assert [p.name for p in res.parts] == ["stack.part1.pdf", "stack.part2.pdf"]
    for k, part in enumerate(res.parts):
        assert part_info(part)["pages"] == [i + 1 for i, w in enumerate(plan) if w == f"doc{k}"]  # type: ignore[index]
        with pikepdf.open(part) as pdf:
            assert len(pdf.pages) == 1


def test_separator_that_does_not_match_does_not_split(tmp_path: Path, batch_pdf: tuple[Path, list[str]],
                                                      pool: RenderPool) -> None:
    cfg = cfg_for(tmp_path, "{path: inbox, separator: 'PATCH X'}")
    src = Path(shutil.copy(batch_pdf[0], tmp_path / "inbox" / "scan.pdf"))
    res = Splitter(cfg, pool).split(src, "inbox")
    assert res.passed and res.parts == [] and src.is_file()
    assert sorted(p.name for p in (tmp_path / "inbox").iterdir()) == ["scan.pdf"]
