"""Helpers shared by the fault-injection tests (tests/e2e/test_faults*.py, tests/test_statemachine.py)
and bench/bench_load.py: tiny real inputs, a fast daemon config, kill triggers driven by inotify,
RSS sampling from /proc, and the "exactly once" invariant checked on the real folders.

Nothing here fakes the daemon: tests start ``python -m daemon run`` (conftest.DaemonProc) and
look only at what a user would see -- files in the inbox/out/archive/failed folders -- plus the
SQLite journal, read with the sqlite3 module.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import hashlib
import json
import os
import select
import sqlite3
import struct
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conftest import write_rules
from PIL import Image, ImageDraw, ImageFont

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
OUTPUT_EXTS = (".txt", ".md", ".json")
INPUT_EXTS = (".png", ".pdf", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".bmp")

# ---------------------------------------------------------------------------------------------
# small filesystems (a full disk, a read-only destination)


def mount(*args: str) -> bool:
    """``mount ARGS``; True when it worked."""
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


@contextlib.contextmanager
def tmpfs(mnt: Path, size: str) -> Iterator[Path]:
    """``mnt`` (made here) as a tmpfs of ``size`` (``16m``) while the block runs, unmounted after;
    the test is skipped where mounting is refused (root / CAP_SYS_ADMIN needed)."""
    import pytest

    mnt.mkdir()
    if os.geteuid() != 0 or not mount("-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(mnt)):
        pytest.skip("cannot mount a tmpfs here (needs root / CAP_SYS_ADMIN)")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


# ---------------------------------------------------------------------------------------------
# inputs


def tiny_png_bytes(text: str, *, size: tuple[int, int] = (150, 30), font_size: int = 20, bits: int = 8) -> bytes:
    """A real PNG of ``text`` in black on white: a few hundred bytes (``bits=1``: ~150-300)."""
    import io

    img = Image.new("L", size, 255)
    ImageDraw.Draw(img).text((4, 3), text, font=ImageFont.truetype(DEJAVU, font_size), fill=0)
    if bits == 1:
        img = img.convert("1")
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def tiny_png(path: Path, text: str, **kw: Any) -> Path:
    path.write_bytes(tiny_png_bytes(text, **kw))
    return path


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fast_rules(tmp: Path, *, daemon: dict[str, Any] | None = None, engine: dict[str, Any] | None = None,
               inbox: dict[str, Any] | None = None, routes: list[dict[str, Any]] | None = None) -> Path:
    """rules.yaml for fault tests: tiny pages OCRed fast (256 px, English only, no OSD/crop),
    sources archived to ``tmp/archive``, outputs to ``tmp/out`` (one complete set = txt, md, json)."""
    d = {"state_dir": "state", "failed_dir": "failed", "rescan_interval": 2, "retry_backoff": 0.5,
         "retry_backoff_max": 2, "drain_timeout": 10, "workers": 2, "render_workers": 1}
    d.update(daemon or {})
    e = {"kind": "tesseract", "render_longest_edge": 256, "autorotate": False, "crop_borders": False,
         "tesseract": {"threads": 2, "languages": ["en"], "render_dpi": None}}  # None: 256 px pages, not 300 dpi
    e.update(engine or {})
    ib = {"path": "inbox", "stability_delay": 0.3, "invalid_grace": 1}
    ib.update(inbox or {})
    r = routes if routes is not None else [
        {"name": "all", "destination": "out", "source": "archive", "archive_to": "archive"}
    ]
    return write_rules(tmp, daemon=d, engine=e, inboxes=[ib], routes=r)


# ---------------------------------------------------------------------------------------------
# journal and folders


def journal_rows(tmp: Path) -> list[dict[str, Any]]:
    db_file = tmp / "state" / "journal.sqlite3"
    if not db_file.exists():
        return []
    db = sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=30)
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute("SELECT * FROM documents ORDER BY id")]
    finally:
        db.close()


def state_counts(tmp: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in journal_rows(tmp):
        out[r["state"]] = out.get(r["state"], 0) + 1
    return out


def temp_files(root: Path) -> list[Path]:
    """Temp files the daemon's atomic writes could leave (``.<name>.ocr-tmp``)."""
    return [p for p in root.rglob("*") if p.name.endswith(".ocr-tmp")]


def files_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def content_index(*folders: Path) -> dict[str, list[Path]]:
    """sha256 -> paths, for every input-like file in ``folders`` (to find where an input went)."""
    idx: dict[str, list[Path]] = {}
    for f in folders:
        for p in files_in(f):
            if p.suffix.lower() in INPUT_EXTS:
                idx.setdefault(sha256(p.read_bytes()), []).append(p)
    return idx


