#!/usr/bin/env python3
"""The cost of the shared journal's fencing check on a page record (docs/scaling.md).

    OMP_THREAD_LIMIT=1 .venv/bin/python bench/bench_fence_cost.py [--records 400] [--rounds 3]

A real PostgreSQL (tests/pgserver.py: an initdb'd cluster in a temp folder, fsync off, torn down
after); one claimed document; ``record_page`` of a ~5 KiB page text timed with the claim token
checked (as the daemon runs) and with the check skipped (the journal forgets the token it
holds, as before fencing), alternately, per round. Prints ms per record.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from pagerecords import ocr_page  # noqa: E402
from pgserver import PgServer, find_bin  # noqa: E402

from daemon.journal.pgstore import PostgresJournal  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    srv = PgServer(find_bin())
    srv.start()
    try:
        url = srv.create_db()
        tmp = Path(tempfile.mkdtemp(prefix="fence-cost-"))
        j = PostgresJournal(url, tmp / "state")
        f = tmp / "x.pdf"
        f.write_bytes(b"x")
        adm = j.admit(f, "in")
        assert adm.document is not None and j.claim(adm.document.id)
        doc = adm.document.id
        text = "lorem ipsum " * 400  # ~5 KiB, a page's text

        def run() -> float:
            t = time.perf_counter()
            for i in range(args.records):
                j.record_page(doc, "k", ocr_page(i % 50, text, "t", seconds=0.1))
            return (time.perf_counter() - t) / args.records * 1000

        for rnd in range(args.rounds):
            fenced = run()
            token = j._held.pop(doc)  # unchecked: as before fencing
            plain = run()
            j._held[doc] = token
            print(f"round {rnd}: record_page fenced {fenced:.2f} ms, unfenced {plain:.2f} ms")
        j.close()
    finally:
        srv.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
