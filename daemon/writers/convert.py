"""``ocr-daemon convert``: rebuild outputs from a saved raw engine output, without OCR.

The daemon keeps each document's raw engine output as ``<stem>.raw.md`` in its state dir. That
file is the page texts joined by :func:`join_raw_pages`: every page starts with a line
``<!-- page N -->`` (:data:`RAW_PAGE_MARK`, N 1-based) followed by the page text exactly as
the engine returned it and one newline. :func:`split_raw_pages` inverts it exactly
(``split_raw_pages(join_raw_pages(p)) == p`` for page texts that do not themselves contain a
mark line). A file without any mark is one page. The ``.md`` the md writer produces uses the
same marks, so it can be converted again too.

Usage::

    ocr-daemon convert FILE.md --to md,txt,tex,csv,xlsx,json [--out DIR] [--language xx]
                       [--stem NAME] [--plain] [--csv-bom]
    python -m daemon.writers.convert FILE.md --to ...

Outputs are named ``<stem>.<ext>`` where stem is ``--stem`` or the file name without ``.raw.md``
/ ``.md`` / ``.txt``; they go to ``--out`` (default: beside FILE), are written atomically and replace
earlier outputs of the same name -- except FILE itself, which is never overwritten. They are written
the way the daemon writes its outputs (:func:`daemon.fsio.atomic_write`: created ``0644`` less the
umask, so ``0640`` under the unit's ``UMask=0027``), not ``0600`` as a ``mkstemp`` temp file would
leave them.
Exit codes: 0 written, 1 a write failed, 2 usage error (bad format, unreadable input, output
would overwrite the input).
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from daemon.errors import ExitCode, TransientError
from daemon.fsio import atomic_write

log = logging.getLogger(__name__)

#: The page mark line of raw engine output files (``.format(n=page number)``, 1-based).
RAW_PAGE_MARK = "<!-- page {n} -->"
_MARK_LINE = re.compile(r"^<!-- page (\d+) -->[ \t]*$", re.M)


def join_raw_pages(texts: Sequence[str]) -> str:
    """Page texts -> the raw file's text (see the module docstring)."""
    return "".join(RAW_PAGE_MARK.format(n=n) + "\n" + text + "\n" for n, text in enumerate(texts, start=1))


def split_raw_pages(text: str) -> list[str]:
    """The raw file's text -> page texts. Text before the first mark (if not blank) is kept as
    part of the first page; a file without marks is a single page."""
    marks = list(_MARK_LINE.finditer(text))
    if not marks:
        return [text]
    pages: list[str] = []
    for k, m in enumerate(marks):
        start = m.end() + 1 if text[m.end() : m.end() + 1] == "\n" else m.end()
        end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        body = text[start:end]
        if body.endswith("\n"):
            body = body[:-1]
        pages.append(body)
    head = text[: marks[0].start()]
    if head.strip():
        pages[0] = head.rstrip("\n") + "\n" + pages[0]
    return pages


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".raw.md", ".md", ".markdown", ".txt"):
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return path.stem or name


def _detect_language(text: str) -> str:
    """Language via ``daemon.understand.language.detect_language`` when it is available, else ``en``."""
    try:
        from daemon.understand.language import detect_language
    except Exception:  # classify is optional for convert: fall back rather than fail
        log.info("language detection unavailable; assuming en")
        return "en"
    try:
        got = detect_language(text)
    except Exception:
        log.warning("language detection failed; assuming en", exc_info=True)
        return "en"
    code = got[0] if isinstance(got, tuple) else got
    return str(code)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of the ``convert`` subcommand."""
    p.add_argument("file", type=Path, metavar="FILE", help="saved engine output (<stem>.raw.md) or an .md from the md writer")
    p.add_argument(
        "--to",
        default="md,txt,json",
        help="comma-separated formats: md,txt,tex,csv,xlsx,json (default: md,txt,json)",
    )
    p.add_argument("--out", type=Path, default=None, help="output folder (default: beside FILE)")
    p.add_argument("--language", default=None, help="ISO 639-1 code of the document (default: detected)")
    p.add_argument("--stem", default=None, help="name outputs <STEM>.<ext> (default: FILE's name without .raw.md/.md)")
    p.add_argument("--plain", action="store_true", help="FILE is plain OCR text (Tesseract), not Markdown")
    p.add_argument("--csv-bom", action="store_true", help="start CSV files with a UTF-8 BOM (for Excel)")


def run(args: argparse.Namespace) -> int:
    """Run ``convert``; returns the process exit code."""
    from daemon.document.parse import parse_document
    from daemon.writers import FORMATS, WriterOptions, render_outputs

    src: Path = args.file
    formats = [f.strip().lower() for f in str(args.to).split(",") if f.strip()]
    if "pdf" in formats:
        print("convert: the pdf output is made from the source file and its pages, not from raw text; "
              "route the source through the daemon with formats [pdf]", file=sys.stderr)
        return int(ExitCode.CONFIG)
    bad = [f for f in formats if f not in FORMATS]
    if not formats or bad:
        print(f"convert: unknown format(s) {', '.join(bad) or '(none)'}; choose from {','.join(FORMATS)}", file=sys.stderr)
        return int(ExitCode.CONFIG)
    try:
        raw = src.read_bytes().decode("utf-8", errors="replace")
    except OSError as e:
        print(f"convert: cannot read {src}: {e.strerror or e}", file=sys.stderr)
        return int(ExitCode.CONFIG)
    pages = split_raw_pages(raw)
    plain = bool(getattr(args, "plain", False)) or src.suffix.lower() == ".txt"
    # the one parse of the engine's text (Markdown, or plain with --plain)
    doc = parse_document(pages, markdown=not plain)
    # detect on the words only: HTML table markup would make a Chinese document look English
    language = args.language or _detect_language(doc.text())
    doc.language = language
    out_dir: Path = args.out if args.out is not None else src.parent
    stem = getattr(args, "stem", None) or _stem(src)
    if "/" in stem or stem in (".", ".."):
        print(f"convert: --stem must be a plain file name, not {stem!r}", file=sys.stderr)
        return int(ExitCode.CONFIG)
    options = WriterOptions(csv_bom=bool(getattr(args, "csv_bom", False)))
    sidecar = {"source": str(src), "language": language, "pages": len(pages), "engine": "convert"}
    names = render_outputs(doc, formats=formats, stem=stem, sidecar=sidecar, options=options)
    sidecar["outputs"] = sorted(names)
    files = render_outputs(doc, formats=formats, stem=stem, sidecar=sidecar, options=options)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        print(f"convert: cannot create {out_dir}: {e.strerror or e}", file=sys.stderr)
        return int(ExitCode.FAILURES)
    src_resolved = src.resolve()
    clash = [n for n in files if (out_dir / n).resolve() == src_resolved]
    if clash:
        print(f"convert: writing {clash[0]} would overwrite the input; use --out DIR", file=sys.stderr)
        return int(ExitCode.CONFIG)
    rc = int(ExitCode.OK)
    for name, data in files.items():
        try:
            atomic_write(out_dir / name, data)
            print(out_dir / name)
        except TransientError as e:  # atomic_write's OSError, in words ("cannot write X: permission denied")
            print(f"convert: {e}", file=sys.stderr)
            rc = int(ExitCode.FAILURES)
    return rc


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="ocr-daemon convert", description=__doc__.split("\n\n")[0] if __doc__ else None)
    add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
