"""Rows as the journal gives them out, and the helpers that encode/decode its columns.

Contract:
- ``JournalRow`` (frozen; paths, state and JSON columns decoded) is what ``Journal`` returns;
  ``Admission`` is what ``admit`` decided (finished pages are ``daemon.pagerecord.PageResult``).
- ``db_path``/``from_db_path`` store any Linux path (also names that are not valid UTF-8) as
  journal text and back, exactly.
- ``status_summary`` is what ``ocr-daemon status --json`` and ``/status`` start with.
- No SQL here: every statement against the journal's rows is in the journal's parts (``states``,
  ``pagerecords``, ``lookups``, ``upkeep``, ``leases``: ``base.py``); the row types only decode.
"""

from __future__ import annotations

import base64
import enum
import json
import os
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daemon.journal.retention import recorded_size
from daemon.models import DocState, Document


def db_path(p: Path | str | None) -> str | None:
    """A path as journal text. Names that are not valid UTF-8 (legal on Linux) are stored as
    ``b64:<base64 of the raw bytes>`` so they round-trip exactly; SQLite text must be UTF-8."""
    if p is None:
        return None
    raw = os.fsencode(p)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "b64:" + base64.b64encode(raw).decode("ascii")
    return "b64:" + base64.b64encode(raw).decode("ascii") if text.startswith("b64:") else text


def from_db_path(s: str | None) -> Path | None:
    if s is None:
        return None
    if s.startswith("b64:"):
        return Path(os.fsdecode(base64.b64decode(s[4:])))
    return Path(s)


def _dump_paths(paths: list[Path]) -> str:
    # ensure_ascii (the default) escapes lone surrogates, so undecodable names round-trip.
    return json.dumps([os.fsdecode(p) for p in paths])


class AdmitAction(enum.StrEnum):
    """What ``admit`` did with a file."""

    QUEUED = "queued"  # new: queued for processing
    KNOWN = "known"  # already queued/processing/done/failed: nothing to do
    DUPLICATE = "duplicate"  # same content as an earlier done document: queued to be linked


@dataclass(frozen=True)
class Admission:
    """What ``admit`` decided about a file."""

    action: AdmitAction
    document: Document | None
    duplicate_of: int | None = None


@dataclass(frozen=True)
class JournalRow:
    """One ``documents`` row, decoded: paths as ``Path``, the state as ``DocState``, JSON columns
    as tuples/mappings. Frozen: a snapshot; change the journal through ``Journal`` methods."""

    id: int
    path: Path
    inbox: str
    size: int
    mtime: float
    sha256: str
    state: DocState
    attempts: int
    strikes: int
    not_before: float
    error: str | None
    language: str | None
    doctype: str | None
    route: str | None
    pages: int | None
    outputs: tuple[Path, ...]
    planned: tuple[Path, ...]
    final_path: Path | None
    duplicate_of: int | None
    timings: Mapping[str, float]
    created: float
    updated: float
    total_pages: int | None = None
    started: float | None = None

    @property
    def tag(self) -> str:
        return f"doc-{self.id}"

    @property
    def document(self) -> Document:
        return Document(
            id=self.id, path=self.path, inbox=self.inbox, size=self.size, mtime=self.mtime,
            sha256=self.sha256, attempts=self.attempts, state=self.state,
        )


@dataclass(frozen=True)
class RebuiltDoc:
    """A finished document as ``daemon.journal.rebuild`` found it on disk (a sidecar or a failed
    folder's note), for ``Journal.add_rebuilt``."""

    id: int | None  # its document id then (kept where free: raw/<id> still matches); None: unknown
    path: Path  # where it was dropped
    inbox: str
    size: int
    sha256: str
    state: DocState  # done, duplicate or failed
    outputs: tuple[Path, ...] = ()
    final_path: Path | None = None  # where the source is now (kept, archived, failed folder)
    language: str | None = None
    doctype: str | None = None
    route: str | None = None
    pages: int | None = None
    duplicate_of: int | None = None
    error: str | None = None
    created: float = 0.0


def _json_paths(v: str | None) -> tuple[Path, ...]:
    try:
        return tuple(Path(p) for p in json.loads(v)) if v else ()
    except (TypeError, ValueError):
        return ()


