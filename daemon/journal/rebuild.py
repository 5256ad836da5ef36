"""Rebuilding a lost journal from what the daemon left on disk: the outputs' sidecars and the
failed folder's notes.

Contract:
- ``from_disk(journal, cfg)`` walks the folders the config names for outputs -- every route's
  destination root (the inbox folders for ``beside``) and archive root -- for sidecars (the
  ``<stem>.json`` output: ``sha256``, ``source``, ``outputs``, ``document_id``...), and the
  failed folder for ``<name>.error.txt`` notes, and records each finished document the journal
  lacks (``Journal.add_rebuilt``): done/duplicate from a sidecar, failed from a note. Files done
  stay done (a kept source is found by its content at its next admission), archived sources
  are never taken as input again, ``ocr-daemon requeue`` finds failed files. Idempotent: a
  document the journal has finished is left alone, so it is safe on a journal restored from an
  older backup (it adds what finished since).
- A JSON file is taken as a sidecar only if it lists itself among its ``outputs`` (every sidecar
  the daemon writes does): other JSON in those folders is not mistaken for one. Files that
  cannot be read or parsed are counted and skipped, never fatal.
- Queued and in-flight documents are not rebuilt: their sources are still in an inbox and are
  admitted again by the next scan.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from daemon.config import Config, template_root
from daemon.fsio import error_note_name, is_within
from daemon.journal.store import Journal, RebuiltDoc
from daemon.models import DocState
from daemon.names import display

log = logging.getLogger(__name__)

#: Sidecars are small (a few KB; one with hundreds of pages of facts ~1 MB): larger JSON files
#: are not read.
MAX_SIDECAR_BYTES = 16 << 20
NOTE_TAIL = ".error.txt"
#: Documents recorded per journal transaction (one sync each).
BATCH = 1000


@dataclass
class Report:
    """What ``from_disk`` found and did."""

    sidecars: int = 0  # sidecars found
    notes: int = 0  # failed-folder notes found
    added: int = 0  # documents recorded in the journal
    unreadable: int = 0  # files skipped: unreadable, not JSON, not a sidecar/note of ours
    seconds: float = 0.0

    def __str__(self) -> str:
        return (f"{self.added} document(s) added from {self.sidecars} sidecar(s) and {self.notes} failed-folder note(s)"
                f"{f', {self.unreadable} file(s) skipped' if self.unreadable else ''} in {self.seconds:.1f} s")


def output_roots(cfg: Config) -> list[Path]:
    """The fixed folders under which routes write outputs or archive sources (no root inside
    another: walking the outer one covers it). The state and failed folders are not included."""
    roots: set[Path] = set()
    for r in cfg.route_list():
        for t in (r.destination, r.archive_to):
            if t == "beside":
                roots.update(Path(os.path.abspath(i.path)) for i in cfg.inboxes)
            elif t:
                roots.add(Path(os.path.abspath(template_root(t))))
    return [r for r in sorted(roots) if not any(o != r and is_within(r, o) for o in roots)]


def from_disk(journal: Journal, cfg: Config) -> Report:
    """Record in ``journal`` the finished documents found on disk (see the module contract)."""
    t0 = time.monotonic()
    rep = Report()
    batch: list[RebuiltDoc] = []

    def take(doc: RebuiltDoc | None, note: bool = False) -> None:
        if doc is None:
            rep.unreadable += 1
            return
        rep.notes += note
        rep.sidecars += not note
        batch.append(doc)
        if len(batch) >= BATCH:
            rep.added += journal.add_rebuilt(batch)
            batch.clear()

    skip = [Path(os.path.abspath(cfg.daemon.state_dir)), Path(os.path.abspath(cfg.daemon.failed_dir))]
    for root in output_roots(cfg):
        for path in _files(root, skip, ".json"):
            take(_sidecar(path))
    failed = Path(os.path.abspath(cfg.daemon.failed_dir))
    if failed.is_dir():
        by_note = {error_note_name(p.name): p for p in _files(failed, [], "") if not p.name.endswith(NOTE_TAIL)}
        for note in _files(failed, [], NOTE_TAIL):
            take(_note(note, by_note.get(note.name)), note=True)
    rep.added += journal.add_rebuilt(batch)
    rep.seconds = time.monotonic() - t0
    return rep


def _files(root: Path, skip: list[Path], suffix: str) -> Iterator[Path]:
    """Regular files under ``root`` ending in ``suffix`` (no links followed, ``skip`` folders left out)."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not any(is_within(os.path.join(folder, d), s) for s in skip)]
        for f in files:
            if f.endswith(suffix):
                p = Path(folder) / f
                if p.is_file() and not p.is_symlink():
                    yield p


def _sidecar(path: Path) -> RebuiltDoc | None:
    try:
        if path.stat().st_size > MAX_SIDECAR_BYTES:
            return None
        side = json.loads(path.read_bytes())
        if not isinstance(side, dict) or display(path) not in side.get("outputs", ()):
            return None
        source = _path(side["source"])
        archived = _path(side["archived_to"]) if side.get("archived_to") else None
        dup = side.get("duplicate_of")
        pages = side.get("pages")
        return RebuiltDoc(
            id=int(side["document_id"]), path=source, inbox=str(side.get("inbox") or ""), size=int(side.get("size") or 0),
            sha256=str(side["sha256"]), state=DocState.DUPLICATE if dup else DocState.DONE,
            outputs=tuple(_path(o) for o in side["outputs"]),
            final_path=archived or (source if os.path.lexists(source) else None),
            language=_str(side.get("language")), doctype=_str(side.get("doctype")), route=_str(side.get("route")),
            pages=len(pages) if isinstance(pages, list) else None,
            duplicate_of=int(dup["document_id"]) if isinstance(dup, dict) and dup.get("document_id") else None,
            created=_when(side.get("processed_at"), path),
        )
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _note(note: Path, failed_file: Path | None) -> RebuiltDoc | None:
    """A failed document from its ``.error.txt`` (``sources.Sources.fail`` writes it)."""
    try:
        text = note.read_text(encoding="utf-8")
        fields = dict(re.findall(r"^(Reason|Original location|Inbox|SHA-256): (.*)$", text, re.MULTILINE))
        return RebuiltDoc(
            id=None, path=_path(fields["Original location"]), inbox=fields.get("Inbox", ""),
            size=failed_file.stat().st_size if failed_file else 0, sha256=fields["SHA-256"], state=DocState.FAILED,
            final_path=failed_file, error=fields.get("Reason"), created=note.stat().st_mtime,
        )
    except (OSError, ValueError, KeyError):
        return None


def _path(s: Any) -> Path:
    """A path as a sidecar shows it (``names.display``: undecodable bytes as ``\\xNN``), back to
    the path. Only escapes of bytes >= 0x80 are undone: ``display`` makes no others."""
    raw = re.sub(rb"\\x([89a-f][0-9a-f])", lambda m: bytes([int(m.group(1), 16)]), str(s).encode("utf-8"))
    return Path(os.fsdecode(raw))


def _str(v: Any) -> str | None:
    return None if v is None else str(v)


def _when(iso: Any, path: Path) -> float:
    try:
        return datetime.fromisoformat(str(iso)).timestamp()
    except ValueError:
        return path.stat().st_mtime
