"""Normalising ``rules.yaml``: defaults that need more than a field default, and paths.

Contract:
- ``normalise(data)`` returns a new mapping with the defaults that depend on the whole file
  filled in, before validation. Today one: a file with no ``doctypes:`` key gets the shipped
  doctypes (``doctypes.yaml`` in this package, the same section as the shipped rules.yaml).
  ``doctypes: {}`` written out keeps no doctypes (every document is ``other``); ``check-config``
  warns when routes then match on ``doctype``.
- ``shipped_doctypes()`` returns a fresh copy of the packaged doctypes data on every call.
- ``resolve_paths(cfg, base)`` makes relative paths (state_dir, failed_dir, inbox paths,
  destination/archive/batch_archive templates, the http socket and token file) absolute against ``base``, the folder of the config file.
"""

from __future__ import annotations

import copy
import functools
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from daemon.config.schema import Config

DOCTYPES_RESOURCE = "doctypes.yaml"


@functools.cache
def _shipped_doctypes_cached() -> dict[str, Any]:
    text = resources.files("daemon.config").joinpath(DOCTYPES_RESOURCE).read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    return dict(data["doctypes"])


def shipped_doctypes() -> dict[str, Any]:
    """The packaged default doctypes (``{name: raw mapping}``), a copy the caller may change."""
    return copy.deepcopy(_shipped_doctypes_cached())


def normalise(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with whole-file defaults filled in (see the module contract); ``data`` is not changed."""
    out = dict(data)
    if "doctypes" not in out:
        out["doctypes"] = shipped_doctypes()
    return out


def _resolve(p: Path, base: Path) -> Path:
    p = p.expanduser()
    return p if p.is_absolute() else (base / p)


def _resolve_tmpl(t: str, base: Path) -> str:
    if t == "beside":
        return t
    return t if Path(t).expanduser().is_absolute() else str(base / t)


def resolve_paths(cfg: Config, base: Path) -> None:
    """Make the config's relative paths absolute against ``base`` (in place)."""
    cfg.daemon.state_dir = _resolve(cfg.daemon.state_dir, base)
    cfg.daemon.failed_dir = _resolve(cfg.daemon.failed_dir, base)
    if cfg.daemon.http is not None and (sock := cfg.daemon.http.unix_path()) is not None:
        cfg.daemon.http.listen = str(_resolve(sock, base))
    if cfg.daemon.http is not None and cfg.daemon.http.token_file is not None:
        cfg.daemon.http.token_file = _resolve(cfg.daemon.http.token_file, base)
    for ib in cfg.inboxes:
        ib.path = _resolve(ib.path, base)
        if ib.batch_archive:
            ib.batch_archive = _resolve_tmpl(ib.batch_archive, base)
    for r in cfg.routes:
        r.destination = _resolve_tmpl(r.destination, base)
        if r.archive_to:
            r.archive_to = _resolve_tmpl(r.archive_to, base)