def output_sets(out: Path) -> dict[str, list[dict[str, Any]]]:
    """sha256 of the source -> sidecars naming it (more than one = processed twice)."""
    sets: dict[str, list[dict[str, Any]]] = {}
    for p in files_in(out):
        if p.suffix == ".json":
            side = json.loads(p.read_text(encoding="utf-8"))
            side["_path"] = str(p)
            sets.setdefault(side["sha256"], []).append(side)
    return sets


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)

    def add(self, msg: str) -> None:
        self.problems.append(msg)

    def __bool__(self) -> bool:  # truthy = all good
        return not self.problems

    def __str__(self) -> str:
        return "\n".join(self.problems) or "ok"


def check_exactly_once(tmp: Path, inputs: dict[str, bytes], *, out: str = "out", archive: str = "archive",
                       expect_text: bool = False) -> Verdict:
    """The issue's invariant on disk, for a route that archives sources and writes txt/md/json:

    every input (name -> content) is in the archive exactly once (not in the inbox, not in the
    failed folder), there is exactly one complete output set (txt, md, json; the sidecar names
    its sha256 and lists three existing outputs) per input, no output set for anything else,
    no temp files anywhere, and the journal has nothing left queued/processing.
    """
    v = Verdict()
    where = content_index(tmp / "inbox", tmp / archive, tmp / "failed")
    sets = output_sets(tmp / out)
    wanted = {sha256(b): name for name, b in inputs.items()}
    for digest, name in wanted.items():
        places = where.get(digest, [])
        if len(places) != 1 or places[0].parent != tmp / archive:
            v.add(f"{name}: expected once in {archive}/, found at {[str(p.relative_to(tmp)) for p in places]}")
        sides = sets.get(digest, [])
        if len(sides) != 1:
            v.add(f"{name}: expected one output set, found {len(sides)}: {[s['_path'] for s in sides]}")
            continue
        outs = [Path(o) for o in sides[0]["outputs"]]
        if sorted(o.suffix for o in outs) != [".json", ".md", ".txt"] or not all(o.is_file() for o in outs):
            v.add(f"{name}: incomplete output set {outs}")
        elif expect_text and not outs[0].with_suffix(".txt").read_text(encoding="utf-8").strip():
            v.add(f"{name}: empty text output")
    for digest in sets:
        if digest not in wanted:
            v.add(f"output set for unknown content {digest[:12]}: {[s['_path'] for s in sets[digest]]}")
    n_out = len([p for p in files_in(tmp / out) if p.suffix in OUTPUT_EXTS])
    if n_out != 3 * len(wanted):
        v.add(f"{n_out} output files for {len(wanted)} inputs (expected {3 * len(wanted)})")
    tmps = temp_files(tmp)
    if tmps:
        v.add(f"temp files left: {tmps}")
    left = [r for r in journal_rows(tmp) if r["state"] in ("queued", "processing")]
    if left:
        v.add(f"journal rows not finished: {[(r['id'], r['state'], r['error']) for r in left]}")
    return v


# ---------------------------------------------------------------------------------------------
# processes


def rss_kb(pid: int) -> int:
    """VmRSS of one process in KiB (0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (render workers, the forkserver)."""
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def tree_rss_kb(pid: int) -> int:
    return sum(rss_kb(p) for p in descendants(pid))


# ---------------------------------------------------------------------------------------------
# inotify for kill triggers (the daemon's own watcher is watchdog; this is the test's, via libc)

IN_CREATE = 0x100
IN_MOVED_TO = 0x80
IN_CLOSE_WRITE = 0x8
IN_NONBLOCK = 0o4000

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


class Inotify:
    """Just enough inotify to kill the daemon the moment a file appears (a few microseconds
    after the daemon's ``open``/``link`` returns, well before its next fsync completes)."""

    def __init__(self) -> None:
        self.fd = _libc.inotify_init1(IN_NONBLOCK)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.wds: dict[int, Path] = {}

    def watch(self, folder: Path, mask: int = IN_CREATE | IN_MOVED_TO) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        wd = _libc.inotify_add_watch(self.fd, os.fsencode(folder), mask)
        if wd < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {folder}")
        self.wds[wd] = folder

    def read(self, timeout: float) -> list[tuple[Path, int]]:
        """Events as (path, mask); [] after ``timeout`` seconds without any."""
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return []
        try:
            buf = os.read(self.fd, 65536)
        except BlockingIOError:
            return []
        out, i = [], 0
        while i + 16 <= len(buf):
            wd, mask, _cookie, ln = struct.unpack_from("iIII", buf, i)
            name = buf[i + 16 : i + 16 + ln].rstrip(b"\0")
            out.append((self.wds.get(wd, Path("?")) / os.fsdecode(name), mask))
            i += 16 + ln
        return out

    def close(self) -> None:
        os.close(self.fd)


def names(paths: Iterable[Path]) -> list[str]:
    return sorted(p.name for p in paths)


# ---------------------------------------------------------------------------------------------
# load: many tiny files dropped at once while the daemon's event reader is stalled