def _row(row: sqlite3.Row) -> JournalRow:
    keys = row.keys()
    try:
        timings = {str(k): float(v) for k, v in json.loads(row["timings"] or "{}").items()}
    except (TypeError, ValueError, AttributeError):
        timings = {}
    return JournalRow(
        id=int(row["id"]),
        path=from_db_path(row["path"]) or Path(),
        inbox=row["inbox"],
        size=int(row["size"]),
        mtime=float(row["mtime"]),
        sha256=row["sha256"],
        state=DocState(row["state"]),
        attempts=int(row["attempts"]),
        strikes=int(row["strikes"]),
        not_before=float(row["not_before"]),
        error=row["error"],
        language=row["language"],
        doctype=row["doctype"],
        route=row["route"],
        pages=None if row["pages"] is None else int(row["pages"]),
        outputs=_json_paths(row["outputs"]),
        planned=_json_paths(row["planned"]),
        final_path=from_db_path(row["final_path"]),
        duplicate_of=None if row["duplicate_of"] is None else int(row["duplicate_of"]),
        timings=timings,
        created=float(row["created"]),
        updated=float(row["updated"]),
        total_pages=row["total_pages"] if "total_pages" in keys else None,
        started=row["started"] if "started" in keys else None,
    )


def _doc(row: sqlite3.Row) -> Document:
    """The ``Document`` of a whole ``documents`` row (``SELECT *``)."""
    return _row(row).document


#: The start of the ``error`` of a document that waits for its destination to take writes again
#: (full, over quota, read-only: ``errors.NoSpaceError``); such a row has no strike for it.
WAITING_FOR_SPACE = "waiting for the destination: "

#: Finished documents listed by ``status``, ``/status`` and the status page ("where did my file go?").
RECENT_DONE = 10


def finished_json(r: JournalRow) -> dict[str, Any]:
    """A finished document for ``recent_done``: its route, the folder its outputs went to, and
    where its original is now (``source_now``: its own path when kept, null when deleted)."""
    folders = sorted({str(o.parent) for o in r.outputs})
    return {
        "id": r.id, "path": str(r.path), "state": r.state.value, "route": r.route, "doctype": r.doctype,
        "language": r.language, "pages": r.pages, "finished": round(r.updated, 3),
        "outputs_folder": folders[0] if len(folders) == 1 else (os.path.commonpath(folders) if folders else None),
        "outputs": [str(o) for o in r.outputs],
        "source_now": None if r.final_path is None else str(r.final_path),
    }


def status_summary(journal: Any, max_attempts: int | None = None) -> dict[str, Any]:
    """What ``ocr-daemon status --json`` prints (and ``/status`` of the HTTP endpoint starts
    with): documents by state, the documents in progress with their page progress, the documents
    waiting for another try (attempt count, last error, next try; ``max_attempts`` when the
    config is known), those waiting for a full or read-only destination (uncounted), the ten most
    recent failures with their reasons, and the hooks' deliveries (pending and failed), the ten
    documents finished most recently (``recent_done``: route, outputs' folder, where the original
    went); with a shared journal, every daemon of it (host, pid, last heartbeat,
    pages/s) and which one holds each document in progress (``held_by``). Read-only."""
    from daemon.journal import deliveries

    holders = journal.holders() if hasattr(journal, "holders") else {}  # a shared journal: who holds what
    out = {
        "counts": journal.counts(),
        "in_progress": [{**p.to_json(), **({"held_by": holders[p.doc_id]["owner"]} if p.doc_id in holders else {})}
                        for p in journal.progress()],
        "retrying": [
            {"id": r.id, "path": str(r.path), "attempts": r.strikes, "max_attempts": max_attempts, "error": r.error,
             "next_try": round(r.not_before, 3), "state": r.state.value}
            for r in journal.retrying()
        ],
        "waiting_for_space": [
            {"id": r.id, "path": str(r.path), "error": r.error, "next_try": round(r.not_before, 3)}
            for r in journal.waiting_for_space()
        ],
        "recent_failures": [
            {"id": f.id, "path": str(f.path), "error": f.error,
             "final_path": None if f.final_path is None else str(f.final_path)}
            for f in journal.recent_failures(10)
        ],
        "recent_done": [finished_json(r) for r in journal.recent_finished(RECENT_DONE)],
        "hooks": deliveries.summary(journal),  # routes[].on_done (daemon/journal/deliveries.py)
    }

    out["state_size"] = recorded_size(journal)  # as of the last retention run; the journal's bytes live
    if hasattr(journal, "daemons"):  # every daemon of a shared journal (pgstore.py)
        out["daemons"] = journal.daemons()
    return out
