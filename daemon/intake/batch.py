"""Scanner batches: one scanned stack -> one part file per document, separator sheets and blank
pages left out, before the journal sees anything (docs/batches.md).

Contract:
- Opt-in per inbox: ``separator`` (split at pages carrying a barcode/QR code with that text;
  those sheets are left out) and ``drop_blank_pages`` (leave blank pages out). Only PDFs and
  multi-page TIFFs are split; everything else, and every file of other inboxes, goes on as before.
- Where: at intake, after the stability check and before the journal. A split file is never a
  journal row itself: its parts are written beside it as ``<stem>.part1.pdf`` ... (same folder,
  so the same inbox subfolder: ``{subdir}`` and ``match.subdir`` see them as the original),
  the watcher admits them like any dropped file, and each is its own document (journal row,
  outputs, route). The rest of the pipeline is unchanged; the page count of a part is the page
  count of its outputs.
- Part files: PDF pages are copied with pikepdf (qpdf: the page objects and their image streams
  as they are, nothing re-encoded); a TIFF first becomes a PDF through img2pdf (frames embedded
  losslessly, as OCRmyPDF does). Each part carries ``/OcrDaemonBatch`` in its document info: the
  original's path and SHA-256, part k of n, the original page numbers it holds and the pages left
  out (``part_info``). The sidecar's ``batch`` and ``dropped_pages`` come from it, and a file
  carrying it is never split again.
- Nothing to change (no separator found and no blank page) or nothing left (every page blank or
  a separator): the original goes on as it is (``Split.passed``).
- The original: moved, once every part is in the inbox, to ``batch_archive`` (default
  ``<inbox>/batch-originals/<subdir>``; never watched). Moved by rename only (same filesystem).
- Crash-safe (kill -9 anywhere): (1) the parts are written as hidden temp files
  (``.<name>.ocr-tmp``, never taken by the watcher); (2) a record of the split (names, pages,
  archive target) is saved in ``<state_dir>/batches/``; (3) each temp is moved to its name (link
  then unlink: a part appears whole, once); (4) the original is moved away; (5) the record is
  removed. Before (2) nothing is visible and a repeat starts again, writing the same temps. From
  (2) on, a repeat (``recover()`` at start, or the original seen again) only finishes the steps:
  a temp still there is published, a part whose temp is gone was published already (and maybe
  processed and moved away by now) and is never written again. So no part is lost or doubled.
- ``Splitter.split`` runs the page analysis (``pagescan.scan_page``, one task per page) and the
  part writing in the render pool's worker processes: a file that crashes or hangs them costs a
  worker, not the daemon; such a file, like one whose pages cannot be read (``InputError``), is
  passed on whole, and the pipeline fails it with its reason as any other file.
- ``submit(cand, admit)`` queues a split on the splitter's own thread (the stability thread
  never waits for one); ``admit`` is called with the candidate when the original goes on whole.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import hashlib
import io
import json
import logging
import mmap
import os
import queue
import stat
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from daemon.config import Config, InboxCfg, template_root
from daemon.config.templates import expand_template, subdir_of
from daemon.errors import InputError, TransientError
from daemon.fsio import atomic_write, fit_stem, fsync_dir, is_within, move_file, sha256_file, unique_path
from daemon.intake.pagescan import PageScan, scan_options, scan_page
from daemon.models import Candidate
from daemon.names import display, for_log
from daemon.pages import probe
from daemon.pages.renderpool import OPEN_PRIORITY, RenderPool, RenderTask

log = logging.getLogger(__name__)

#: Key of the part record in a part file's document info (see the module contract).
MARK = "/OcrDaemonBatch"
#: Folder (in the inbox) split originals go to when ``batch_archive`` is not set.
DEFAULT_ARCHIVE = "batch-originals"
RECORDS = "batches"  # folder in the state dir
#: Seconds per page a part file may take to write (copying pages is milliseconds a page; this only
#: bounds a hang), on top of ``engine.render_timeout``.
WRITE_SECONDS_PER_PAGE = 2.0


@dataclass(frozen=True)
class Part:
    """One document of a batch: the original's pages it keeps and those left out in its range
    (0-based indexes; reasons ``blank`` / ``separator``)."""

    pages: tuple[int, ...]
    dropped: tuple[tuple[int, str], ...] = ()


def plan_parts(scans: Sequence[PageScan]) -> list[Part] | None:
    """The parts of a file from its pages, or None when there is nothing to change (no page left
    out) or nothing left (every page left out). A separator sheet opens the next part's range (so
    it, and its blank back, are listed in that part's sidecar); blank pages are listed in the range
    they are in; a range with no page kept gives its list to the next part (the last one's to the
    part before it)."""
    ranges: list[tuple[list[int], list[tuple[int, str]]]] = [([], [])]
    for s in scans:
        if s.separator:
            ranges.append(([], [(s.index, "separator")]))
        elif s.blank:
            ranges[-1][1].append((s.index, "blank"))
        else:
            ranges[-1][0].append(s.index)
    if not any(dropped for _, dropped in ranges):
        return None
    parts: list[Part] = []
    carry: list[tuple[int, str]] = []
    for kept, dropped in ranges:
        if kept:
            parts.append(Part(tuple(kept), tuple(sorted(carry + dropped))))
            carry = []
        else:
            carry += dropped
    if not parts:
        return None
    if carry:
        parts[-1] = Part(parts[-1].pages, tuple(sorted([*parts[-1].dropped, *carry])))
    return parts


def part_meta(source: Path, sha: str, k: int, n: int, part: Part) -> dict[str, Any]:
    """The ``/OcrDaemonBatch`` record of part ``k`` (1-based) of ``n``; page numbers 1-based."""
    return {
        "source": display(source), "sha256": sha, "part": k, "parts": n,
        "pages": [i + 1 for i in part.pages],
        "dropped_pages": [{"page": i + 1, "reason": why} for i, why in part.dropped],
    }


def part_info(path: Path) -> dict[str, Any] | None:
    """The part record a file carries (see ``part_meta``), or None (not a PDF, not a part, or a
    record that does not have the expected shape). Cheap: reads the PDF's trailer and info, and
    only for a file whose bytes hold the record's name or an object stream (where it could be
    compressed): other PDFs are not opened, so the main process of ``once`` does not load MuPDF
    for them (0.3 s, issue 32)."""
    try:
        with open(path, "rb") as f:
            if not f.read(1024).lstrip().startswith(b"%PDF"):
                return None
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                if m.find(MARK[1:].encode()) < 0 and m.find(b"/ObjStm") < 0:
                    return None
        doc = probe.mupdf_open(path)
    except Exception:
        return None
    try:
        kind, ref = doc.xref_get_key(-1, "Info")
        if kind != "xref":
            return None
        kind, raw = doc.xref_get_key(int(ref.split()[0]), MARK[1:])
        if kind != "string":
            return None
        meta = json.loads(raw)
    except Exception:
        return None
    finally:
        doc.close()
    ok = (
        isinstance(meta, dict) and isinstance(meta.get("source"), str) and isinstance(meta.get("part"), int)
        and isinstance(meta.get("parts"), int) and isinstance(meta.get("pages"), list)
        and isinstance(meta.get("dropped_pages"), list)
        and all(isinstance(d, dict) and isinstance(d.get("page"), int) and isinstance(d.get("reason"), str)
                for d in meta["dropped_pages"])
    )
    return meta if ok else None


def write_parts(path: Path, kind: str, parts: Sequence[tuple[Sequence[int], dict[str, Any]]], temps: Sequence[Path]) -> None:
    """In a render worker: write each part (its pages of ``path``, 0-based, and its record) to
    its temp file, fsynced. See the module contract for the libraries and why."""
    import pikepdf

    if kind == "tiff":
        import img2pdf

        src: Any = io.BytesIO(_tiff_pdf(path, img2pdf))
    else:
        src = str(path)
    with pikepdf.open(src) as pdf:
        for (pages, meta), tmp in zip(parts, temps, strict=True):
            out = pikepdf.new()
            for i in pages:
                out.pages.append(pdf.pages[i])
            out.docinfo[MARK] = pikepdf.String(json.dumps(meta, ensure_ascii=False))
            with open(tmp, "wb") as f:
                out.save(f, deterministic_id=True)  # the same original gives the same part bytes
                f.flush()
                os.fsync(f.fileno())
            out.close()


def _tiff_pdf(path: Path, img2pdf: Any) -> bytes:
    """A TIFF as a PDF, one page per frame: img2pdf embeds each frame as it is where PDF can hold
    it; frames it refuses (an alpha channel, 16 bits) are converted losslessly (PNG) first."""
    try:
        return bytes(img2pdf.convert(str(path)))
    except Exception:
        from PIL import Image, ImageSequence

        frames = []
        with Image.open(path) as im:
            for fr in ImageSequence.Iterator(im):
                buf = io.BytesIO()
                (fr if fr.mode in ("1", "L", "RGB") else fr.convert("RGB")).save(buf, format="PNG")
                frames.append(buf.getvalue())
        return bytes(img2pdf.convert(frames))


@dataclass
class Record:
    """A split past the point of no return (its temps are written): what to finish."""

    source: str
    sha256: str
    size: int
    mtime_ns: int
    names: list[str]  # the part files, in the original's folder
    archive_to: str  # where the original goes

    def save(self, path: Path) -> None:
        atomic_write(path, json.dumps(asdict(self), ensure_ascii=False, indent=1).encode("utf-8"))

    @classmethod
    def load(cls, path: Path) -> Record | None:
        try:
            return cls(**json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError) as e:
            log.warning("batch record %s unreadable (%s); ignored", path, e)
            return None


@dataclass
class Split:
    """What ``Splitter.split`` did: ``passed`` (nothing to split: the original goes on as it is),
    else the part files now in the inbox and where the original went (None: still there)."""

    passed: bool
    parts: list[Path]
    original_to: Path | None = None


def _temp(final: Path) -> Path:
    return final.parent / f".{final.name}.ocr-tmp"


def _same_inode(a: Path, b: Path) -> bool:
    try:
        sa, sb = os.lstat(a), os.lstat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def archive_dir(ib: InboxCfg, path: Path, when: datetime) -> Path:
    """Where the original ``path`` of a split goes (see ``InboxCfg.batch_archive``)."""
    sub = subdir_of(path, ib.path)
    if ib.batch_archive is None:
        return ib.path / DEFAULT_ARCHIVE / sub if sub else ib.path / DEFAULT_ARCHIVE
    fields = {"inbox": ib.name, "subdir": sub, "stem": path.stem, "yyyy": f"{when.year:04d}",
              "mm": f"{when.month:02d}", "dd": f"{when.day:02d}"}
    return expand_template(ib.batch_archive, fields)


def archive_roots(cfg: Config) -> list[Path]:
    """The fixed folders split originals are moved into: never taken as input."""
    roots = []
    for ib in cfg.inboxes:
        if ib.splits():
            roots.append(ib.path / DEFAULT_ARCHIVE if ib.batch_archive is None else template_root(ib.batch_archive))
    inboxes = [os.path.abspath(i.path) for i in cfg.inboxes]
    return [r for r in roots if not any(is_within(i, os.path.abspath(r)) for i in inboxes)]


class Splitter:
    """Splits batches for one daemon (or one ``once`` run); see the module contract."""

    def __init__(self, cfg: Config, pool: RenderPool) -> None:
        self.cfg = cfg
        self.pool = pool
        self.records = cfg.daemon.state_dir / RECORDS
        self._queue: queue.SimpleQueue[tuple[Candidate, Callable[[Candidate], None]] | None] = queue.SimpleQueue()
        self._pending: set[Path] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    # -- which files -----------------------------------------------------------------------------

    def wants(self, path: Path, inbox: str) -> bool:
        """True if ``path`` is to be split: its inbox opted in, it is a PDF or TIFF, not a part."""
        ib = self.cfg.inbox(inbox)
        if ib is None or not ib.splits():
            return False
        try:
            kind, _ = probe.classify(path)
        except Exception:
            return False
        return kind in ("pdf", "tiff") and part_info(path) is None

    # -- the thread ------------------------------------------------------------------------------

    def submit(self, cand: Candidate, admit: Callable[[Candidate], None]) -> None:
        with self._lock:
            if cand.path in self._pending:
                return
            self._pending.add(cand.path)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="batch-split", daemon=True)
                self._thread.start()
        self._queue.put((cand, admit))

    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def close(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            cand, admit = item
            try:
                if not self._stopping.is_set():
                    self._one(cand, admit)
            except Exception:  # never let one file end the thread; the next rescan offers it again
                log.exception("batch split of %s failed", for_log(cand.path.name))
            finally:
                with self._lock:
                    self._pending.discard(cand.path)

    def _one(self, cand: Candidate, admit: Callable[[Candidate], None]) -> None:
        name = for_log(cand.path.name)
        try:
            res = self.split(cand.path, cand.inbox)
        except FileNotFoundError:
            return
        except (InputError, cf.process.BrokenProcessPool, cf.TimeoutError) as e:
            if self._stopping.is_set():
                return  # the render pool closed under it: the next start splits it
            log.info("%s: not split (%s); processed whole", name, for_log(str(e) or type(e).__name__))
            admit(cand)
            return
        except (TransientError, OSError) as e:
            log.warning("%s: batch split not finished (%s); tried again at the next rescan", name, for_log(str(e)))
            return
        if res.passed:
            admit(cand)

    # -- the split -------------------------------------------------------------------------------

    def split(self, path: Path, inbox: str) -> Split:
        """Split ``path`` now (see the module contract). Raises ``InputError`` (pages unreadable),
        ``BrokenProcessPool``/``TimeoutError`` (a worker crashed or hung on it), ``TransientError``
        or ``OSError`` (try later), ``FileNotFoundError`` (gone)."""
        ib = self.cfg.inbox(inbox)
        st = os.lstat(path)
        if ib is None or not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
            return Split(True, [])  # links and special files: the pipeline refuses them unread
        sha = sha256_file(path)
        key = hashlib.sha256(os.fsencode(path) + b"\0" + sha.encode()).hexdigest()[:40]
        rec_path = self.records / f"{key}.json"
        rec = Record.load(rec_path)
        if rec is None or rec.source != os.fsdecode(path):
            kind, _ = probe.classify(path)
            parts = plan_parts(self._scan(path, ib))
            if parts is None:
                return Split(True, [])
            names = self._names(path, len(parts))
            metas = [part_meta(path, sha, k + 1, len(parts), p) for k, p in enumerate(parts)]
            self._write(path, kind, [(p.pages, m) for p, m in zip(parts, metas, strict=True)],
                        [_temp(path.parent / n) for n in names])
            target = unique_path(archive_dir(ib, path, datetime.now()), path.name)
            rec = Record(os.fsdecode(path), sha, st.st_size, st.st_mtime_ns, names, os.fsdecode(target))
            rec.save(rec_path)  # (2): from here on the split is only ever finished, never redone
            log.info(
                "%s: %d part(s): %s", for_log(path.name), len(parts),
                "; ".join(f"{n} = pages {_ranges(m['pages'])}" + (
                    f" (left out: {', '.join(str(d['page']) + ' ' + d['reason'] for d in m['dropped_pages'])})"
                    if m["dropped_pages"] else "") for n, m in zip(names, metas, strict=True)),
            )
        return self._finish(rec, rec_path)

    def _finish(self, rec: Record, rec_path: Path) -> Split:
        """Steps (3)-(5) of the module contract; repeatable."""
        src = Path(rec.source)
        parts = [self._publish(src.parent / n) for n in rec.names]
        moved = self._move_original(rec, rec_path)
        with contextlib.suppress(FileNotFoundError):
            rec_path.unlink()
        if moved is not None:
            log.info("%s: split into %d part(s); original moved to %s", for_log(src.name), len(parts), for_log(moved))
        return Split(False, parts, moved)

    def recover(self) -> int:
        """At start: finish every split a stop or crash interrupted after its record was saved."""
        n = 0
        for rec_path in sorted(self.records.glob("*.json")) if self.records.is_dir() else []:
            rec = Record.load(rec_path)
            if rec is None:
                continue
            try:
                self._finish(rec, rec_path)
                n += 1
            except (TransientError, OSError) as e:
                log.warning("batch %s: not finished (%s); tried again when the original is seen", for_log(rec.source), e)
        return n

    def _publish(self, final: Path) -> Path:
        tmp = _temp(final)
        if not os.path.lexists(tmp):
            return final  # published before (maybe processed and moved away since): never again
        if os.path.lexists(final):
            if _same_inode(tmp, final):  # stopped between the link and the unlink
                tmp.unlink()
                fsync_dir(final.parent)
                return final
            final = unique_path(final.parent, final.name)  # a file of the same name appeared meanwhile
        move_file(tmp, final)
        return final

    def _move_original(self, rec: Record, rec_path: Path) -> Path | None:
        src, target = Path(rec.source), Path(rec.archive_to)
        try:
            st = os.lstat(src)
        except FileNotFoundError:
            return target if os.path.lexists(target) else None
        if _same_inode(src, target):  # stopped between the link and the unlink
            src.unlink()
            fsync_dir(src.parent)
            return target
        if (st.st_size, st.st_mtime_ns) != (rec.size, rec.mtime_ns):
            # replaced after it was split: the new version is split (or taken) on its own
            log.info("%s changed after it was split; left in place", for_log(src.name))
            return None
        if os.path.lexists(target):
            target = unique_path(target.parent, target.name)
            rec.archive_to = os.fsdecode(target)
            rec.save(rec_path)
        move_file(src, target)
        return target

    def _names(self, path: Path, n: int) -> list[str]:
        """``<stem>.part1.pdf`` ... free in the folder; ``<stem>-2.part1.pdf`` ... when an earlier
        batch of the same name left its parts there. Temp files do not count: one left by a kill
        before the split was recorded is this split's own, and is written again."""
        tail = f".part{n}.pdf"
        stem = fit_stem(path.stem, len(os.fsencode(tail)) + len(".-9999.ocr-tmp"))
        for i in range(1, 10_000):
            s = stem if i == 1 else f"{stem}-{i}"
            names = [f"{s}.part{k}.pdf" for k in range(1, n + 1)]
            if not any(os.path.lexists(path.parent / x) for x in names):
                return names
        raise TransientError(f"no free part names for {path.name} in {path.parent}")

    # -- in the render pool ------------------------------------------------------------------------

    def _scan(self, path: Path, ib: InboxCfg) -> list[PageScan]:
        e = self.cfg.engine
        opts = scan_options(e.max_pages, e.max_image_pixels)
        n = self._wait(self.pool.submit(probe.page_count, path, opts, priority=OPEN_PRIORITY), e.render_timeout)
        tasks = [self.pool.submit(scan_page, path, i, ib.separator, ib.drop_blank_pages, opts, priority=OPEN_PRIORITY)
                 for i in range(int(n))]
        try:
            return [self._wait(t, e.render_timeout) for t in tasks]
        finally:
            for t in tasks:
                t.cancel()

    def _write(self, path: Path, kind: str, parts: list[tuple[tuple[int, ...], dict[str, Any]]], temps: list[Path]) -> None:
        pages = sum(len(p) for p, _ in parts)
        task = self.pool.submit(write_parts, path, kind, parts, temps, priority=OPEN_PRIORITY)
        try:
            self._wait(task, self.cfg.engine.render_timeout + WRITE_SECONDS_PER_PAGE * pages)
        except BaseException as e:
            for t in temps:  # a failed write leaves none (a kill -9 leaves hidden ones, rewritten next time)
                with contextlib.suppress(OSError):
                    t.unlink()
            if isinstance(e, OSError):  # a full disk, a read-only folder
                raise TransientError(f"cannot write the parts: {e}") from e
            if isinstance(e, Exception) and not isinstance(e, InputError | cf.process.BrokenProcessPool | cf.TimeoutError):
                # qpdf cannot copy pages MuPDF could render: the file goes on whole
                raise InputError(f"cannot copy its pages ({type(e).__name__}: {e})") from e
            raise

    def _wait(self, task: RenderTask, limit: float) -> Any:
        """``task``'s result; its clock runs from when a worker took it. A hang kills the worker."""
        try:
            while True:
                try:
                    return task.result(timeout=max(0.05, task.deadline(limit) - time.monotonic()))
                except cf.TimeoutError:
                    if task.overdue(limit):
                        raise
        except cf.TimeoutError:
            self.pool.kill(task)
            raise
        except cf.process.BrokenProcessPool:
            self.pool.reset(task.executor)
            raise


def _ranges(pages: list[int]) -> str:
    """[1, 3, 5] -> "1, 3, 5"; [1, 2, 3, 7] -> "1-3, 7"."""
    runs: list[list[int]] = []
    for p in pages:
        if runs and p == runs[-1][-1] + 1:
            runs[-1].append(p)
        else:
            runs.append([p])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)
