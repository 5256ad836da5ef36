"""The journal, latency and drain parts of bench/bench_scale.py (issue 34 item 5); see its docstring.

CPU figures are process CPU (``/proc/<pid>/stat`` utime+stime of a process and its descendants, or
``time.process_time`` in-process), never wall time: the bench machine is shared.
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from daemon.journal.store import Journal, RebuiltDoc, status_summary
from daemon.models import DocState

REPO = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")
BATCH = 50_000


def rss_mb(pid: int | str = "self") -> float:
    m = re.search(r"^VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.MULTILINE)
    return int(m.group(1)) / 1024 if m else 0.0


def sqlite_mb() -> float | None:
    """Memory SQLite holds in this process (``sqlite3_memory_used``: page caches, schemas,
    statements) -- C allocations tracemalloc does not see; None where the library is not found."""
    import ctypes

    try:
        lib = ctypes.CDLL("libsqlite3.so.0")
    except OSError:
        return None
    lib.sqlite3_memory_used.restype = ctypes.c_int64
    return round(lib.sqlite3_memory_used() / 2**20, 1)


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d))
    return kids


def tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and its living descendants, plus their reaped children."""
    kids, total, todo = _children(), 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            f = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in f[11:15]) / TICK  # utime stime cutime cstime
        todo += kids.get(p, [])
    return total


def server_cpu(server: Any) -> float:
    """CPU seconds of a ``tests/pgserver.PgServer``'s postmaster and its backends (0 without one)."""
    if server is None:
        return 0.0
    return tree_cpu(int((server.data / "postmaster.pid").read_text().split()[0]))


def _add_done_rows(j: Journal, n: int, batch: int, *, analyze: bool = False) -> None:
    """``n`` finished documents (``_docs``) added through ``Journal.add_rebuilt``, ``batch`` per
    transaction; ``analyze``: PostgreSQL's ``ANALYZE`` after each, as autovacuum's would run
    between a server's transactions (statistics for the planner)."""
    for start in range(0, n, batch):
        assert j.add_rebuilt(_docs(min(batch, n - start), start)) == min(batch, n - start)
        if analyze:
            j._conn().execute("ANALYZE documents")
            j._conn().execute("ANALYZE outputs")


def _stage_invoices(stage: Path, count: int, prefix: str) -> None:
    """``count`` tiny born-digital PDFs in ``stage`` (``<prefix>-<i>.pdf``, from ``_pdf_template``):
    distinct content, same length; the text layer says which one it is."""
    data = _pdf_template()
    marker = data.index(b"Invoice 0000000")
    stage.mkdir()
    for i in range(count):
        (stage / f"{prefix}-{i:07d}.pdf").write_bytes(data[:marker] + f"Invoice {i:07d}".encode() + data[marker + 15:])


def _docs(n: int, start: int = 0) -> list[RebuiltDoc]:
    now = time.time()
    out = []
    for i in range(start, start + n):
        p = Path(f"/srv/ocr/inbox/{i // 10_000:03d}/scan-{i:07d}.pdf")
        out.append(RebuiltDoc(
            id=None, path=p, inbox="in", size=10_000 + i, sha256=f"{i:064x}", state=DocState.DONE,
            outputs=(p.with_suffix(".txt"), p.with_suffix(".md"), p.with_suffix(".json")), final_path=p,
            language="en", doctype="letter", route="all", pages=1, created=now - (n - i)))
    return out


