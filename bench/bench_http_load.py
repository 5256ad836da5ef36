"""HTTP load benchmark (issue 25, item 5): the daemon's endpoint under idle connections, a burst
of /status requests and concurrent uploads, over loopback only.

A real ``ocr-daemon run`` (Tesseract engine, an empty inbox, ``daemon.http`` on 127.0.0.1:0) is
started from ``--repo`` (default: this checkout; give a checkout of an older commit to measure
its server the same way), then:

1. baseline: ``--probes`` sequential ``GET /healthz/live`` (a new connection each);
2. ``--idle`` connections opened and left idle (nothing sent), then the same probes;
3. with those still open: ``--burst`` concurrent ``GET /status`` (one connection each, started
   together) while the probes go on; reported: how many were answered, the time until the last
   answer, their latency p50/p99, and the latency p50/p99/max and failures of the probes started
   before the burst ended;
4. how many idle connections the server kept open at each step, and when it had closed them all
   (looked at every 0.5 s for 90 s; the new server closes them after its head timeout);
5. ``--uploads`` concurrent uploads of ``--upload-mb`` MiB each (Content-Length, streamed from
   the client): the statuses and the daemon's peak RSS growth (VmHWM, reset first).

Every socket has a timeout (``--timeout``), the daemon is stopped at the end (SIGTERM, then
SIGKILL), the temporary folder removed: it stops by itself. One JSON line per run is appended
to ``--out``.

Usage:
  OMP_THREAD_LIMIT=1 .venv/bin/python bench/bench_http_load.py [--label new]
  git archive <old commit> | tar -x -C /tmp/old && \\
    OMP_THREAD_LIMIT=1 .venv/bin/python bench/bench_http_load.py --repo /tmp/old --old --label old
(``--old``: the rules file leaves out keys the old schema does not know.)
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import platform
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
MIB = 1 << 20


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    v = sorted(values)
    return round(v[min(len(v) - 1, int(q * len(v)))] * 1000, 2)  # ms


def versions(old: bool) -> str:
    out = [f"Python {platform.python_version()}"]
    if not old:
        import h11
        import starlette
        import uvicorn

        out.append(f"uvicorn {uvicorn.__version__} (h11 {h11.__version__}), starlette {starlette.__version__}")
    else:
        out.append("stdlib http.server (ThreadingHTTPServer)")
    return ", ".join(out)


def machine() -> str:
    model = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                  if ln.startswith("model name")), "?")
    load = os.getloadavg()
    return f"{os.cpu_count()} cores ({model}), load {load[0]:.1f} at start, Linux {platform.release()}"


def start_daemon(repo: Path, tmp: Path, *, old: bool, upload_mb: int, uploads: int) -> tuple[subprocess.Popen[bytes], int, Path]:
    http: dict[str, Any] = {"listen": "127.0.0.1:0", "upload": True, "upload_max_mb": upload_mb + 1}
    if not old:
        http["upload_concurrency"] = max(1, uploads)  # like for like: every upload accepted
    rules = {
        "daemon": {"state_dir": "state", "failed_dir": "failed", "drain_timeout": 5, "workers": 1, "render_workers": 1,
                   "http": http},
        "engine": {"kind": "tesseract", "tesseract": {"threads": 1, "languages": ["en"]}},
        "inboxes": [{"path": "inbox", "stability_delay": 0.5}],
        "routes": [{"name": "all", "destination": "out"}],
    }
    (tmp / "inbox").mkdir()
    (tmp / "rules.yaml").write_text(yaml.safe_dump(rules, sort_keys=False))
    log = tmp / "daemon.log"
    env = {**os.environ, "OMP_THREAD_LIMIT": "1", "PYTHONUNBUFFERED": "1"}
    env.pop("NOTIFY_SOCKET", None)
    with log.open("wb") as f:
        proc = subprocess.Popen([sys.executable, "-m", "daemon", "run", "--config", str(tmp / "rules.yaml")],
                                stdout=f, stderr=subprocess.STDOUT, cwd=repo, env=env)
    deadline = time.monotonic() + 120
    port = None
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        m = re.search(r"http endpoint listening on http://127\.0\.0\.1:(\d+)", text)
        if m:
            port = int(m.group(1))
        if port and "initial scan:" in text:
            return proc, port, log
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    stop(proc)
    raise SystemExit(f"the daemon did not start:\n{log.read_text(errors='replace')[-3000:]}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def get(port: int, path: str, timeout: float) -> tuple[int, float, str]:
    """(status or 0, seconds, error)."""
    t0 = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"Host": "localhost"})
        r = conn.getresponse()
        r.read()
        return r.status, time.monotonic() - t0, ""
    except (OSError, http.client.HTTPException) as e:
        return 0, time.monotonic() - t0, type(e).__name__
    finally:
        conn.close()


class Prober(threading.Thread):
    """``GET /healthz/live`` again and again until stopped (at least ``minimum`` times)."""

    def __init__(self, port: int, timeout: float, minimum: int) -> None:
        super().__init__(daemon=True)
        self.port, self.timeout, self.minimum = port, timeout, minimum
        self.stopped = threading.Event()
        self.samples: list[tuple[float, int, float, str]] = []  # (started, status, seconds, error)

    def run(self) -> None:
        while not (self.stopped.is_set() and len(self.samples) >= self.minimum):
            t = time.monotonic()
            status, secs, err = get(self.port, "/healthz/live", self.timeout)
            self.samples.append((t, status, secs, err))

    def figures(self, until: float | None = None) -> dict[str, Any]:
        """Of the probes started before ``until`` (all: None)."""
        rows = [r for r in self.samples if until is None or r[0] < until]
        ok = [secs for _, status, secs, _ in rows if status == 200]
        failed = [err or str(status) for _, status, _, err in rows if status != 200]
        return {"n": len(rows), "failed": len(failed), "p50_ms": pct(ok, 0.5), "p99_ms": pct(ok, 0.99),
                "max_ms": pct(ok, 1.0), "errors": sorted(set(failed))[:5]}


def probe(port: int, n: int, timeout: float) -> dict[str, Any]:
    p = Prober(port, timeout, n)
    p.stopped.set()
    p.run()
    return p.figures()


def open_idle(port: int, n: int, timeout: float) -> tuple[list[socket.socket], int]:
    socks, refused = [], 0
    for _ in range(n):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
            socks.append(s)
        except OSError:
            refused += 1
    return socks, refused


def still_open(socks: list[socket.socket]) -> int:
    n = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(1, socket.MSG_PEEK):
                n += 1
        except BlockingIOError:
            n += 1  # nothing to read and not closed
        except OSError:
            pass
        s.setblocking(True)
    return n


class IdleWatch(threading.Thread):
    """Looks at the idle connections every 0.5 s (up to 90 s): how many the server keeps open,
    and when it has closed them all (seconds after they were opened)."""

    def __init__(self, socks: list[socket.socket], since: float) -> None:
        super().__init__(daemon=True)
        self.socks, self.since = socks, since
        self.all_closed_after: float | None = None
        self._open = len(socks)

    def open_now(self) -> int:
        return self._open

    def run(self) -> None:
        while time.monotonic() < self.since + 90:
            self._open = still_open(self.socks)
            if not self._open:
                self.all_closed_after = round(time.monotonic() - self.since, 1)
                return
            time.sleep(0.5)


def burst(port: int, n: int, timeout: float) -> dict[str, Any]:
    results: list[tuple[int, float, str]] = []
    lock = threading.Lock()
    gate = threading.Barrier(n + 1)

    def one() -> None:
        gate.wait()
        r = get(port, "/status", timeout)
        with lock:
            results.append(r)

    threads = [threading.Thread(target=one, daemon=True) for _ in range(n)]
    for t in threads:
        t.start()
    gate.wait()
    t0 = time.monotonic()
    for t in threads:
        t.join(timeout + 5)
    ok = [s for code, s, _ in results if code == 200]
    return {"n": n, "answered_200": len(ok), "failed": n - len(ok), "all_answered_s": round(time.monotonic() - t0, 3),
            "p50_ms": pct(ok, 0.5), "p99_ms": pct(ok, 0.99),
            "errors": sorted({e or str(c) for c, _, e in results if c != 200})[:5]}


def rss(pid: int, key: str = "VmRSS") -> int:
    m = re.search(rf"^{key}:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.MULTILINE)
    return int(m.group(1)) * 1024 if m else 0


def uploads(port: int, pid: int, n: int, mb: int, timeout: float) -> dict[str, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request("GET", "/upload", headers={"Host": "localhost"})
    m = re.search(r'name="token" value="([^"]+)"', conn.getresponse().read().decode())
    conn.close()
    if not m:
        return {"error": "no upload form"}
    token = m.group(1)
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM := VmRSS
    base = rss(pid, "VmHWM")
    codes: list[int] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        b = "bench" + secrets.token_hex(6)
        head = (f'--{b}\r\nContent-Disposition: form-data; name="token"\r\n\r\n{token}\r\n'
                f'--{b}\r\nContent-Disposition: form-data; name="file"; filename="load-{i}.png"\r\n\r\n').encode()
        tail = f"\r\n--{b}--\r\n".encode()
        block = bytes(range(256)) * 4096  # 1 MiB

        def body() -> Iterator[bytes]:
            yield head
            for _ in range(mb):
                yield block
            yield tail

        c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        try:
            c.request("POST", "/upload", body=body(), headers={
                "Host": "localhost", "Content-Type": f"multipart/form-data; boundary={b}",
                "Content-Length": str(len(head) + mb * MIB + len(tail))})
            code = c.getresponse().status
        except (OSError, http.client.HTTPException):
            code = 0
        finally:
            c.close()
        with lock:
            codes.append(code)

    t0 = time.monotonic()
    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout * 4)
    return {"n": n, "mb_each": mb, "statuses": sorted(codes), "seconds": round(time.monotonic() - t0, 2),
            "rss_before_mb": round(base / MIB, 1), "peak_rss_growth_mb": round((rss(pid, "VmHWM") - base) / MIB, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path, default=REPO, help="the checkout whose daemon is measured")
    ap.add_argument("--old", action="store_true", help="the checkout predates the new daemon.http keys")
    ap.add_argument("--label", default="new")
    ap.add_argument("--idle", type=int, default=600)
    ap.add_argument("--burst", type=int, default=200)
    ap.add_argument("--probes", type=int, default=100)
    ap.add_argument("--uploads", type=int, default=6)
    ap.add_argument("--upload-mb", type=int, default=99)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds any one request may take")
    ap.add_argument("--out", type=Path, default=REPO / "bench/results/2026-12-02/http_load.jsonl")
    args = ap.parse_args()

    commit = subprocess.run(["git", "-C", str(args.repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "(no git: an archive)"
    rec: dict[str, Any] = {"date": datetime.now(UTC).isoformat(timespec="seconds"), "label": args.label,
                           "repo": str(args.repo), "commit": commit, "machine": machine(), "versions": versions(args.old),
                           "command": " ".join(sys.argv)}
    tmp = Path(tempfile.mkdtemp(prefix="bench-http-"))
    proc, port, log = start_daemon(args.repo, tmp, old=args.old, upload_mb=args.upload_mb, uploads=args.uploads)
    socks: list[socket.socket] = []
    try:
        rec["rss_start_mb"] = round(rss(proc.pid) / MIB, 1)
        rec["live_baseline"] = probe(port, args.probes, args.timeout)
        t0 = time.monotonic()
        socks, refused = open_idle(port, args.idle, args.timeout)
        t_idle = time.monotonic()
        watch = IdleWatch(socks, t_idle)
        watch.start()
        time.sleep(1)
        rec["idle"] = {"opened": len(socks), "refused": refused, "open_s": round(t_idle - t0, 2),
                       "daemon_threads": _threads(proc.pid), "rss_mb": round(rss(proc.pid) / MIB, 1),
                       "open_before_probes": watch.open_now()}
        rec["live_with_idle"] = probe(port, args.probes, args.timeout)
        rec["idle"]["open_before_burst"] = watch.open_now()
        prober = Prober(port, args.timeout, args.probes)
        prober.start()
        t_burst = time.monotonic()
        rec["status_burst"] = burst(port, args.burst, args.timeout)
        t_end = time.monotonic()
        prober.stopped.set()
        prober.join(args.timeout * args.probes)
        rec["live_during_burst"] = prober.figures(until=t_end)
        rec["live_during_burst"]["burst_s"] = round(t_end - t_burst, 3)
        rec["idle"]["open_after_burst"] = watch.open_now()
        watch.join(max(1.0, t_idle + 90 - time.monotonic()))
        rec["idle"]["all_closed_by_server_after_s"] = watch.all_closed_after
        for s in socks:
            s.close()
        socks = []
        if args.uploads:
            rec["uploads"] = uploads(port, proc.pid, args.uploads, args.upload_mb, args.timeout * 4)
        text = log.read_text(errors="replace")
        rec["daemon_log"] = {"tracebacks": text.count("Traceback"),
                             "thread_errors": text.count("can't start new thread")}
    finally:
        for s in socks:
            s.close()
        stop(proc)
        shutil.rmtree(tmp, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a") as f:
        f.write(json.dumps(rec) + "\n")
    print(json.dumps(rec, indent=2))


def _threads(pid: int) -> int:
    with contextlib.suppress(OSError):
        return len(os.listdir(f"/proc/{pid}/task"))
    return 0


if __name__ == "__main__":
    main()
