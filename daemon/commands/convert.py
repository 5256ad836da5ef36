"""``ocr-daemon convert``: rebuild outputs from a saved raw engine output, without OCR (the outputs
themselves: ``daemon.writers.convert``).

Usage::

    ocr-daemon convert FILE.md --to md,txt,tex,csv,xlsx,json [--out DIR] [--language xx]
                       [--stem NAME] [--plain] [--csv-bom]

Outputs are named ``<stem>.<ext>`` where stem is ``--stem`` or the file name without ``.raw.md``
/ ``.md`` / ``.txt``; they go to ``--out`` (default: beside FILE), are written atomically and replace
earlier outputs of the same name -- except FILE itself, which is never overwritten. They are written
the way the daemon writes its outputs (:func:`daemon.fsio.atomic_write`: created ``0644`` less the
umask, so ``0640`` under the unit's ``UMask=0027``), not ``0600`` as a ``mkstemp`` temp file would
leave them. Each file written is printed on stdout.
Exit codes: 0 written, 1 a write failed, 2 usage error (bad format, unreadable input, output
would overwrite the input).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from daemon.errors import ExitCode, TransientError
from daemon.fsio import atomic_write
from daemon.writers.convert import convert_outputs, raw_stem


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
    from daemon.writers import FORMATS

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
    plain = bool(getattr(args, "plain", False)) or src.suffix.lower() == ".txt"
    out_dir: Path = args.out if args.out is not None else src.parent
    stem = getattr(args, "stem", None) or raw_stem(src)
    if "/" in stem or stem in (".", ".."):
        print(f"convert: --stem must be a plain file name, not {stem!r}", file=sys.stderr)
        return int(ExitCode.CONFIG)
    files = convert_outputs(raw, formats, source=src, stem=stem, language=args.language, plain=plain,
                            csv_bom=bool(getattr(args, "csv_bom", False)))
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