def journal_part(n: int, docs: int, tmp: Path | None, *, pg: bool = False) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="bench-scale-j-", dir=tmp))
    server = None
    try:
        if pg:
            sys.path.insert(0, str(REPO / "tests"))
            from pgserver import PgServer, find_bin

            bindir = find_bin()
            assert bindir is not None, "PostgreSQL binaries missing"
            server = PgServer(bindir)
            server.start()
            url = server.create_db()

            def open_j() -> Journal:
                from daemon.journal.pgstore import PostgresJournal
                return PostgresJournal(url, root / "state")
        else:
            def open_j() -> Journal:
                return Journal(root / "state")
        t0 = time.monotonic()
        j = open_j()
        _add_done_rows(j, n, BATCH // 5 if pg else BATCH, analyze=pg)
        j.close()
        built = time.monotonic() - t0
        size = sum(f.stat().st_size for f in (root / "state").glob("journal.sqlite3*")) if not pg else None

        # start: open, counts (what the service does before its first document)
        rss0, c0 = rss_mb(), time.process_time()
        j = open_j()
        j.counts()
        open_cpu, open_rss = time.process_time() - c0, rss_mb() - rss0
        inbox = root / "in"
        inbox.mkdir()
        files = []
        for i in range(docs):
            f = inbox / f"new-{i:05d}.pdf"
            f.write_bytes(b"%PDF-1.4\n% new " + str(i).encode() + b"\n%%EOF\n")
            files.append(f)
        j.queued(limit=32)  # a first statement of each kind (connection, statement caches) before timing
        s0, c0, w0 = server_cpu(server), time.process_time(), time.monotonic()
        for f in files:
            adm = j.admit(f, "in")
            assert adm.document is not None
            doc_id = adm.document.id
            j.queued(limit=32)
            assert j.claim(doc_id) is not None
            outs = [f.with_suffix(s) for s in (".txt", ".md", ".json")]
            j.planned(doc_id)
            j.planned_by_unfinished(doc_id)
            j.set_planned(doc_id, outs)
            j.set_total_pages(doc_id, 1)
            j.finish(doc_id, language="en", doctype="letter", route="all", pages=1, outputs=outs, final_path=f,
                     timings={"ocr": 0.1})
            j.outputs_among([str(o) for o in outs])  # the watcher's events / rescan for its outputs
        per_doc = (time.process_time() - c0 + server_cpu(server) - s0) / docs
        per_doc_wall = (time.monotonic() - w0) / docs
        st_cpu, st_wall = [], []
        for _ in range(20):
            s0, c0, w0 = server_cpu(server), time.process_time(), time.monotonic()
            status_summary(j, 3)
            st_cpu.append(time.process_time() - c0 + server_cpu(server) - s0)
            st_wall.append(time.monotonic() - w0)
        counts = j.counts()
        j.close()
        assert counts.get("done") == n + docs, counts
        return {"part": "journal", "backend": "postgresql" if pg else "sqlite", "rows": n, "build_s": round(built, 1),
                "journal_mb": None if size is None else round(size / 2**20, 1),
                "open_cpu_ms": round(1000 * open_cpu, 2), "open_rss_delta_mb": round(open_rss, 2),
                "docs": docs, "journal_cpu_per_doc_ms": round(1000 * per_doc, 3),
                "journal_wall_per_doc_ms": round(1000 * per_doc_wall, 2),
                "status_cpu_ms_median": round(1000 * statistics.median(st_cpu), 3),
                "status_wall_ms_median": round(1000 * statistics.median(st_wall), 3),
                "rss_mb": round(rss_mb(), 1)}
    finally:
        if server is not None:
            server.close()
        shutil.rmtree(root, ignore_errors=True)


# -- the real daemon --------------------------------------------------------------------------------


def _start(root: Path, cfg: dict[str, Any]) -> tuple[subprocess.Popen[bytes], int]:
    (root / "rules.yaml").write_text(yaml.safe_dump(cfg))
    env = dict(os.environ, OMP_THREAD_LIMIT="1", PYTHONUNBUFFERED="1")
    log = open(root / "log", "w")  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, "-m", "daemon", "run", "--config", str(root / "rules.yaml")],
                            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO)
    deadline = time.monotonic() + 900
    while True:
        text = (root / "log").read_text(errors="replace")
        m = re.search(r"http endpoint listening on http://127\.0\.0\.1:(\d+)", text)
        if "initial scan" in text and m:
            return proc, int(m.group(1))
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(text[-3000:])
        time.sleep(0.1)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _config(root: Path, rescan: float) -> dict[str, Any]:
    return {
        "daemon": {"state_dir": str(root / "state"), "failed_dir": str(root / "failed"), "rescan_interval": rescan,
                   "http": {"listen": "127.0.0.1:0"}, "maintenance_interval": 0},
        "engine": {"kind": "tesseract"},
        "inboxes": [{"path": str(root / "in"), "stability_delay": 1.0}],
        "routes": [{"name": "all", "destination": str(root / "out"), "formats": ["txt", "json"]}],
    }


