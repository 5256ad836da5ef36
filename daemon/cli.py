"""The ``ocr-daemon`` command.

Exit codes (the only place they are produced is ``main`` via ``daemon.errors.exit_code_for``):
0 ok; 1 some documents failed / unexpected error; 2 invalid config or usage; 3 the OCR engine
could not start; 4 state dir/journal unusable (or damaged); 5 another ocr-daemon holds the state
dir; 130 interrupted; 141 the reader of the output went away (``ocr-daemon status | head``: like
any Unix tool killed by SIGPIPE, no traceback).

``status`` needs only the state folder: it reads ``daemon.state_dir`` leniently from a
``rules.yaml`` that does not validate (and says so), so an operator can look at the journal while
fixing the config. ``once`` is ``daemon.once`` (files processed several at once, results printed in
the order given; a ``tqdm`` progress bar on a terminal -- the widely used bar library, already a
dependency of the vLLM stack; it redraws in place, sizes to the terminal and computes rates -- and
plain progress lines on stderr otherwise).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from datetime import datetime
from pathlib import Path

from daemon import __version__, procenv
from daemon.config import (
    DEFAULT_CONFIG_PATH,
    Config,
    DaemonCfg,
    config_warnings,
    filesystem_problems,
    load_config,
)
from daemon.config.validate import http_notes, http_problems
from daemon.errors import ConfigError, ExitCode, FatalError, TransientError, exit_code_for
from daemon.models import format_duration
from daemon.names import for_log

#: Exit code after the output's reader went away (128 + SIGPIPE, as a shell reports a tool it killed).
EXIT_BROKEN_PIPE = 141

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
    p.add_argument(
        "--log-file", type=Path, metavar="PATH",
        help="append the log to PATH (reopened after logrotate moves it) instead of stderr/journald; stdout and "
        "stderr go there too and stdin is /dev/null, so the daemon can run detached (setsid -f)",
    )
    p.add_argument(
        "--pid-file", type=Path, metavar="PATH",
        help="write the daemon's process id to PATH while it runs (for kill -HUP / kill); removed at exit",
    )

    p = sub.add_parser("check-config", help="validate the rules file; report every error at once")
    _add_common(p)

    p = sub.add_parser("once", help="process files now as if dropped into their inbox; print where outputs went")
    _add_common(p)
    p.add_argument("--engine", choices=["tesseract", "vllm", "openai"], help="override engine.kind")
    p.add_argument("--jsonl", action="store_true", help="one JSON object per file on stdout (for scripts)")
    p.add_argument(
        "--hooks-wait", type=float, default=60.0, metavar="SECONDS",  # daemon.service.hooks.run_for_once says why
        help="run the routes' on_done hooks at the end, retrying for up to SECONDS (default 60); "
        "0: only journal them (the daemon delivers them at its next start)",
    )
    p.add_argument(
        "--apply-source-action", action="store_true",
        help="archive or delete each file as its route's `source` says, and move failed files to the failed "
        "folder, as the daemon does (default: the files given stay where they are)",
    )
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

    from daemon.config import reference

    p = sub.add_parser("config", help="print the rules.yaml JSON Schema, or the effective config with defaults filled in")
    actions = p.add_subparsers(dest="config_command", required=True, metavar="ACTION")
    actions.add_parser("schema", help="print the JSON Schema of rules.yaml (for editors and validators)")
    _add_common(actions.add_parser("show", help="print the effective config, every default filled in, as YAML"))
    p.set_defaults(_run=reference.run_cli)

    from daemon.engines import modelfolder
    from daemon.journal import repair
    from daemon.writers import convert

    for name, module, text in (
        ("convert", convert, "rebuild outputs from a saved raw model-output Markdown file (no OCR)"),
        ("model", modelfolder, "fetch the model, or write a dummy-weights model folder for testing"),
        ("journal", repair, "rebuild the journal from the outputs, or restore a backup (with the daemon stopped)"),
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
    from daemon.config.checks import machine_problems
    from daemon.config.validate import by_line

    errors, machine_warns = machine_problems(cfg)  # this machine: programs, folders, permissions
    fs = by_line(filesystem_problems(cfg) + http_problems(cfg) + errors)
    if fs:
        for p in fs:
            print(p, file=sys.stderr)
        print(f"{args.config}: {len(fs)} error(s)", file=sys.stderr)
        return ExitCode.CONFIG
    warns = by_line(config_warnings(cfg) + machine_warns)
    for w in warns:
        print(f"warning: {w}", file=sys.stderr)
    for n in http_notes(cfg):  # who can reach the HTTP endpoint, when that is the network
        print(f"note: {n}", file=sys.stderr)
    print(
        f"{args.config}: OK ({len(cfg.inboxes)} inbox(es), {len(cfg.doctypes)} doctype(s), "
        f"{len(cfg.routes)} route(s){f', {len(warns)} warning(s)' if warns else ''})"
    )
    return ExitCode.OK


def cmd_run(args: argparse.Namespace) -> int:
    from daemon.service.sdnotify import setup_logging
    from daemon.service.service import Service

    cfg = load_config(args.config)  # its warnings are logged below, once, where the log goes
    if args.log_file is not None:
        detach_output(args.log_file)
    setup_logging(args.log_level or cfg.daemon.log_level, str(args.log_file) if args.log_file else None)
    from daemon.config.checks import inbox_access

    for w in config_warnings(cfg) + inbox_access(cfg):  # inbox subtrees the service or the group cannot write
        log.warning("%s", w)
    pid_file = PidFile(args.pid_file) if args.pid_file is not None else None
    if pid_file is not None:
        pid_file.write()
    try:
        svc = Service(cfg, config_path=args.config, engine_override=args.engine)
        svc.install_signal_handlers()
        return svc.run()
    finally:
        if pid_file is not None:
            pid_file.remove()


def detach_output(path: Path) -> None:
    """``run --log-file``: stdout and stderr appended to ``path`` (a C library's message or a
    crash's traceback lands in the log, not on a terminal the daemon has left), stdin /dev/null.
    A file that cannot be opened is a usage error (exit 2) said on the terminal still there."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
    except OSError as e:
        raise ConfigError([f"--log-file {path}: cannot open it: {e.strerror}"]) from e
    sys.stdout.flush()
    sys.stderr.flush()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(null)
    os.close(fd)


class PidFile:
    """``run --pid-file``: the process id, written atomically at start and removed at exit if it
    is still ours. A file naming another live ocr-daemon is refused (exit 5, like the state
    folder's lock), so a second start cannot take the first one's pid file from it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self) -> None:
        from daemon.errors import FatalError
        from daemon.fsio import atomic_write

        other = self._read()
        if other is not None and other != os.getpid() and _is_ocr_daemon(other):
            raise FatalError(f"--pid-file {self.path}: ocr-daemon pid {other} is running", ExitCode.LOCKED)
        try:
            atomic_write(self.path, f"{os.getpid()}\n".encode())
        except (OSError, TransientError) as e:
            raise ConfigError([f"--pid-file {self.path}: cannot write it: {e}"]) from e

    def remove(self) -> None:
        if self._read() == os.getpid():
            try:
                self.path.unlink()
            except OSError as e:
                log.warning("pid file %s not removed: %s", self.path, e.strerror)

    def _read(self) -> int | None:
        try:
            return int(self.path.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None


def _is_ocr_daemon(pid: int) -> bool:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"ocr-daemon" in cmd or b"daemon\x00run" in cmd


def cmd_once(args: argparse.Namespace) -> int:
    from daemon.once import run_once

    return run_once(_load(args.config), args.files, engine_kind=args.engine, jsonl=args.jsonl, hooks_wait=args.hooks_wait,
                    apply_source_action=args.apply_source_action)


def cmd_route(args: argparse.Namespace) -> int:
    from daemon.engines import create_engine
    from daemon.engines.base import PageRequest
    from daemon.once import inbox_for
    from daemon.pagerecord import PageResult
    from daemon.pages import probe, textlayer
    from daemon.service.outputs import page_document, page_texts
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
        # PDF pages with a real text layer are read as the daemon reads them (daemon.pages.textlayer)
        opts.math_to_engine = engine.output_is_markdown
        got = [textlayer.read_or_render(path, i, opts) for i in range(n)]
        reqs = [PageRequest("explain", g.index, g.image, priority=g.index) for g in got if g.image is not None]
        answers = iter(engine.recognize(reqs))
        results = [
            PageResult.from_layer(g, g.layer) if g.layer is not None
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


def state_dir_of(config: Path) -> Path:
    """``daemon.state_dir`` of ``config``, from a valid file, or read leniently from one that does
    not validate (a warning says so): ``status`` and ``requeue`` need nothing else. A file that
    is not even YAML (or cannot be read) is still a ``ConfigError``."""
    try:
        return load_config(config).daemon.state_dir
    except ConfigError as e:
        import yaml

        try:
            data = yaml.safe_load(config.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            raise e from None
        section = data.get("daemon") if isinstance(data, dict) else None
        raw = section.get("state_dir") if isinstance(section, dict) else None
        state = Path(os.path.expanduser(str(raw))) if isinstance(raw, str | Path) and str(raw) else DaemonCfg().state_dir
        if not state.is_absolute():
            state = config.resolve().parent / state
        print(f"warning: {config} has {len(e.problems)} error(s) (ocr-daemon check-config shows them); "
              f"reading the journal in {state} anyway", file=sys.stderr)
        return state


def cmd_status(args: argparse.Namespace) -> int:
    from daemon.journal.store import Journal, journal_exists, journal_path, status_summary
    from daemon.models import DocState

    state_dir = state_dir_of(args.config)
    try:
        cfg = load_config(args.config)
    except ConfigError:
        cfg = None
    shared = cfg is not None and bool(cfg.daemon.journal_url)  # PostgreSQL: no file to look for
    if not shared and not journal_exists(state_dir):  # status never creates a journal (or its folder)
        if args.json:
            from daemon.journal import deliveries

            print(json.dumps({"counts": {}, "in_progress": [], "retrying": [], "waiting_for_space": [], "recent_failures": [],
                              "recent_done": [], "hooks": deliveries.summary(None), "state_size": None}, indent=2))
        else:
            print(f"journal: {journal_path(state_dir)} (none yet: the daemon has not run with this state_dir)")
        return ExitCode.OK
    # read-only: `sudo ocr-daemon status` must not create or own anything in the service's state
    # folder (SQLite itself gives the -wal/-shm files a root process creates to the journal's owner)
    max_attempts = cfg.daemon.max_attempts if cfg is not None else None
    if shared and cfg is not None:
        from daemon.journal.factory import open_journal

        journal = open_journal(cfg, readonly=True)
    else:
        journal = Journal(state_dir, readonly=True)
    try:
        summary = status_summary(journal, max_attempts)
        fails = journal.recent_failures(10)
        progress = journal.progress()
    finally:
        journal.close()
    if args.json:
        print(json.dumps(summary, indent=2))
        return ExitCode.OK
    counts = summary["counts"]
    print(f"journal: {journal.path}")
    for state in DocState:
        print(f"  {state.value:<11} {counts.get(state.value, 0)}")
    size = summary.get("state_size")
    if size:
        mib = 1 << 20
        line = f"state folder: journal {size['journal_bytes'] / mib:.1f} MiB" if size.get("journal_bytes") is not None else "state folder:"
        if "raw_bytes" in size:
            line += (f"; raw/ {size['raw_bytes'] / mib:.1f} MiB ({size['raw_entries']} entries), backups/"
                     f" {size['backups_bytes'] / mib:.1f} MiB as of {datetime.fromtimestamp(size['measured']):%Y-%m-%d %H:%M}"
                     " (daemon.keep_raw_days, daemon.maintenance_interval)")
        print(line)
    if progress:
        print("in progress:")
        for p in progress:
            total = "?" if p.pages_total is None else str(p.pages_total)
            eta = f", ETA {format_duration(p.eta_s)}" if p.eta_s is not None else ""
            resumed = f" ({p.resumed} resumed)" if p.resumed else ""
            held = next((f" [{i['held_by']}]" for i in summary["in_progress"] if i["id"] == p.doc_id and "held_by" in i), "")
            print(f"  {p.tag} {for_log(p.path.name)}: {p.pages_done}/{total} pages{resumed}, {p.pages_per_s:.2f} pages/s{eta}{held}")
    if "daemons" in summary:
        print("daemons of this journal:")
        for d in summary["daemons"]:
            seen = format_duration(d["heartbeat_age_seconds"])
            holding = f", holding {', '.join(f'doc-{i}' for i in d['holding'])}" if d["holding"] else ""
            print(f"  {d['host']} pid {d['pid']} ({d['state_dir']}): {d['state']}, last heartbeat {seen} ago, "
                  f"{d['pages_per_s']:.2f} pages/s, {d['pages_done']} pages done{holding}")
    if summary["retrying"]:
        print("retrying (each failed try counts towards daemon.max_attempts):")
        now = time.time()
        for r in summary["retrying"]:
            of = f" of {r['max_attempts']}" if r["max_attempts"] else ""
            wait = r["next_try"] - now
            when = f"next try in {format_duration(wait)}" if wait > 0 else "being tried again now"
            print(f"  doc-{r['id']} {for_log(Path(r['path']).name)}: attempt {r['attempts']}{of} failed, {when}: {for_log(r['error'] or '')}")
    if summary.get("waiting_for_space"):
        print("waiting for a full or read-only destination (not counted as tries; they go on when it can be written):")
        now = time.time()
        for r in summary["waiting_for_space"]:
            wait = r["next_try"] - now
            when = f"next try in {format_duration(wait)}" if wait > 0 else "being tried again now"
            print(f"  doc-{r['id']} {for_log(Path(r['path']).name)}: {when}: {for_log(r['error'] or '')}")
    if summary["recent_done"]:
        print("recently done (route: outputs' folder; where the original is now):")
        for d in summary["recent_done"]:
            print(f"  doc-{d['id']} {for_log(Path(d['path']).name)}: {d['route']}: {for_log(d['outputs_folder'] or '')}; "
                  f"{for_log(source_now(d))}")
    if fails:
        print("recent failures:")
        for f in fails:
            print(f"  doc-{f.id} {for_log(f.path.name)}: {for_log(f.error or '')}")
            if f.final_path:
                print(f"      now at {for_log(f.final_path)}")
    if any(summary["hooks"][k] for k in ("pending", "failed", "delivered")):  # else not even the import
        from daemon.service.hooks import status_lines

        for line in status_lines(summary["hooks"]):
            print(line)
    return ExitCode.OK


def source_now(d: dict[str, object]) -> str:
    """Where a finished document's original is (``recent_done``), in words."""
    now = d["source_now"]
    if now is None:
        return "original deleted"
    return "original kept" if now == d["path"] else f"original -> {now}"


def cmd_requeue(args: argparse.Namespace) -> int:
    from daemon.journal.store import Journal, journal_exists, journal_path
    from daemon.service.sources import restore

    state_dir = state_dir_of(args.config)
    try:
        cfg = load_config(args.config)
    except ConfigError:
        cfg = None
    if cfg is not None and cfg.daemon.journal_url:  # the shared journal (docs/scaling.md)
        from daemon.journal.factory import open_journal

        journal = open_journal(cfg)
    elif not journal_exists(state_dir):  # nothing was ever journaled: create nothing
        print(f"no journal at {journal_path(state_dir)}: nothing to requeue", file=sys.stderr)
        return ExitCode.OK if args.failed else ExitCode.FAILURES
    else:
        journal = Journal(state_dir)
    paths = [Path(os.path.abspath(p)) for p in args.files]
    if args.failed:  # only failed rows whose file is in the failed folder (issue 33: never another row)
        from daemon.fsio import is_within

        failed_dir = os.path.abspath(cfg.daemon.failed_dir) if cfg is not None else None
        rows = [r for r in journal.recent_failures(10**9) if r.final_path is not None and os.path.lexists(r.final_path)
                and (failed_dir is None or is_within(os.path.abspath(r.final_path), failed_dir))]
    else:
        rows = [r for p in paths if (r := journal.find(p))]
    if not args.failed:
        for p in paths:
            if journal.find(p) is None:
                print(f"{for_log(p)}: not in the journal", file=sys.stderr)
    n = 0
    for row in rows:
        queued, msg = restore(journal, row)  # the failed folder's move and note undone
        if msg:
            print(msg, file=sys.stderr)
        if queued:
            print(f"doc-{row.id}: queued again ({for_log(row.path.name)})")
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
    # First: before any command imports Tesseract or starts a render worker (daemon.procenv says why).
    procenv.apply()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command not in ("run",):
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    func = getattr(args, "_run", None) or COMMANDS[args.command]
    try:
        code = int(func(args))
        sys.stdout.flush()  # a closed pipe shows here, not at exit (where it would be a traceback)
        return code
    except BrokenPipeError:
        return _broken_pipe()
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


def _broken_pipe() -> int:
    """The reader of stdout went away (``| head``): stop quietly. stdout is pointed at /dev/null
    so the interpreter's final flush of what is still buffered cannot fail again at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
