"""Cost of ``routes[].on_done`` hooks (daemon/service/hooks.py, daemon/journal/deliveries.py).

Three figures, in one process, on a temp journal:

1. ``deliveries.plan`` per document (what a route with a hook adds before "done": one synced
   SQLite commit holding the sidecar's bytes), with a ``--payload-kb`` sidecar;
2. what a route without hooks adds (``deliveries.of_document``: one read);
3. the dispatcher: ``--n`` webhook deliveries by ``hooks.Dispatcher`` (its default threads) to a
   local ``ThreadingHTTPServer`` answering 200 -- deliveries/s, and the first one's latency.

Usage: OMP_THREAD_LIMIT=1 .venv/bin/python bench/bench_hooks.py [--n 200] [--payload-kb 50]
"""

from __future__ import annotations

import argparse
import http.server
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from daemon.journal import deliveries  # noqa: E402
from daemon.journal.deliveries import HookSpec  # noqa: E402
from daemon.journal.store import Journal  # noqa: E402
from daemon.service.hooks import HOOK_THREADS, Dispatcher  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200, help="documents (deliveries)")
    ap.add_argument("--payload-kb", type=int, default=50, help="sidecar size")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="bench-hooks-"))
    try:
        run(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(args: argparse.Namespace, tmp: Path) -> None:
    journal = Journal(tmp / "state")
    (tmp / "in").mkdir()
    ids = []
    for i in range(args.n):
        f = tmp / "in" / f"{i}.png"
        f.write_bytes(b"x" * (i + 1))
        adm = journal.admit(f, "in")
        assert adm.document is not None
        ids.append(adm.document.id)

    received: list[float] = []

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            received.append(time.monotonic())
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *a: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    spec = HookSpec("webhook", f"http://127.0.0.1:{server.server_port}/hook", 10, 3, 1, 10)
    payload = json.dumps({"text": "x" * (args.payload_kb * 1024)}).encode()

    plan_s = []
    for i in ids:
        t0 = time.perf_counter()
        deliveries.plan(journal, i, "bench", [spec], tmp / "sidecar.json", payload)
        plan_s.append(time.perf_counter() - t0)
    read_s = []
    for i in ids:
        t0 = time.perf_counter()
        deliveries.of_document(journal, i)
        read_s.append(time.perf_counter() - t0)
    for i in ids:
        journal.claim(i)
        journal.finish(i, language="en", doctype="other", route="bench", pages=1, outputs=[], final_path=None, timings={})

    dispatcher = Dispatcher(journal)
    t0 = time.monotonic()
    dispatcher.start()
    while deliveries.pending_count(journal):
        time.sleep(0.02)
    took = time.monotonic() - t0
    dispatcher.stop()
    server.shutdown()

    q = statistics.quantiles(plan_s, n=10)
    print(json.dumps({
        "n": args.n, "payload_kb": args.payload_kb, "threads": HOOK_THREADS,
        "plan_ms_median": round(statistics.median(plan_s) * 1000, 2), "plan_ms_p90": round(q[-1] * 1000, 2),
        "no_hooks_read_ms_median": round(statistics.median(read_s) * 1000, 3),
        "deliveries_per_s": round(args.n / took, 1), "first_delivery_ms": round((received[0] - t0) * 1000, 1),
    }))


if __name__ == "__main__":
    main()
