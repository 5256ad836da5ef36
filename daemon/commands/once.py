"""``ocr-daemon once FILE...``: process files now, several at once, as the daemon would.

Contract:

- ``add_arguments(p)`` / ``run(args)``: the command's options (``--engine``, ``--jsonl``,
  ``--hooks-wait``, ``--apply-source-action``, the files) and its entry, which loads the config
  (its warnings logged) and calls ``run_once``.
- ``run_once(cfg, files, engine_kind=None, jsonl=False, hooks_wait=60.0) -> exit code``. The files
  are admitted into the journal in the order given, each only when one of ``workers`` document
  slots is free (the daemon's own count, ``Service.worker_count``'s rule: ``daemon.workers``, or
  half the engine's page capacity and at least 4), and processed on that many threads through
  one ``Pipeline`` and one engine, so the engine sees pages of several files at once and every
  core is busy (one file after another left a core idle while a document opened, finished or
  ran its single page: 0.141 against 0.252 pages/s for ``run`` on a batch of 1-page files).
  Admitting lazily keeps an interrupted run's leftovers to the files in flight, as before.
- Output order is stable: each file's result (one ``--jsonl`` record, or the lines saying where
  its outputs went / why it failed) is printed in the order the files were given, as soon as it
  and every file before it are finished; only the main thread prints results.
- Progress (``OnceProgress``) is told of every document in flight: on a terminal one ``tqdm`` bar
  for the whole run (pages done of the pages known so far, files done of files given); otherwise
  plain lines on stderr per file, its first page, then at most every ``every`` seconds, and its
  last page. Progress callbacks come from the document threads; it locks.
- Scanner batches (docs/batches.md): a file of an inbox that splits them is split first (on the
  main thread, before it is admitted); its parts take its place in the order, each processed as
  its own document. A file the splitter cannot read is processed whole (and fails with its
  reason); one it could not split for another reason is a failure ("not split: ...").
- The journal is opened as ``run`` opens it (``journal.guard.open_state``): refused while a daemon
  uses this state folder.
- The files given stay where they are, done or failed (``Sources.in_place``), unless
  ``apply_source_action``: then the route's ``source`` action and the failed folder apply as in
  the daemon. The parts of a split scanner batch are the splitter's files, not the user's: their
  route's action applies (the batch's original goes where the inbox's batch settings say).
- Exit code: ``ExitCode.FAILURES`` when any file failed, is missing or busy; ``OK`` otherwise.
  On_done hooks of the files done run at the end (``hooks.run_for_once``).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from daemon.commands.common import add_config_option, load_logged
from daemon.commands.onceprogress import OnceProgress
from daemon.config import Config
from daemon.errors import ExitCode
from daemon.fsio import is_within

__all__ = ["add_arguments", "run", "run_once", "once_record", "inbox_for"]

#: Seconds the main thread waits for a free slot before it prints what finished meanwhile.
POLL = 0.2


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Arguments of ``ocr-daemon once``."""
    add_config_option(p)
    p.add_argument("--engine", choices=["tesseract", "vllm", "openai"], help="override engine.kind")
    p.add_argument("--jsonl", action="store_true", help="one JSON object per file on stdout (for scripts)")
    p.add_argument(
        "--hooks-wait", type=float, default=60.0, metavar="SECONDS",  # daemon.service.hooks.run_for_once says why
        help="run the routes' on_done hooks at the end, retrying for up to SECONDS (default 60); "
        "0: only journal them (the daemon delivers them at its next start)",
    )
    p.add_argument(
        "--apply-source-action", action="store_true",
        help="archive or delete each file as its route's `source` says, and move failed files to the failed "
        "folder, as the daemon does (default: the files given stay where they are)",
    )
    p.add_argument("files", nargs="+", type=Path)


def run(args: argparse.Namespace) -> int:
    """Run ``ocr-daemon once``; returns the exit code."""
    return run_once(load_logged(args.config), args.files, engine_kind=args.engine, jsonl=args.jsonl,
                    hooks_wait=args.hooks_wait, apply_source_action=args.apply_source_action)


def inbox_for(cfg: Config, path: Path) -> str:
    ap = path.resolve()
    for ib in cfg.inboxes:
        root = ib.path.resolve()
        if is_within(ap.parent, root) if ib.recursive else ap.parent == root:
            return ib.name
    return "once"


