"""Checks of a valid config against this machine: what ``check-config`` adds to the model's
errors, and the inbox-access warnings the daemon logs at start.

Contract:
- ``machine_problems(cfg) -> (errors, warnings)``, each ``FILE:LINE key.path: message`` (the
  line read again from the file; 1 when it cannot be):
  errors: an ``on_done.exec`` program that does not exist or is not executable (every delivery
  would fail); warnings: an inbox folder that does not exist (the daemon creates it at start: a
  typo is caught here rather than watched in silence), ``archive_to`` on a route whose ``source``
  is not ``archive`` (it is ignored), and ``inbox_access`` below.
- ``inbox_access(cfg)``: one warning per inbox subtree that this process cannot write into (the
  daemon moves and writes there), and per subtree of a group-writable inbox that the inbox's
  group cannot drop files into (not group-writable, or another group: typically a folder made
  by root). A subtree is reported at its top, not for every folder below it; at most
  ``MAX_FOLDERS`` folders are looked at per inbox.
- Nothing here raises for a folder it cannot read: that is itself a warning.
"""

from __future__ import annotations

import contextlib
import grp
import os
import shutil
import stat
from pathlib import Path
from typing import Any

from daemon.config.load import line_for, parse_yaml, read_config_file
from daemon.config.schema import Config
from daemon.errors import ConfigError

#: Folders looked at per inbox (a recursive inbox of a million folders must not stall the start).
MAX_FOLDERS = 5000


def machine_problems(cfg: Config) -> tuple[list[str], list[str]]:
    where = _Where(cfg)
    errors: list[str] = []
    warns: list[str] = []
    for i, ib in enumerate(cfg.inboxes):
        if not ib.path.exists():
            warns.append(where(("inboxes", i, "path"), f"{ib.path} does not exist; the daemon creates it at start "
                                                       "(setgid, group-writable) -- a typo?"))
    for i, r in enumerate(cfg.routes):
        if r.archive_to and r.source != "archive":
            warns.append(where(("routes", i, "archive_to"), f"ignored: the route's source is {r.source!r}; set "
                                                            "`source: archive` to move the originals there"))
        hook = r.on_done
        if hook is not None and hook.exec:
            prog = hook.exec[0]
            found = shutil.which(prog) if "/" not in prog else (prog if os.access(prog, os.X_OK) and
                                                                  os.path.isfile(prog) else None)
            if found is None:
                errors.append(where(("routes", i, "on_done", "exec", 0),
                                    f"{prog!r}: no such program{' on PATH' if '/' not in prog else ''} "
                                    "(or not executable); every delivery would fail"))
    warns += [where(("inboxes", i, "path"), w) for i, ib in enumerate(cfg.inboxes) for w in _access(ib.path, ib.recursive)]
    return errors, warns


def inbox_access(cfg: Config) -> list[str]:
    """The access warnings alone (the daemon logs them at start)."""
    return [f"inbox {ib.name!r}: {w}" for ib in cfg.inboxes for w in _access(ib.path, ib.recursive)]


def _access(root: Path, recursive: bool) -> list[str]:
    try:
        top = os.stat(root)
    except OSError:
        return []  # missing: reported (or created) elsewhere
    group_drops = bool(top.st_mode & stat.S_IWGRP)
    out: list[str] = []
    todo = [root]
    seen = 0
    while todo and seen < MAX_FOLDERS:
        d = todo.pop()
        seen += 1
        try:
            st = os.stat(d)
        except OSError as e:
            out.append(f"{d}: cannot look at it ({e.strerror})")
            continue
        bad = []
        if not os.access(d, os.W_OK | os.X_OK):
            bad.append(f"this process (uid {os.geteuid()}) cannot write in it")
        if group_drops and d != root:
            if st.st_gid != top.st_gid:
                bad.append(f"its group is {_group(st.st_gid)}, not the inbox's {_group(top.st_gid)}")
            elif st.st_mode & (stat.S_IWGRP | stat.S_IXGRP) != stat.S_IWGRP | stat.S_IXGRP:
                bad.append(f"group {_group(st.st_gid)} cannot drop files into it (mode {stat.S_IMODE(st.st_mode):o})")
        if bad:
            owner = f"{st.st_uid}:{st.st_gid}"
            out.append(f"{d} (owner {owner}, mode {stat.S_IMODE(st.st_mode):o}): {'; '.join(bad)} -- "
                       f"fix: chown -R {_user(top.st_uid)}:{_group(top.st_gid)} '{d}' && chmod -R g+ws,g+rwX '{d}'")
            continue  # the subtree is reported at its top
        if recursive:
            try:
                with os.scandir(d) as it:
                    todo += [Path(e.path) for e in it if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")]
            except OSError as e:
                out.append(f"{d}: cannot list it ({e.strerror})")
    return out


def _group(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def _user(uid: int) -> str:
    import pwd

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


class _Where:
    """``FILE:LINE key.path: message`` with the line read again from the rules file."""

    def __init__(self, cfg: Config) -> None:
        self.src = str(cfg.source_path or "rules.yaml")
        self.lines: dict[tuple[Any, ...], int] = {}
        if cfg.source_path is not None:
            with contextlib.suppress(ConfigError):
                self.lines = parse_yaml(read_config_file(cfg.source_path), self.src).lines

    def __call__(self, loc: tuple[Any, ...], message: str) -> str:
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
        return f"{self.src}:{line_for(loc, self.lines)} {path}: {message}"