def _status_ms(port: int) -> float:
    times = []
    for _ in range(5):
        t0 = time.monotonic()
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        c.request("GET", "/status")
        body = c.getresponse().read()
        c.close()
        times.append(time.monotonic() - t0)
        assert body.startswith(b"{")
    return round(1000 * statistics.median(times), 1)


def latency_part(n: int, tmp: Path | None) -> dict[str, Any]:
    """A one-page PNG dropped into an inbox of ``n`` kept, done files (rescans every 20 s)."""
    sys.path.insert(0, str(REPO / "tests"))
    import docgen
    from bench_scale import build

    root = Path(tempfile.mkdtemp(prefix="bench-scale-l-", dir=tmp))
    proc = None
    try:
        _inbox, j, built = build(root, n)
        j.close()
        proc, port = _start(root, _config(root, 20.0))
        rss_start = rss_mb(proc.pid)
        c0 = tree_cpu(proc.pid)
        time.sleep(62)  # idle: three rescans
        idle_cpu = tree_cpu(proc.pid) - c0
        src = docgen.make_image(root / "page.png", "Dear Ms Jensen,\nThank you for your letter of 12 May.\nPeter Olsen")
        lat = []
        for i, wait in enumerate((0.0, 7.0, 13.0)):  # at different phases of the 20 s rescan
            time.sleep(wait)
            staged = root / f"drop-{i}.png"
            staged.write_bytes(src.read_bytes() + b"\0" * (i + 1))
            t0 = time.monotonic()
            staged.rename(root / "in" / staged.name)
            target = root / "out" / f"drop-{i}.json"
            while not target.exists():
                if time.monotonic() - t0 > 600:
                    raise SystemExit("timed out\n" + (root / "log").read_text()[-3000:])
                time.sleep(0.05)
            lat.append(round(time.monotonic() - t0, 2))
        return {"part": "latency", "kept_files": n, "build_s": round(built, 1), "idle_cpu_s_per_rescan": round(idle_cpu / 3, 3),
                "new_file_done_after_s": lat, "stability_delay_s": 1.0, "rss_mb_start": round(rss_start, 1),
                "rss_mb_end": round(rss_mb(proc.pid), 1), "status_ms_median": _status_ms(port)}
    finally:
        if proc is not None:
            _stop(proc)
        shutil.rmtree(root, ignore_errors=True)