@dataclass
class LoadResult:
    n: int
    seconds: float  # first drop -> last output
    files_per_s: float
    latency_p50: float
    latency_p99: float
    latency_max: float
    rss_main_max_kb: int
    rss_tree_max_kb: int
    rss_main_start_kb: int
    overflowed: bool
    duplicates: int
    done: int
    stage_means: dict[str, float]
    churn_events: int

    def lines(self) -> list[str]:
        return [
            f"files: {self.n}, done: {self.done}, duplicate output sets: {self.duplicates}, inotify overflow logged: {self.overflowed}"
            f" (churn events while stalled: {self.churn_events})",
            f"first drop -> last output: {self.seconds:.1f} s = {self.files_per_s:.1f} files/s",
            f"drop -> output latency: p50 {self.latency_p50:.1f} s, p99 {self.latency_p99:.1f} s, max {self.latency_max:.1f} s",
            f"RSS daemon process: start {self.rss_main_start_kb / 1024:.0f} MiB, max {self.rss_main_max_kb / 1024:.0f} MiB;"
            f" daemon + render workers max {self.rss_tree_max_kb / 1024:.0f} MiB",
            "mean seconds per document by stage (journal timings): "
            + ", ".join(f"{k} {v:.3f}" for k, v in self.stage_means.items()),
        ]


def make_inputs(folder: Path, n: int, prefix: str = "f") -> dict[str, bytes]:
    """``n`` distinct tiny PNGs (one word and a number each) written to ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for i in range(n):
        name = f"{prefix}{i:05d}.png"
        data = tiny_png_bytes(f"word {i}")
        (folder / name).write_bytes(data)
        out[name] = data
    return out


def _percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(q * (len(s) - 1)))))] if s else 0.0


def run_load(tmp: Path, d: Any, staged: Path, inputs: dict[str, bytes], *, timeout: float, churn: int | None = None,
             on_sample: Any = None) -> LoadResult:
    """Stall the running daemon ``d`` (SIGSTOP), flood its inotify queue past
    ``max_queued_events`` with events on hidden files, move every staged input into the inbox
    (their events are lost in the overflow), resume it (SIGCONT) and wait until every input
    is done. RSS of the daemon (and its render workers) is sampled every 0.5 s."""
    import signal
    import threading
    import time

    inbox = tmp / "inbox"
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    churn = churn if churn is not None else limit + 2000
    pid = d.proc.pid
    rss_start = rss_kb(pid)
    samples: list[tuple[int, int]] = []
    stop = threading.Event()

    def sampler() -> None:
        while not stop.wait(0.5):
            s = (rss_kb(pid), tree_rss_kb(pid))
            samples.append(s)
            if on_sample:
                on_sample(s)

    a, b = inbox / ".churn-a", inbox / ".churn-b"
    a.touch()
    b.touch()
    time.sleep(0.5)  # let the daemon see (and ignore) the churn files' creation
    os.kill(pid, signal.SIGSTOP)
    try:
        # Alternate two names: inotify merges an event identical to the one queued just before.
        for i in range(churn):
            os.utime(a if i % 2 else b)
        dropped: dict[str, float] = {}
        for name in inputs:
            os.rename(staged / name, inbox / name)
            dropped[name] = time.time()
    finally:
        os.kill(pid, signal.SIGCONT)
    t0 = min(dropped.values())
    th = threading.Thread(target=sampler, daemon=True)
    th.start()
    deadline = time.monotonic() + timeout
    done = 0
    try:
        while time.monotonic() < deadline:
            done = state_counts(tmp).get("done", 0)
            if done >= len(inputs) or d.proc.poll() is not None:
                break
            time.sleep(1.0)
    finally:
        stop.set()
        th.join()
    a.unlink()
    b.unlink()
    lat: list[float] = []
    last = t0
    sets = output_sets(tmp / "out")
    for sides in sets.values():
        for s in sides:
            name = s["source"].rsplit("/", 1)[-1]
            t_out = os.stat(s["_path"]).st_mtime
            last = max(last, t_out)
            if name in dropped:
                lat.append(t_out - dropped[name])
    stages: dict[str, list[float]] = {}
    for r in journal_rows(tmp):
        for k, v in json.loads(r["timings"] or "{}").items():
            stages.setdefault(k, []).append(v)
    secs = max(1e-9, last - t0)
    return LoadResult(
        n=len(inputs),
        seconds=secs,
        files_per_s=len(lat) / secs,
        latency_p50=_percentile(lat, 0.5),
        latency_p99=_percentile(lat, 0.99),
        latency_max=max(lat, default=0.0),
        rss_main_max_kb=max((s[0] for s in samples), default=0),
        rss_tree_max_kb=max((s[1] for s in samples), default=0),
        rss_main_start_kb=rss_start,
        overflowed="inotify queue overflowed" in d.log(),
        duplicates=sum(len(v) - 1 for v in sets.values() if len(v) > 1),
        done=done,
        stage_means={k: sum(v) / len(v) for k, v in stages.items()},
        churn_events=churn,
    )
