"""``ocr-daemon requeue``: queue failed documents (``--failed``) or the given files again.

Contract: ``add_arguments(p)`` / ``run(args) -> exit code``. ``--failed`` takes only failed rows
whose file is in the failed folder (never another row, issue 33); each row goes back through
``service.sources.restore`` (the failed folder's move and note undone). Prints each document
queued and the count; files not in the journal are named on stderr. Exit 0 when something was
queued or with ``--failed``, else 1. Without any journal it creates nothing. A running daemon
picks the rows up at its next rescan.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from daemon.commands.common import add_config_option, state_dir_of
from daemon.errors import ExitCode
from daemon.names import for_log


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_config_option(p)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--failed", action="store_true", help="every failed document")
    g.add_argument("files", nargs="*", type=Path, default=[])


def run(args: argparse.Namespace) -> int:
    from daemon.journal.store import Journal, journal_exists, journal_path
    from daemon.service.sources import restore

    state_dir, cfg = state_dir_of(args.config)
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
