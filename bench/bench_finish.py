"""Finishing a burst of documents at once: classify, route, outputs, journal (``Pipeline._finish``).

In the GPU benchmark every page is forced to 1,000 tokens, so the pages of all 32 documents end
within the same second or two and the 32 document workers finish together: on the H200 they
were done one after another over ~2.8 s, the last 2.2-3.2 s after vLLM's last engine step (its
log has whole seconds; bench/RESULTS.md, third follow-up). This
bench times that stage alone on the CPU: --docs documents of --pages pages of text like the dummy
model's (random subwords of many scripts, ~4,400 characters a page, a new text per page so no
cache helps) handed to ``Pipeline._finish`` from one thread each, all released at once, with a
real journal, real source files and real output files (txt, md, json, as the GPU bench's route)
in a temporary folder, render workers warmed as at the daemon's start (``Pipeline.warm``). The engine is a stand-in that only answers what the pipeline reads of
it (``name``, ``output_is_markdown``): nothing here calls it.

Reports the wall time from the release to the last document done, per document, and the same
documents finished one by one on one thread (the GIL's share: with N threads the wall time is
close to the serial one when the work holds the GIL).

Usage: ``.venv/bin/python bench/bench_finish.py [--docs 32] [--pages 8]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from daemon.config import Config  # noqa: E402
from daemon.journal.store import Journal  # noqa: E402
from daemon.pagerecord import EngineText, PageGeometry, PageResult  # noqa: E402
from daemon.service.pipeline import Pipeline  # noqa: E402
from daemon.service.timings import Timings  # noqa: E402


class _Engine:
    """What the pipeline reads of an engine (name for the sidecar, Markdown or not, CPU or not)."""

    name = "vllm"
    output_is_markdown = True
    max_in_flight = 512


def noise_pages(n: int, rng: random.Random) -> list[str]:
    """Pages like a random-weight model's detokenized output: subwords of several scripts."""
    pieces = ["the", "of", "and", "ing", "tion", "er", "ly", "ment", "der", "die", "und", "le", "la", "des", "el", "los", "het", "een", "och", "og", "det"]
    pieces += [chr(c) for c in range(0x4E00, 0x4E00 + 3000, 7)] + [chr(c) for c in range(0x3040, 0x30FF)]
    pieces += list("|#*_-$\\{}<>=+/()[]0123456789")
    pieces += ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 7))) for _ in range(3000)]
    out = []
    for _ in range(n):
        words = []
        for _ in range(1000):  # ~1,000 tokens a page, as the GPU bench forces
            words.append(rng.choice(pieces) + (" " if rng.random() < 0.5 else "") + ("\n" if rng.random() < 0.03 else ""))
        out.append("".join(words))
    return out


def _jobs(journal: Journal, inbox: Path, docs: int, pages: int, rng: random.Random) -> list[tuple[Any, ...]]:
    jobs = []
    for i in range(docs):
        src = inbox / f"doc{i:03d}.pdf"
        src.write_bytes(os.urandom(64) + str(i).encode())
        adm = journal.admit(src, "inbox")
        assert adm.document is not None
        doc = journal.claim(adm.document.id)
        assert doc is not None
        geometry = PageGeometry(size=(1176, 1540), source_size=(1176, 1540), script="Latin")
        finished = [PageResult(index=p, engine="vllm", content=EngineText(t, True, geometry), seconds=1.0)
                    for p, t in enumerate(noise_pages(pages, rng))]
        jobs.append((doc, src, finished))
    return jobs


def _burst(pipe: Pipeline, jobs: list[tuple[Any, ...]], threaded: bool) -> float:
    """Finish ``jobs`` (one thread each, released together, or one by one); wall seconds."""
    go = threading.Event()
    done_at: list[float] = []

    def finish(job: tuple[Any, ...]) -> None:
        doc, src, finished = job
        go.wait()
        outcome = pipe._finish(doc, src, finished, Timings(), time.monotonic())
        assert outcome.state == "done", outcome
        done_at.append(time.monotonic())

    if threaded:
        threads = [threading.Thread(target=finish, args=(j,)) for j in jobs]
        for t in threads:
            t.start()
        t0 = time.monotonic()
        go.set()
        for t in threads:
            t.join()
    else:
        t0 = time.monotonic()
        go.set()
        for j in jobs:
            finish(j)
    return max(done_at) - t0


def run(docs: int, pages: int, workers: int, threaded: bool, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        inbox, out = work / "inbox", work / "out"
        inbox.mkdir()
        cfg = Config.model_validate({
            "daemon": {"state_dir": str(work / "state"), "failed_dir": str(work / "failed")},
            "inboxes": [{"path": str(inbox)}],
            "routes": [{"name": "all", "formats": ["txt", "md", "json"], "destination": str(out)}],
        })
        journal = Journal(cfg.daemon.state_dir)
        pipe = Pipeline(cfg, journal, _Engine(), render_workers=workers)  # type: ignore[arg-type]
        try:
            pipe.warm()  # as the daemon does at start: workers running, modules and model loaded
            jobs = _jobs(journal, inbox, docs, pages, rng)
            wall = _burst(pipe, jobs, threaded)
            files = len(list(out.iterdir()))
        finally:
            pipe.close()
            journal.close()
    return {"mode": "threads" if threaded else "serial", "docs": docs, "pages": pages, "render_workers": workers,
            "wall_s": round(wall, 3), "ms_per_doc": round(wall / docs * 1000, 1), "output_files": files}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=32)
    ap.add_argument("--pages", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", type=int, default=0, help="render workers (0 = the daemon's default: half the CPUs)")
    args = ap.parse_args()
    workers = args.workers or max(1, (os.cpu_count() or 2) // 2)
    print(f"# {platform.node()} {os.cpu_count()} CPUs, Python {platform.python_version()}")
    for r in range(args.repeat):
        for threaded in (True, False):
            print(json.dumps(run(args.docs, args.pages, workers, threaded, seed=r)), flush=True)


if __name__ == "__main__":
    main()
