"""``ocr-daemon config schema|show``: the rules.yaml JSON Schema, or the effective config.

Contract: ``add_arguments(p)`` adds the two actions; ``run(args) -> exit code`` (0).
``schema`` prints the JSON Schema of rules.yaml (``reference.schema_text``, the same text as
docs/rules.schema.json); ``show [--config F]`` prints the effective config (defaults and the
shipped doctypes filled in, paths resolved, what the automatic settings come to on this machine)
as YAML that loads back to the same config (``reference.effective_yaml``; ``in_force(cfg)``, the
automatic settings' values, builds the engine object to ask it). An invalid file is a
``ConfigError`` (exit 2, from ``daemon.cli.main``).
"""

from __future__ import annotations

import argparse
import sys

from daemon.commands.common import add_config_option
from daemon.config import load_config
from daemon.config.reference import effective_yaml, schema_text
from daemon.config.schema import Config


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


def in_force(cfg: Config) -> dict[str, str]:
    """What the automatic settings come to on this machine (``config show``): the engine ``auto``
    picks, and the counts that 0 means (the service's own rules: ``Workers.count``,
    ``Pipeline``'s render workers, the Tesseract engine's threads). Builds the engine object
    (cheap) but starts nothing."""
    import os

    from daemon.engines import create_engine, resolve_kind

    notes = {"engine.kind": resolve_kind(cfg)} if cfg.engine.kind == "auto" else {}
    try:
        engine = create_engine(cfg)
    except Exception as e:  # noqa: BLE001 - a note only: the engine's own start reports it properly
        notes["daemon.workers"] = f"unknown (the engine cannot be built here: {e})"
        return notes
    d = cfg.daemon
    if d.workers == 0:
        notes["daemon.workers"] = f"{max(4, int(engine.max_in_flight) // 2)} (auto)"
    if d.render_workers == 0:
        notes["daemon.render_workers"] = f"{max(1, (os.cpu_count() or 2) // 2)} (auto)"
    threads = getattr(engine, "threads", None)
    if engine.name == "tesseract" and cfg.engine.tesseract.threads == 0 and threads:
        notes["engine.tesseract.threads"] = f"{threads} (auto)"
    return notes