def _pdf_template() -> bytes:
    """A one-page born-digital PDF (Helvetica, an uncompressed content stream) whose text holds
    ``Invoice 0000000``: the digits are replaced in place (same length, so the xref stays right)."""
    content = (b"BT /F1 12 Tf 72 720 Td (Invoice 0000000) Tj 0 -20 Td "
               b"(Thank you for your order. Total due: 120.00 EUR.) Tj ET")
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            b"<< /Length " + str(len(content)).encode() + b" >>\nstream\n" + content + b"\nendstream"]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for k, o in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{k} 0 obj\n".encode() + o + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def drain_part(n: int, window: float, tmp: Path | None) -> dict[str, Any]:
    """``n`` tiny born-digital PDFs renamed into the inbox at once; watched for ``window`` s.
    ``rss_mb_start`` is the daemon's RSS before the drop; ``rss_mb_warm`` at the first sample, 10 s
    in, once the first documents have loaded what a PDF needs (pymupdf is imported on first use)."""
    import pymupdf

    root = Path(tempfile.mkdtemp(prefix="bench-scale-d-", dir=tmp))
    proc = None
    try:
        stage = root / "stage"
        _stage_invoices(stage, n, "inv")
        (root / "in").mkdir()
        assert "Invoice 0000001" in pymupdf.open(stage / "inv-0000001.pdf")[0].get_text()
        proc, port = _start(root, _config(root, 3600.0))
        time.sleep(5)
        rss_start, c0 = rss_mb(proc.pid), tree_cpu(proc.pid)
        t0 = time.monotonic()
        for f in os.listdir(stage):
            os.rename(stage / f, root / "in" / f)
        drop_s = time.monotonic() - t0
        samples = []
        ro = None
        while time.monotonic() - t0 < window:
            time.sleep(10)
            if ro is None and (root / "state" / "journal.sqlite3").exists():
                ro = Journal(root / "state", readonly=True)
            done = ro.counts().get("done", 0) + ro.counts().get("duplicate", 0) if ro else 0
            samples.append({"t": round(time.monotonic() - t0, 1), "done": done, "rss_mb": round(rss_mb(proc.pid), 1),
                            "cpu_s": round(tree_cpu(proc.pid) - c0, 1)})
            if done >= n:
                break
        assert ro is not None
        counts = ro.counts()
        ro.close()
        last = samples[-1]
        return {"part": "drain", "dropped": n, "window_s": window, "drop_rename_s": round(drop_s, 1),
                "done": last["done"], "elapsed_s": last["t"], "docs_per_s": round(last["done"] / last["t"], 2),
                "cpu_s": last["cpu_s"], "cpu_per_doc_ms": round(1000 * last["cpu_s"] / max(1, last["done"]), 1),
                "rss_mb_start": round(rss_start, 1), "rss_mb_warm": samples[0]["rss_mb"],
                "rss_mb_max": max(s["rss_mb"] for s in samples),
                "rss_mb_end": last["rss_mb"], "counts": counts, "status_ms_median": _status_ms(port), "samples": samples}
    finally:
        if proc is not None:
            _stop(proc)
        shutil.rmtree(root, ignore_errors=True)


def admit_part(n: int, window: float, tmp: Path | None) -> dict[str, Any]:
    """The admission of a big drop, in this process, wired as ``Service`` wires it (the real
    ``InboxWatcher`` on inotify -> the real ``StabilityTracker`` with ``TRACK_MAX`` and its
    ``on_room`` rescans -> ``Journal.admit``; no OCR): ``n`` tiny files renamed into the inbox at
    once, watched until all are admitted or ``window`` s. Samples RSS, watchdog's event queue and
    the tracker every second; reports the time to admit all, CPU, RSS start/max/end and the most
    events watchdog held queued (issue 34 item 3: RSS flat while a drop is admitted)."""
    import inspect
    import threading
    import types

    from daemon.config import InboxCfg
    from daemon.intake.stability import StabilityTracker
    from daemon.intake.watch import InboxWatcher
    from daemon.service.intake import Intake

    root = Path(tempfile.mkdtemp(prefix="bench-scale-a-", dir=tmp))
    stage, inbox = root / "stage", root / "in"
    stage.mkdir()
    inbox.mkdir()
    names = [f"d-{i:07d}.pdf" for i in range(n)]
    for i, name in enumerate(names):
        (stage / name).write_bytes(b"%PDF-1.4\n% " + str(i).encode() + b"\n%%EOF\n")
    j = Journal(root / "state")
    admitted = [0]
    w: InboxWatcher | None = None

    def on_stable(c: Any, reason: str | None) -> None:
        j.admit(c.path, c.inbox)
        admitted[0] += 1

    def on_room() -> None:  # as Service wires it: the watcher's rescan thread, or a thread each (before)
        assert w is not None
        if hasattr(w, "scan_soon"):
            w.scan_soon()
        else:
            threading.Thread(target=w.scan, name="room-rescan", daemon=True).start()

    svc = types.SimpleNamespace(journal=j)
    tracker = StabilityTracker(on_stable, lambda p, i: None, lambda i: 1.0, on_room=on_room,
                               skip=lambda p, st: Intake._skip_known(svc, p, st))  # type: ignore[arg-type]
    kw: dict[str, Any] = {"excluded_dirs": [root / "state"], "is_output": j.is_output, "is_output_name": j.is_output,
                          "known": j.known_under, "outputs_among": j.outputs_among}
    if "full" in inspect.signature(InboxWatcher.__init__).parameters:
        kw["full"] = tracker.full  # as Service passes it (this branch on)
    w = InboxWatcher([InboxCfg(path=inbox, name="in", stability_delay=1.0)], tracker.notice, **kw)
    tracker.start()
    w.start()
    try:
        w.scan()
        time.sleep(2)
        rss_start, c0, t0 = rss_mb(), time.process_time(), time.monotonic()
        for name in names:
            os.rename(stage / name, inbox / name)
        rename_s = time.monotonic() - t0
        samples: list[dict[str, Any]] = []
        while time.monotonic() - t0 < window:
            time.sleep(1)
            queued = sum(o.event_queue.qsize() for o in w._observers)
            samples.append({"t": round(time.monotonic() - t0, 1), "admitted": admitted[0], "queued_events": queued,
                            "tracked": tracker.pending(), "rss_mb": round(rss_mb(), 1), "sqlite_mb": sqlite_mb(),
                            "threads": threading.active_count()})
            if admitted[0] >= n:
                break
        cpu = time.process_time() - c0
    finally:
        w.stop()
        tracker.stop()
        j.close()
        shutil.rmtree(root, ignore_errors=True)
    last = samples[-1]
    return {"part": "admit", "dropped": n, "window_s": window, "rename_s": round(rename_s, 1),
            "admitted": last["admitted"], "elapsed_s": last["t"], "all_admitted": last["admitted"] >= n,
            "cpu_s": round(cpu, 1), "cpu_per_file_ms": round(1000 * cpu / max(1, last["admitted"]), 3),
            "rss_mb_start": round(rss_start, 1), "rss_mb_max": max(s["rss_mb"] for s in samples),
            "rss_mb_end": last["rss_mb"], "queued_events_max": max(s["queued_events"] for s in samples),
            "sqlite_mb_max": max((s["sqlite_mb"] or 0) for s in samples),
            "samples": samples[::5] + ([last] if len(samples) % 5 != 1 else [])}


