"""The CI gate (issue 24, item 5): one route asking for every output format, run with
``ocr-daemon once --jsonl`` (Tesseract) over the whole generated gate corpus
(tests/gatecorpus.py: 66 varied documents in the 11 languages) in one process.

Why: the suite was green while, with such a route, 94 of 118 documents never came out (a
table-reader crash on scans with short rules, a KeyError in the PDF writer on text-layer
pages, an xlsx crash on spanning cells): nothing ran every format over varied documents.

The corpus is made and read once (a module fixture); each test checks one property over every
document and lists every document that breaks it, with its kind, language and the error, and
how to make that document again (``gatecorpus.build(folder, only={name})``, same bytes).

What the writers promise (daemon/writers/__init__.py): ``txt md json tex xlsx pdf`` for every
document (``xlsx`` holds a single note sheet when there is no table), ``csv`` one file per table
and none without, so CSV files are asserted exactly when the manifest says the document has a
table. The ``.tex`` is not compiled here (tests/integration/test_writer_latex.py and
test_writer_fuzz.py compile it; xelatex costs seconds per document).

Cost (``/usr/bin/time -v pytest tests/e2e/test_gate.py``, 74 pages; documents are read one
after another, a page's OCR on one core): 93 s user + 5 s system CPU, 2.1 GB peak RSS; 245-310 s
wall on the 2-core development box while other jobs held it (load 3-6, the run got 28-35 % of
a CPU), so about 2 minutes of the 6 CI can give it on 2 idle cores. Making the corpus: ~8 s CPU.
"""

from __future__ import annotations

import csv
import io
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gatecorpus
import pymupdf
import pytest
from conftest import run_cli, write_rules
from openpyxl import load_workbook

FORMATS = ["txt", "md", "json", "csv", "xlsx", "tex", "pdf"]
#: Every format but csv: one file each, whatever the document holds.
ALWAYS = (".txt", ".md", ".json", ".tex", ".xlsx", ".pdf")

#: Loose recall of the words printed on a document, in its txt: per document at least this share
#: of its expected words (at least one), and over the whole corpus at least ``MIN_TOTAL_RECALL``.
#: A reading, not a benchmark: a page whose text is lost or garbled fails it, an OCR slip on
#: one word of a faint or tiny page does not.
MIN_DOC_RECALL = 0.5
MIN_TOTAL_RECALL = 0.85

#: The ``once`` run's limit: 3x the slowest measured run (310 s on a shared 2-core box, module
#: docstring); CI has 90 minutes for the whole suite (~26 min).
RUN_TIMEOUT = 900


@dataclass
class Gate:
    docs: list[gatecorpus.GateDoc]
    recs: dict[str, dict[str, Any]]  # file name -> its ``once --jsonl`` record
    seconds: float
    stderr: str

    def done(self) -> list[tuple[gatecorpus.GateDoc, dict[str, Any]]]:
        """The documents that came out (the others fail test_every_document_is_done)."""
        return [(d, self.recs[d.name]) for d in self.docs if self.recs.get(d.name, {}).get("state") == "done"]


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> Gate:
    tmp = tmp_path_factory.mktemp("gate")
    cfg = write_rules(tmp, routes=[{"name": "gate", "destination": "out", "formats": FORMATS}])
    docs = gatecorpus.build(tmp / "inbox")
    t0 = time.monotonic()
    r = run_cli("once", "--jsonl", *(str(tmp / "inbox" / d.name) for d in docs), "--config", str(cfg),
                timeout=RUN_TIMEOUT)
    seconds = time.monotonic() - t0
    recs = {}
    for line in r.stdout.splitlines():
        rec = json.loads(line)
        recs[Path(rec["source"]).name] = rec
    print(f"gate: {len(docs)} documents, {sum(d.pages for d in docs)} pages in {seconds:.0f} s (exit {r.returncode})")
    return Gate(docs, recs, seconds, r.stderr)


