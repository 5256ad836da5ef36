"""``ocr-daemon journal rebuild|restore``: repair the journal with the daemon stopped (what each
does: ``daemon.journal.repair``).

Contract: ``add_arguments(p)`` / ``run(args) -> exit code``. What was done is printed on stdout
as it is done; a refusal (a shared journal: exit 2) or nothing usable to restore (exit 4) is one
message on stderr; another process holding the state folder is exit 5 (``daemon.cli.main``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from daemon.commands.common import add_config_option
from daemon.errors import ExitCode
from daemon.journal.repair import RepairError, repair


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of the ``journal`` subcommand."""
    p.add_argument("action", choices=["rebuild", "restore"],
                   help="rebuild: from the outputs' sidecars (a damaged journal is kept beside the new one); "
                        "restore: put the newest automatic backup back, then add what finished since")
    add_config_option(p)
    p.add_argument("--backup", type=Path, help="restore: this backup instead of the newest (ls STATE_DIR/backups)")


def run(args: argparse.Namespace) -> int:
    """Run ``journal rebuild|restore``; returns the exit code."""
    try:
        repair(args.config, args.action, args.backup, print)
    except RepairError as e:
        print(e, file=sys.stderr)
        return e.exit_code
    return ExitCode.OK
