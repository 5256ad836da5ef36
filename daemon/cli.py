"""The ``ocr-daemon`` command.

Exit codes (the only place they are produced is ``main`` via ``daemon.errors.exit_code_for``):
0 ok; 1 some documents failed / unexpected error; 2 invalid config or usage; 3 the OCR engine
could not start; 4 state dir/journal unusable; 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from datetime import datetime
from pathlib import Path

from daemon import __version__
from daemon.config import DEFAULT_CONFIG_PATH, Config, config_warnings, filesystem_problems, load_config
from daemon.errors import ConfigError, ExitCode, FatalError, exit_code_for

log = logging.getLogger(__name__)


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config",
        type=Path,
        default=Path(os.environ.get("OCR_DAEMON_CONFIG", str(DEFAULT_CONFIG_PATH))),
        help=f"rules file (default: $OCR_DAEMON_CONFIG or {DEFAULT_CONFIG_PATH})",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ocr-daemon", description="Watched-folder OCR daemon.")
    parser.add_argument("--version", action="version", version=f"ocr-daemon {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("run", help="run the daemon in the foreground (what the systemd unit runs)")
    _add_common(p)
    p.add_argument("--engine", choices=["tesseract", "vllm", "openai"], help="override engine.kind")
    p.add_argument("--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"])

    p = sub.add_parser("check-config", help="validate the rules file; report every error at once")
    _add_common(p)

    p = sub.add_parser("once", help="process files now as if dropped into their inbox; print where outputs went")
    _add_common(p)
    p.add_argument("--engine", choices=["tesseract", "vllm", "openai"], help="override engine.kind")
    p.add_argument("files", nargs="+", type=Path)

    p = sub.add_parser("route", help="show how a file would be classified and routed (OCRs it, writes nothing)")
    _add_common(p)
    p.add_argument("--explain", action="store_true", help="print the detailed explanation (default)")
    p.add_argument("--engine", choices=["tesseract", "vllm", "openai"], help="override engine.kind")
    p.add_argument("file", type=Path)

    p = sub.add_parser("status", help="documents by state and recent failures")
    _add_common(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")

    p = sub.add_parser("requeue", help="queue failed documents (or given files) again")
    _add_common(p)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--failed", action="store_true", help="every failed document")
    g.add_argument("files", nargs="*", type=Path, default=[])

    from daemon.engines import modelfolder
    from daemon.writers import convert

    for name, module, text in (
        ("convert", convert, "rebuild outputs from a saved raw model-output Markdown file (no OCR)"),
        ("model", modelfolder, "fetch the model, or write a dummy-weights model folder for testing"),
    ):
        p = sub.add_parser(name, help=text)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def _load(path: Path) -> Config:
    cfg = load_config(path)
    for w in config_warnings(cfg):
        log.warning("%s", w)
    return cfg


def cmd_check_config(args: argparse.Namespace) -> int:
    try:
        cfg = load_config(args.config)
    except ConfigError as e:
        for p in e.problems:
            print(p, file=sys.stderr)
        print(f"{args.config}: {len(e.problems)} error(s)", file=sys.stderr)
        return ExitCode.CONFIG
    fs = filesystem_problems(cfg)
    if fs:
        for p in fs:
            print(p, file=sys.stderr)
        print(f"{args.config}: {len(fs)} error(s)", file=sys.stderr)
        return ExitCode.CONFIG
    warns = config_warnings(cfg)
    for w in warns:
        print(f"warning: {w}", file=sys.stderr)
    print(
        f"{args.config}: OK ({len(cfg.inboxes)} inbox(es), {len(cfg.doctypes)} doctype(s), "
        f"{len(cfg.routes)} route(s){f', {len(warns)} warning(s)' if warns else ''})"
    )
    return ExitCode.OK


def cmd_run(args: argparse.Namespace) -> int:
    from daemon.service.sdnotify import setup_logging
    from daemon.service.service import Service

    cfg = _load(args.config)
    setup_logging(args.log_level or cfg.daemon.log_level)
    for w in config_warnings(cfg):
        log.warning("%s", w)
    svc = Service(cfg, config_path=args.config, engine_override=args.engine)
    svc.install_signal_handlers()
    return svc.run()


def _inbox_for(cfg: Config, path: Path) -> str:
    ap = path.resolve()
    for ib in cfg.inboxes:
        root = ib.path.resolve()
        if ap.parent == root or (ib.recursive and root in ap.parents):
            return ib.name
    return "once"


def cmd_once(args: argparse.Namespace) -> int:
    from daemon.engines import create_engine
    from daemon.journal.store import Journal
    from daemon.service.pipeline import Pipeline

    cfg = _load(args.config)
    journal = Journal(cfg.daemon.state_dir)
    engine = create_engine(cfg, args.engine)
    engine.start()
    pipeline = Pipeline(cfg, journal, engine)
    failures = 0
    try:
        for f in args.files:
            path = Path(os.path.abspath(f))
            if not os.path.lexists(path):
                print(f"{f}: no such file", file=sys.stderr)
                failures += 1
                continue
            adm = journal.admit(path, _inbox_for(cfg, path), duplicates=cfg.daemon.duplicates)
            doc = adm.document
            if adm.action == "known" and doc is not None:
                row = journal.get(doc.id) or {}
                print(f"{f}: already {row.get('state')} as doc-{doc.id} (ocr-daemon requeue {f} to process it again)")
                for o in json.loads(row.get("outputs") or "[]"):
                    print(f"  {o}")
                continue
            assert doc is not None
            claimed = journal.claim(doc.id)
            if claimed is None:
                print(f"{f}: being processed by another ocr-daemon", file=sys.stderr)
                failures += 1
                continue
            outcome = pipeline.process(claimed)
            if outcome.state in ("done", "duplicate"):
                print(f"{f}: {outcome.state}")
                for o in outcome.outputs or []:
                    print(f"  {o}")
                if outcome.final_path and outcome.final_path != path:
                    print(f"  source -> {outcome.final_path}")
            else:
                failures += 1
                where = f" (moved to {outcome.final_path})" if outcome.final_path and outcome.final_path != path else ""
                print(f"{f}: {outcome.state}: {outcome.reason}{where}", file=sys.stderr)
    finally:
        pipeline.close()
        engine.close()
    return ExitCode.FAILURES if failures else ExitCode.OK


def cmd_route(args: argparse.Namespace) -> int:
    from daemon.engines import create_engine
    from daemon.engines.base import PageRequest
    from daemon.pages import probe, render
    from daemon.service.pipeline import render_options
    from daemon.understand.classify import classify, format_explain
    from daemon.understand.route import choose_route

    cfg = _load(args.config)
    path = Path(os.path.abspath(args.file))
    engine = create_engine(cfg, args.engine)
    opts = render_options(cfg, engine.name)
    n = probe.page_count(path, opts)
    engine.start()
    try:
        reqs = [PageRequest("explain", i, render.render_page(path, i, opts).image, priority=i) for i in range(n)]
        texts = engine.recognize(reqs)
    finally:
        engine.close()
    full = "\n\n".join(t.text for t in texts)
    cls = classify(full, cfg=cfg, filename=path.name, pages=n, markdown=engine.output_is_markdown)
    decision, rows = choose_route(cfg, path=path, inbox=_inbox_for(cfg, path), cls=cls, pages=n, when=datetime.now())
    print(f"file: {path} ({n} page(s), engine {engine.name})")
    print(format_explain(cls, rows))
    print(f"=> route {decision.name!r}: formats {', '.join(decision.formats)} -> {decision.destination}; source: {decision.source_action}")
    return ExitCode.OK


def cmd_status(args: argparse.Namespace) -> int:
    from daemon.journal.store import Journal, journal_exists, journal_path
    from daemon.models import DocState

    cfg = load_config(args.config)
    if not journal_exists(cfg.daemon.state_dir):  # status never creates a journal (or its folder)
        if args.json:
            print(json.dumps({"counts": {}, "recent_failures": []}, indent=2))
        else:
            print(f"journal: {journal_path(cfg.daemon.state_dir)} (none yet: the daemon has not run with this state_dir)")
        return ExitCode.OK
    # read-only: `sudo ocr-daemon status` must not create or own anything in the service's state
    # folder (SQLite itself gives the -wal/-shm files a root process creates to the journal's owner)
    journal = Journal(cfg.daemon.state_dir, readonly=True)
    try:
        counts = journal.counts()
        fails = journal.recent_failures(10)
    finally:
        journal.close()
    if args.json:
        print(json.dumps({"counts": counts, "recent_failures": [{k: (str(f[k]) if isinstance(f[k], Path) else f[k]) for k in ("id", "path", "error", "final_path")} for f in fails]}, indent=2))
        return ExitCode.OK
    print(f"journal: {journal.path}")
    for state in DocState:
        print(f"  {state.value:<11} {counts.get(state.value, 0)}")
    if fails:
        print("recent failures:")
        for f in fails:
            print(f"  doc-{f['id']} {Path(f['path']).name}: {f['error']}")
            if f["final_path"]:
                print(f"      now at {f['final_path']}")
    return ExitCode.OK


def cmd_requeue(args: argparse.Namespace) -> int:
    from daemon.fsio import error_note_name, move_file
    from daemon.journal.store import Journal, journal_exists, journal_path

    cfg = load_config(args.config)
    if not journal_exists(cfg.daemon.state_dir):  # nothing was ever journaled: create nothing
        print(f"no journal at {journal_path(cfg.daemon.state_dir)}: nothing to requeue", file=sys.stderr)
        return ExitCode.OK if args.failed else ExitCode.FAILURES
    journal = Journal(cfg.daemon.state_dir)
    paths = [Path(os.path.abspath(p)) for p in args.files]
    rows = journal.recent_failures(10**9) if args.failed else [r for p in paths if (r := journal.find(p))]
    if not args.failed:
        for p in paths:
            if journal.find(p) is None:
                print(f"{p}: not in the journal", file=sys.stderr)
    n = 0
    for row in rows:
        orig, now = row["path"], row["final_path"]
        ids = journal.requeue(paths=[orig])
        if not ids:
            continue
        # A failed source sits in the failed folder: put it back where it came from.
        if now is not None and now != orig and now.exists() and not os.path.lexists(orig):
            try:
                move_file(now, orig)
                err = now.parent / error_note_name(now.name)
                if err.exists():
                    err.unlink()
            except Exception as e:  # keep processing it from where it is
                print(f"{now}: cannot move back to {orig} ({e}); it will be read from where it is", file=sys.stderr)
                journal.move_source(ids[0], now)
        journal.set_final_path(ids[0], None)
        print(f"doc-{ids[0]}: queued again ({orig.name})")
        n += 1
    print(f"{n} document(s) queued; a running daemon picks them up at its next rescan (daemon.rescan_interval)")
    return ExitCode.OK if n or args.failed else ExitCode.FAILURES


COMMANDS = {
    "run": cmd_run,
    "check-config": cmd_check_config,
    "once": cmd_once,
    "route": cmd_route,
    "status": cmd_status,
    "requeue": cmd_requeue,
}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command not in ("run",):
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    func = getattr(args, "_run", None) or COMMANDS[args.command]
    try:
        return int(func(args))
    except ConfigError as e:
        for p in e.problems:
            print(p, file=sys.stderr)
        return ExitCode.CONFIG
    except FatalError as e:
        print(f"ocr-daemon: {e}", file=sys.stderr)
        return int(e.exit_code)
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except Exception as e:
        from daemon.errors import InputError

        if isinstance(e, InputError):
            print(f"ocr-daemon: {e.reason}", file=sys.stderr)
        else:
            log.exception("ocr-daemon: unexpected error")
        return int(exit_code_for(e))


if __name__ == "__main__":
    sys.exit(main())