def _who(d: gatecorpus.GateDoc) -> str:
    return f"{d.name} ({d.kind}, {d.language}, {d.pages} p.)"


def _report(what: str, bad: list[str], gate: Gate) -> str:
    return (f"{len(bad)} of {len(gate.docs)} documents: {what}\n  " + "\n  ".join(bad)
            + f"\nmake one again: gatecorpus.build(folder, seed={gatecorpus.SEED}, only={{name}})")


def _outputs(rec: dict[str, Any]) -> dict[str, Path]:
    return {Path(o).name: Path(o) for o in rec["outputs"]}


def test_every_document_is_done(gate: Gate) -> None:
    assert len(gate.docs) >= 60 and {d.language for d in gate.docs} == set(gatecorpus.LANGS)
    bad = []
    for d in gate.docs:
        rec = gate.recs.get(d.name)
        if rec is None:
            bad.append(f"{_who(d)}: no record (once died?)")
        elif rec["state"] != "done":
            bad.append(f"{_who(d)}: {rec['state']}: {rec['error']}")
        elif rec["pages"] != d.pages:
            bad.append(f"{_who(d)}: {rec['pages']} pages read")
    assert not bad, _report("not done", bad, gate) + "\nstderr tail:\n" + gate.stderr[-3000:]


def test_every_format_is_written(gate: Gate) -> None:
    """Each always-written format once, named after the source; CSV files exactly when the
    document has a table, one per table, and none without -- or, for a scanned table whose cells
    did not keep the words of the page read, no CSV and a ``tables`` degraded stage on the page
    saying so (issue 32 item 3: such a table stays text, flagged). Those may be no more than a
    tenth of the table documents: more is a table reader that got worse."""
    bad = []
    flagged = []
    for d, rec in gate.done():
        stem = Path(d.name).stem
        names = set(_outputs(rec))
        tables = {n for n in names if n.startswith(f"{stem}.table-") and n.endswith(".csv")}
        want = {stem + ext for ext in ALWAYS}
        if names - tables != want:
            bad.append(f"{_who(d)}: missing {sorted(want - names)}, unexpected {sorted(names - tables - want)}")
        if d.table and not tables:
            sidecar = json.loads(_outputs(rec)[stem + ".json"].read_text(encoding="utf-8"))
            why = [x["error"] for p in sidecar["pages"] for x in p.get("degraded") or [] if x["stage"] == "tables"]
            if why:
                flagged.append(f"{_who(d)}: {why[0]}")
            else:
                bad.append(f"{_who(d)}: has a table, no csv, nothing in the sidecar says why")
        if not d.table and tables:
            bad.append(f"{_who(d)}: has no table, csv {sorted(tables)}")
        missing = [n for n, p in _outputs(rec).items() if not p.is_file()]
        if missing:
            bad.append(f"{_who(d)}: listed but not on disk: {missing}")
    assert not bad, _report("outputs", bad, gate)
    with_table = sum(1 for d, _ in gate.done() if d.table)
    assert len(flagged) <= with_table // 10, _report(f"tables kept as text (of {with_table} with a table)", flagged, gate)


