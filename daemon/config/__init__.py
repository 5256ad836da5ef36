"""``rules.yaml``: typed configuration, split like borgmatic's: load -> normalise -> validate.

Contract:
- ``load_config(path)`` returns a validated ``Config`` or raises ``ConfigError`` listing *every*
  problem at once, each as ``FILE:LINE key.path: message`` (borgmatic style), the checks across
  sections (a route's unknown doctype or inbox) included whatever else is wrong.
- ``parse_config_text(text, filename, base_dir)``: the same for text (tests, ``route --explain``).
- ``check_config`` (the CLI command) = load + ``filesystem_problems`` + ``config_warnings``.
- A file without a ``doctypes:`` section gets the shipped doctypes (``doctypes.yaml`` here).
- Relative paths (state_dir, failed_dir, inbox paths, destination/archive templates) are resolved
  against the folder holding the config file.

The stages, one module each:

- :mod:`daemon.config.schema`: the pydantic models, the languages, the formats (from the
  writers' registry), template placeholders; the ``daemon:`` section's model is in
  :mod:`daemon.config.daemon_schema`, the endpoint's in :mod:`daemon.config.http_schema`.
- :mod:`daemon.config.load`: file -> text -> YAML data with the line of every key (size and
  alias-bomb limits, ``safe_load`` semantics only).
- :mod:`daemon.config.normalise`: whole-file defaults (the shipped doctypes) and path resolution.
- :mod:`daemon.config.validate`: models + cross-section checks, every error at once; warnings;
  filesystem checks.

This module re-exports the public names, so ``from daemon.config import Config, load_config``
works as before the split.
"""

from __future__ import annotations

from pathlib import Path

from daemon.config.daemon_schema import DaemonCfg
from daemon.config.http_schema import HttpCfg
from daemon.config.load import LoadedYaml, parse_yaml, read_config_file
from daemon.config.normalise import resolve_paths, shipped_doctypes
from daemon.config.schema import (
    DEFAULT_CONFIG_PATH,
    DEFAULT_ROUTE,
    FORMATS,
    INPUT_SUFFIXES,
    LANGUAGES,
    TEMPLATE_FIELDS,
    Config,
    DoctypeCfg,
    EngineCfg,
    EngineDebugCfg,
    FeatureMatchers,
    Format,
    InboxCfg,
    Lang,
    LangOrUnknown,
    OpenAICfg,
    PageGuardsCfg,
    PagesRange,
    RegexMatcher,
    RouteCfg,
    RouteMatch,
    SamplingCfg,
    TesseractCfg,
    VllmCfg,
    template_root,
)
from daemon.config.validate import config_warnings, filesystem_problems, validate

__all__ = [
    "DEFAULT_CONFIG_PATH",
    "DEFAULT_ROUTE",
    "FORMATS",
    "INPUT_SUFFIXES",
    "LANGUAGES",
    "TEMPLATE_FIELDS",
    "Config",
    "DaemonCfg",
    "DoctypeCfg",
    "EngineCfg",
    "EngineDebugCfg",
    "FeatureMatchers",
    "Format",
    "HttpCfg",
    "InboxCfg",
    "Lang",
    "LangOrUnknown",
    "LoadedYaml",
    "OpenAICfg",
    "PageGuardsCfg",
    "PagesRange",
    "RegexMatcher",
    "RouteCfg",
    "RouteMatch",
    "SamplingCfg",
    "TesseractCfg",
    "VllmCfg",
    "config_warnings",
    "filesystem_problems",
    "load_config",
    "parse_config_text",
    "shipped_doctypes",
    "template_root",
]


def parse_config_text(text: str, filename: str = "rules.yaml", base_dir: Path | None = None) -> Config:
    """Parse and validate config text. Raises ``ConfigError`` with every problem found."""
    cfg = validate(parse_yaml(text, filename))
    if base_dir is not None:
        resolve_paths(cfg, base_dir)
    return cfg


def load_config(path: Path | str) -> Config:
    """Load and validate ``path``. Raises ``ConfigError`` (never returns a half-valid config)."""
    path = Path(path)
    cfg = parse_config_text(read_config_file(path), filename=str(path), base_dir=path.resolve().parent)
    cfg.source_path = path
    return cfg
