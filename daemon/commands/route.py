"""``ocr-daemon route FILE``: how a file would be classified and routed. It OCRs the file (PDF pages
with a real text layer read as the daemon reads them) and writes nothing.

Contract: ``add_arguments(p)`` / ``run(args) -> exit code``. Prints the file and its page count,
the classification's explanation (``format_explain``), the review reasons (or ``no``) and the
route chosen (formats, destination, source action); exit 0. A file the engine cannot read now
(``TransientError``) is one line on stderr and its exit code, not a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime
from pathlib import Path

from daemon.commands.common import add_config_option, load_logged
from daemon.errors import ExitCode, TransientError, exit_code_for


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_config_option(p)
    p.add_argument("--explain", action="store_true", help="print the detailed explanation (default)")
    p.add_argument("--engine", choices=["tesseract", "vllm", "openai"], help="override engine.kind")
    p.add_argument("file", type=Path)


def run(args: argparse.Namespace) -> int:
    from daemon.commands.once import inbox_for
    from daemon.engines import create_engine
    from daemon.engines.base import PageRequest
    from daemon.pagerecord import ImagePage, LayerPage, PageResult
    from daemon.pages import probe, textlayer
    from daemon.service.outputs import page_document, page_texts
    from daemon.service.pipeline import render_options
    from daemon.understand.classify import classify, format_explain
    from daemon.understand.route import choose_route

    cfg = load_logged(args.config)
    path = Path(os.path.abspath(args.file))
    engine = create_engine(cfg, args.engine)
    # PDF pages with a real text layer are read as the daemon reads them (daemon.pages.textlayer)
    opts = render_options(cfg, engine.name, engine.output_is_markdown)
    n = probe.page_count(path, opts)
    engine.start()
    try:
        got = [textlayer.read_or_render(path, i, opts) for i in range(n)]
        reqs = [PageRequest("explain", g.index, g.image, priority=g.index) for g in got if isinstance(g, ImagePage)]
        answers = iter(engine.recognize(reqs))
        results = [
            PageResult.from_layer(g) if isinstance(g, LayerPage)
            else PageResult.from_engine(g, next(answers), engine.output_is_markdown)
            for g in got
        ]
    except TransientError as e:
        # the daemon would try the file again later; a one-off explanation says why it cannot
        # (a bad file's InputError is main()'s one-line message too), not with a traceback
        print(f"ocr-daemon: {path}: cannot read it now: {e}", file=sys.stderr)
        return int(exit_code_for(e))
    finally:
        engine.close()
    pages, markdown = page_texts(results, engine.output_is_markdown)
    full = "\n\n".join(pages)
    # the document model's plain text, as the daemon classifies (service.outputs.prepare_outputs)
    plain = page_document(results, engine.output_is_markdown, pages).text()
    cls = classify(full, cfg=cfg, filename=path.name, pages=n, markdown=markdown, plain=plain)
    from daemon.quality import Review
    from daemon.quality.run import assess_pages

    review = Review()  # the page confidence, as the daemon works it out before routing (match.review)
    assess_pages(results, cls.language, cfg.quality.min_confidence, review)
    decision, rows = choose_route(cfg, path=path, inbox=inbox_for(cfg, path), cls=cls, pages=n, when=datetime.now(),
                                  review=review.needed)
    for reason in decision.review_reasons:  # an unsure doctype kept the source in place
        review.add(reason)
    print(f"file: {path} ({n} page(s), engine {engine.name})")
    print(format_explain(cls, rows))
    print("review: " + ("; ".join(str(r) for r in review.reasons) if review else "no"))
    print(f"=> route {decision.name!r}: formats {', '.join(decision.formats)} -> {decision.destination}; source: {decision.source_action}")
    return ExitCode.OK