def test_text_outputs_hold_the_text(gate: Gate) -> None:
    """txt, md, json and tex of a page with text are not empty; csv and xlsx hold the tables."""
    bad = []
    for d, rec in gate.done():
        out, stem = _outputs(rec), Path(d.name).stem
        try:
            txt = out[f"{stem}.txt"].read_text(encoding="utf-8")
            md = out[f"{stem}.md"].read_text(encoding="utf-8")
            js = json.loads(out[f"{stem}.json"].read_text(encoding="utf-8"))
            tex = out[f"{stem}.tex"].read_text(encoding="utf-8")
            wb = load_workbook(out[f"{stem}.xlsx"], read_only=True)
        except (KeyError, OSError, ValueError) as e:
            bad.append(f"{_who(d)}: {type(e).__name__}: {e}")
            continue
        if d.text and not (txt.strip() and md.strip() and any(t.strip() for t in js["page_texts"])):
            bad.append(f"{_who(d)}: empty text output (txt {len(txt)}, md {len(md)} chars)")
        if len(js["page_texts"]) != d.pages or len(js["document"]["pages"]) != d.pages:
            bad.append(f"{_who(d)}: json has {len(js['page_texts'])} page texts for {d.pages} pages")
        if "\\begin{document}" not in tex or "\\end{document}" not in tex:
            bad.append(f"{_who(d)}: tex is not a whole document")
        csvs = sorted(n for n in out if n.endswith(".csv"))
        rows = [list(csv.reader(io.StringIO(out[n].read_text(encoding="utf-8-sig")))) for n in csvs]
        if any(len(r) < 2 or max(len(x) for x in r) < 2 for r in rows):
            bad.append(f"{_who(d)}: a csv with fewer than 2 rows or columns: {[len(r) for r in rows]}")
        sheets = wb.sheetnames
        if (len(sheets) != len(csvs)) if csvs else (sheets != ["no tables"]):
            bad.append(f"{_who(d)}: xlsx sheets {sheets} for {len(csvs)} csv file(s)")
        wb.close()
    assert not bad, _report("text outputs", bad, gate)


def test_searchable_pdf_has_the_source_pages(gate: Gate) -> None:
    """The output PDF has the source's page count and a text layer where the source has text."""
    bad = []
    for d, rec in gate.done():
        pdf = _outputs(rec).get(f"{Path(d.name).stem}.pdf")
        if pdf is None:
            continue  # test_every_format_is_written says so
        try:
            with pymupdf.open(pdf) as doc:
                n = doc.page_count
                text = "".join(p.get_text() for p in doc)
        except Exception as e:  # a PDF PyMuPDF cannot open is this test's finding, whatever the error
            bad.append(f"{_who(d)}: does not open: {type(e).__name__}: {e}")
            continue
        if n != d.pages:
            bad.append(f"{_who(d)}: {n} pages")
        if d.text and not text.strip():
            bad.append(f"{_who(d)}: no text layer")
    assert not bad, _report("searchable PDF", bad, gate)


def _found(word: str, text: str) -> bool:
    """Case-insensitive, whitespace ignored (Tesseract may space CJK characters or split a
    word at a line end)."""
    return "".join(word.split()).casefold() in "".join(text.split()).casefold()


#: Reading-quality defects the gate found that are not fixed yet: their documents are done with
#: every format (the tests above hold them to that); their words are reported, not asserted, so
#: that any OTHER document that stops being read fails the gate. Empty now: the skewed pages are
#: deskewed by the render stage, and the simplified-Chinese table (12-rules_only_table-zh.jpg),
#: once read with chi_sim+chi_tra+jpn in traditional forms, is read with chi_sim+jpn
#: (``tessplan.undecided_models``).
KNOWN_MISREADS: dict[str, str] = {}


def test_printed_words_are_read(gate: Gate) -> None:
    bad, found, total = [], 0, 0
    known: list[str] = []
    for d, rec in gate.done():
        txt_path = _outputs(rec).get(f"{Path(d.name).stem}.txt")
        txt = txt_path.read_text(encoding="utf-8") if txt_path else ""
        hits = [w for w in d.words if _found(w, txt)]
        found, total = found + len(hits), total + len(d.words)
        if len(hits) < max(1, MIN_DOC_RECALL * len(d.words)):
            missed = [w for w in d.words if w not in hits]
            line = f"{_who(d)}: {len(hits)}/{len(d.words)} words, missed {missed}; txt starts {txt[:160]!r}"
            (known if d.name in KNOWN_MISREADS else bad).append(line)
    if known:
        print("known misreads (KNOWN_MISREADS):\n  " + "\n  ".join(known))
    assert not bad, _report("words not read", bad, gate)
    assert found >= MIN_TOTAL_RECALL * total, f"{found}/{total} expected words read over the corpus"
