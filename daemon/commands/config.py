"""``ocr-daemon config schema|show``: the rules.yaml JSON Schema, or the effective config.

Contract: ``add_arguments(p)`` adds the two actions; ``run(args) -> exit code`` (0).
``schema`` prints the JSON Schema of rules.yaml (``reference.schema_text``, the same text as
docs/rules.schema.json); ``show [--config F]`` prints the effective config (defaults and the
shipped doctypes filled in, paths resolved, what the automatic settings come to on this machine)
as YAML that loads back to the same config (``reference.effective_yaml``). An invalid file is a
``ConfigError`` (exit 2, from ``daemon.cli.main``).
"""

from __future__ import annotations

import argparse
import sys

from daemon.commands.common import add_config_option
from daemon.config import load_config
from daemon.config.reference import effective_yaml, in_force, schema_text


def add_arguments(p: argparse.ArgumentParser) -> None:
    actions = p.add_subparsers(dest="config_command", required=True, metavar="ACTION")
    actions.add_parser("schema", help="print the JSON Schema of rules.yaml (for editors and validators)")
    add_config_option(actions.add_parser("show", help="print the effective config, every default filled in, as YAML"))


def run(args: argparse.Namespace) -> int:
    if args.config_command == "schema":
        sys.stdout.write(schema_text())
        return 0
    cfg = load_config(args.config)
    sys.stdout.write(effective_yaml(cfg, in_force(cfg)))
    return 0
