"""``ocr-daemon status``: documents by state, in progress (pages, rate, ETA), the daemons of a
shared journal, retries, documents waiting for space, recently done, recent failures and hook
deliveries; ``--json``: the same summary as ``/status`` starts with (``journal.rows.status_summary``).

Contract: ``add_arguments(p)`` / ``run(args) -> exit code`` (0). Needs only the state folder
(``common.state_dir_of``: a rules file that does not validate is read leniently, with a warning).
Read-only: never creates a journal or its folder, and opens an existing one read-only (``sudo
ocr-daemon status`` must not own anything in the service's state folder); a shared journal
(``daemon.journal_url``) is read through ``journal.factory.open_journal``.
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import datetime
from pathlib import Path

from daemon.commands.common import add_config_option, state_dir_of
from daemon.errors import ExitCode
from daemon.models import format_duration
from daemon.names import for_log


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_config_option(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")


def run(args: argparse.Namespace) -> int:
    from daemon.journal.store import Journal, journal_exists, journal_path, status_summary
    from daemon.models import DocState

    state_dir, cfg = state_dir_of(args.config)
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
