"""``ocr-daemon check-config``: validate the rules file and this machine's side of it (inboxes,
hook programs, permissions, the HTTP endpoint); report every error at once.

Contract: ``add_arguments(p)`` / ``run(args) -> exit code``. Errors on stderr, one a line, then
``FILE: N error(s)``, exit 2 (``ExitCode.CONFIG``); else warnings (``warning: ...``) and notes on
who can reach the HTTP endpoint (``note: ...``) on stderr and ``FILE: OK (counts)`` on stdout,
exit 0.
"""

from __future__ import annotations

import argparse
import sys

from daemon.commands.common import add_config_option
from daemon.config import config_warnings, filesystem_problems, load_config
from daemon.config.validate import http_notes, http_problems
from daemon.errors import ConfigError, ExitCode


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_config_option(p)


def run(args: argparse.Namespace) -> int:
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
