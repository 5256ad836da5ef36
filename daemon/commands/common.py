"""What several commands share: the ``--config`` option, loading the rules file with its warnings
logged, and the state folder of a rules file that may not validate.

Contract:
- ``add_config_option(p)``: ``--config PATH`` (default ``$OCR_DAEMON_CONFIG`` or
  ``DEFAULT_CONFIG_PATH``, read when the parser is built).
- ``load_logged(path) -> Config``: ``load_config`` (raises ``ConfigError``), then every config
  warning logged at WARNING.
- ``state_dir_of(path) -> tuple[Path, Config | None]``: ``daemon.state_dir`` and the config of a
  valid file, or the state folder read leniently from one that does not validate (a warning on
  stderr says so) and ``None``: ``status`` and ``requeue`` need nothing else, and the file is
  parsed once. A file that is not even YAML (or cannot be read) is still a ``ConfigError``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from daemon.config import DEFAULT_CONFIG_PATH, Config, DaemonCfg, config_warnings, load_config
from daemon.errors import ConfigError

log = logging.getLogger(__name__)


def add_config_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config",
        type=Path,
        default=Path(os.environ.get("OCR_DAEMON_CONFIG", str(DEFAULT_CONFIG_PATH))),
        help=f"rules file (default: $OCR_DAEMON_CONFIG or {DEFAULT_CONFIG_PATH})",
    )


def load_logged(path: Path) -> Config:
    cfg = load_config(path)
    for w in config_warnings(cfg):
        log.warning("%s", w)
    return cfg


def state_dir_of(config: Path) -> tuple[Path, Config | None]:
    """See the module contract."""
    try:
        cfg = load_config(config)
        return cfg.daemon.state_dir, cfg
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
        return state, None