def daemon_journal_part(n: int, docs: int, tmp: Path | None) -> dict[str, Any]:
    """The whole daemon on a journal of ``n`` finished documents (issue 34: "CPU per new document
    at 1M journal rows within 1.5x of 1k rows"): the journal built as ``journal_part`` builds it, in
    the daemon's state folder; ``ocr-daemon run`` started on it; ``docs`` tiny born-digital PDFs
    renamed into its inbox at once; the daemon's and its workers' CPU (``/proc``) from the drop
    until the journal has them all done, per document."""
    root = Path(tempfile.mkdtemp(prefix="bench-scale-dj-", dir=tmp))
    proc = None
    try:
        t0 = time.monotonic()
        j = Journal(root / "state")
        _add_done_rows(j, n, BATCH)
        j.close()
        built = time.monotonic() - t0
        stage = root / "stage"
        _stage_invoices(stage, docs, "new")
        (root / "in").mkdir()
        proc, port = _start(root, _config(root, 3600.0))
        time.sleep(5)
        rss_start, c0, w0 = rss_mb(proc.pid), tree_cpu(proc.pid), time.monotonic()
        for f in sorted(os.listdir(stage)):
            os.rename(stage / f, root / "in" / f)
        ro = Journal(root / "state", readonly=True)
        done = 0
        while time.monotonic() - w0 < 1800:
            time.sleep(0.5)
            counts = ro.counts()
            done = counts.get("done", 0) + counts.get("duplicate", 0) - n
            if done >= docs:
                break
        wall, cpu = time.monotonic() - w0, tree_cpu(proc.pid) - c0
        ro.close()
        return {"part": "daemon_journal", "rows": n, "build_s": round(built, 1), "docs": docs, "done": done,
                "wall_s": round(wall, 1), "docs_per_s": round(done / wall, 2), "cpu_s": round(cpu, 2),
                "cpu_per_doc_ms": round(1000 * cpu / max(1, done), 1), "rss_mb_start": round(rss_start, 1),
                "rss_mb_end": round(rss_mb(proc.pid), 1), "status_ms_median": _status_ms(port)}
    finally:
        if proc is not None:
            _stop(proc)
        shutil.rmtree(root, ignore_errors=True)