def once_record(
    f: Path, journal: Any, doc_id: int | None, state: str, seconds: float, error: str | None
) -> dict[str, Any]:
    """``once --jsonl``: one file's line (docs/operations.md "Commands")."""
    row = journal.get(doc_id) if doc_id is not None else None
    final = row.final_path if row else None
    return {
        "source": str(f),
        "state": state,  # done duplicate failed retry superseded | missing busy (not processed)
        "language": row.language if row else None,
        "doctype": row.doctype if row else None,
        "route": row.route if row else None,
        "outputs": [str(o) for o in row.outputs] if row else [],
        "pages": row.pages if row else None,
        "seconds": round(seconds, 3),
        "error": error,
        "id": doc_id,
        "source_now": str(final) if row and final is not None and final != row.path else None,
    }


@dataclass
class _Said:
    """What ``once`` says about one file: lines for stdout and stderr (or a JSON record)."""

    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)
    record: dict[str, Any] | None = None
    failed: bool = False
    finished: int | None = None  # a document done/duplicate now: its on_done hooks run at the end


class _Once:
    def __init__(self, cfg: Config, journal: Any, pipeline: Any, bar: OnceProgress, jsonl: bool) -> None:
        self.cfg, self.journal, self.pipeline, self.bar, self.jsonl = cfg, journal, pipeline, bar, jsonl

    def admit(self, f: Path) -> _Said | Any:
        """Admit ``f``: what to say about it now (missing, known), or the document to process."""
        from daemon.journal.store import AdmitAction

        path = Path(os.path.abspath(f))
        if not os.path.lexists(path):
            if self.jsonl:
                return _Said(record=once_record(f, self.journal, None, "missing", 0.0, "no such file"), failed=True)
            return _Said(err=[f"{f}: no such file"], failed=True)
        adm = self.journal.admit(path, inbox_for(self.cfg, path), duplicates=self.cfg.daemon.duplicates)
        doc = adm.document
        if adm.action == AdmitAction.KNOWN and doc is not None:
            row = self.journal.get(doc.id)
            if self.jsonl:
                return _Said(record=once_record(f, self.journal, doc.id, str(row.state) if row else "?", 0.0,
                                                row.error if row else None))
            return _Said(out=[f"{f}: already {row.state if row else '?'} as doc-{doc.id} "
                              f"(ocr-daemon requeue {f} to process it again)",
                              *(f"  {o}" for o in (row.outputs if row else ()))])
        assert doc is not None
        return doc

    def process(self, f: Path, doc: Any) -> _Said:
        """Claim and process one admitted document (on a document thread)."""
        t0 = time.monotonic()
        path = Path(os.path.abspath(f))
        claimed = self.journal.claim(doc.id)
        if claimed is None:
            if self.jsonl:
                return _Said(record=once_record(f, self.journal, doc.id, "busy", 0.0,
                                                "being processed by another ocr-daemon"), failed=True)
            return _Said(err=[f"{f}: being processed by another ocr-daemon"], failed=True)
        self.bar.add(doc.id, str(f))
        try:
            outcome = self.pipeline.process(claimed)
        finally:
            self.bar.file_done()
        ok = outcome.state in ("done", "duplicate")
        said = _Said(failed=not ok, finished=doc.id if ok else None)
        if self.jsonl:
            said.record = once_record(f, self.journal, doc.id, outcome.state, time.monotonic() - t0,
                                      outcome.reason or None)
        elif ok:
            said.out = [f"{f}: {outcome.state}", *(f"  {o}" for o in outcome.outputs or [])]
            if outcome.final_path and outcome.final_path != path:
                said.out.append(f"  source -> {outcome.final_path}")
        else:
            where = f" (moved to {outcome.final_path})" if outcome.final_path and outcome.final_path != path else ""
            said.err = [f"{f}: {outcome.state}: {outcome.reason}{where}"]
        return said


def split_once(splitter: Any, journal: Any, cfg: Config, f: Path, jsonl: bool) -> tuple[list[Path] | None, _Said | None]:
    """A file of an inbox that splits scanner batches: (its part files, what to say). Parts None:
    the file is processed whole; [] with a failure said after an error."""
    from daemon.errors import InputError, OcrDaemonError

    path = Path(os.path.abspath(f))
    inbox = inbox_for(cfg, path)
    if not os.path.lexists(path) or journal.find(path) is not None or not splitter.wants(path, inbox):
        return None, None
    try:
        res = splitter.split(path, inbox)
    except (InputError, cf.process.BrokenProcessPool, cf.TimeoutError):
        return None, None  # pages unreadable (or they crashed a worker): processing it whole fails it with the reason
    except (OcrDaemonError, OSError) as e:
        if jsonl:
            return [], _Said(record=once_record(f, journal, None, "retry", 0.0, f"not split: {e}"), failed=True)
        return [], _Said(err=[f"{f}: not split: {e}"], failed=True)
    if res.passed:
        return None, None
    if jsonl:
        return res.parts, None
    where = f"; original -> {res.original_to}" if res.original_to else ""
    return res.parts, _Said(out=[f"{f}: split into {len(res.parts)} part(s){where}"])


def worker_count(cfg: Config, engine: Any) -> int:
    """Documents in flight: the daemon's rule (``Service.worker_count``)."""
    n = cfg.daemon.workers
    return n if n > 0 else max(4, int(getattr(engine, "max_in_flight", 8)) // 2)


def run_once(cfg: Config, files: list[Path], *, engine_kind: str | None = None, jsonl: bool = False,
             hooks_wait: float = 60.0, apply_source_action: bool = False) -> int:
    from daemon.engines import create_engine
    from daemon.fsio import set_shared_roots
    from daemon.intake.batch import Splitter
    from daemon.journal.guard import open_state
    from daemon.service.hooks import run_for_once
    from daemon.service.pipeline import Pipeline

    set_shared_roots([ib.path for ib in cfg.inboxes])  # folders made in inboxes stay group-writable (fsio)
    journal, lock = open_state(cfg)  # like ``run``: refused while a daemon uses this state dir
    engine = create_engine(cfg, engine_kind)
    engine.start()
    bar = OnceProgress(sys.stderr, files=len(files))
    given = [] if apply_source_action else [Path(os.path.abspath(f)) for f in files]  # left where they are
    pipeline = Pipeline(cfg, journal, engine, on_progress=bar, sources_in_place=given)
    once = _Once(cfg, journal, pipeline, bar, jsonl)
    splitter = Splitter(cfg, pipeline.pool)  # scanner batches of inboxes that split them (docs/batches.md)
    workers = worker_count(cfg, engine)
    slots = threading.BoundedSemaphore(workers)
    said: list[_Said | cf.Future[_Said]] = []
    printed = 0
    failures = 0
    finished: list[int] = []

    def say_ready(wait: bool = False) -> None:
        """Print the results that are ready, in the files' order (all of them when ``wait``)."""
        nonlocal printed, failures
        while printed < len(said):
            item = said[printed]
            if isinstance(item, cf.Future):
                if not wait and not item.done():
                    return
                item = item.result()
            printed += 1
            failures += item.failed
            if item.finished is not None:
                finished.append(item.finished)
            if item.record is not None:
                print_jsonl(item.record)
            for line in item.out:
                print(line, flush=True)
            for line in item.err:
                print(line, file=sys.stderr, flush=True)

    def job(f: Path, doc: Any) -> _Said:
        try:
            return once.process(f, doc)
        finally:
            slots.release()

    ex = cf.ThreadPoolExecutor(workers, thread_name_prefix="once")
    try:
        todo = [Path(f) for f in files]
        while todo:
            f = todo.pop(0)
            parts, note = split_once(splitter, journal, cfg, f, jsonl)
            if note is not None:
                said.append(note)
            if parts is not None:  # its parts are processed next, each as its own document
                todo[:0] = parts
                say_ready()
                continue
            while not slots.acquire(timeout=POLL):
                say_ready()
            got = once.admit(f)
            if isinstance(got, _Said):
                slots.release()
                said.append(got)
            else:
                said.append(ex.submit(job, f, got))
            say_ready()
        say_ready(wait=True)
    finally:
        # Interrupted: documents not begun are dropped; those running fail fast once the engine
        # and the render pool are closed, and go back to the queue (the pipeline's retry).
        ex.shutdown(wait=False, cancel_futures=True)
        engine.close()
        ex.shutdown(wait=True)
        pipeline.close()
        bar.close()
        lock.release()
    for line in run_for_once(journal, finished, hooks_wait):  # a failed hook does not fail the document
        print(line, file=sys.stderr)
    return ExitCode.FAILURES if failures else ExitCode.OK


def print_jsonl(rec: dict[str, Any]) -> None:
    import json

    print(json.dumps(rec, ensure_ascii=False), flush=True)
