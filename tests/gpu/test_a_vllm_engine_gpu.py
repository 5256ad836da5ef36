"""VllmEngine on the GPU: pages from several threads, guards, the Pixtral patch in the engine core,
priority overtaking, back-pressure, and recovery from an engine core killed with pages in flight."""

from __future__ import annotations

import concurrent.futures as cf
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from daemon.config import EngineCfg
from daemon.engines.base import PageRequest
from daemon.engines.pixtral_patch import read_marks, resolve_mode
from gpu.gpushare import gpu_slice  # tests/ is on sys.path (tests/conftest.py)

pytestmark = pytest.mark.gpu

#: vLLM runs at most this many requests at once here, so that pages queue inside vLLM and its
#: priority scheduling has something to reorder (the overtaking test).
SEATS = 8


def page(i: int, size: tuple[int, int] = (1176, 1540)) -> Image.Image:
    im = Image.new("RGB", size, "white")
    d = ImageDraw.Draw(im)
    for y in range(40, size[1] - 40, 30):
        d.text((40, y), f"page {i} line {y} total amount 1234.56 invoice reference", fill="black")
    return im


@pytest.fixture(scope="module")
def marker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pixtral") / "marker.jsonl"


@pytest.fixture(scope="module")
def engine(dummy_model: Path, marker: Path):  # type: ignore[no-untyped-def]
    from daemon.engines.vllm_engine import VllmEngine

    cfg = EngineCfg(
        kind="vllm",
        model=str(dummy_model),
        sampling={"max_tokens": 48},
        vllm={"load_format": "dummy", **gpu_slice(), "max_pages_in_flight": 16, "max_num_seqs": SEATS,
              "hang_timeout": 120},
        debug={"pixtral_marker": str(marker)},
    )
    eng = VllmEngine(cfg)
    eng.start()
    yield eng
    eng.close(drain_timeout=5)


def _descendants() -> set[int]:
    import psutil

    return {p.pid for p in psutil.Process(os.getpid()).children(recursive=True)}


def _engine_core_pids() -> list[int]:
    import psutil

    me = psutil.Process(os.getpid())
    return [p.pid for p in me.children(recursive=True) if "EngineCore" in " ".join(p.cmdline()) or "EngineCore" in p.name()]


def test_pages_from_many_threads_come_back_in_place(engine) -> None:  # type: ignore[no-untyped-def]
    reqs = [PageRequest(f"doc-{i // 4}", i % 4, page(i), priority=i % 4) for i in range(24)]
    with cf.ThreadPoolExecutor(6) as ex:
        futs = list(ex.map(engine.submit, reqs))
    res = [f.result(timeout=600) for f in futs]
    assert [r.index for r in res] == [r.index for r in reqs]
    for r in res:
        assert r.engine == engine.name and r.engine.startswith("vllm:")
        assert r.text.strip()
        # dummy weights emit noise until max_tokens: every page is 'dense' and gets banded
        assert "banded" in r.flags
        assert r.meta["attempts"] >= 3
    assert engine.healthy()
    # what vLLM made of the arguments is known and is what the config asked for
    assert engine.in_force.get("max_num_seqs") == SEATS, engine.in_force


def test_pixtral_patch_runs_in_the_engine_core(engine, marker: Path) -> None:  # type: ignore[no-untyped-def]
    """The patch is applied in this process before vLLM forks its engine core; the marker proves
    the patched encoder is what ran there (a spawned core would not have it, and write nothing)."""
    pytest.importorskip("psutil")
    marks = read_marks(marker)
    assert marks, "no process ran the patched Pixtral encoder: the engine core runs vLLM's own"
    want = resolve_mode("varlen")  # bench/device_session.sh falls back to per_image if test_c failed
    assert {m.mode for m in marks} == {want}, marks
    assert all(m.pid != os.getpid() for m in marks), "the encoder ran in the test process, not in vLLM's engine core"
    assert {m.pid for m in marks} & _descendants(), f"no marker from a live vLLM child process: {marks}"
    print("Pixtral encoder in the engine core:", sorted({(m.mode, m.kernel) for m in marks}))


def test_small_high_priority_page_overtakes_pages_queued_earlier(engine) -> None:  # type: ignore[no-untyped-def]
    """15 big pages (priority 5) fill vLLM's 8 seats and queue behind them; a small page
    (priority 0) submitted after they are all in vLLM finishes before most of them."""
    done_at: dict[str, float] = {}
    lock = threading.Lock()

    def note(key: str):  # type: ignore[no-untyped-def]
        def cb(_f: cf.Future[object]) -> None:
            with lock:
                done_at[key] = time.monotonic()

        return cb

    big = []
    for i in range(15):
        f = engine.submit(PageRequest("doc-big", i, page(300 + i), priority=5))
        f.add_done_callback(note(f"big{i}"))
        big.append(f)
    # every big page's first request reaches vLLM (input processing takes well under a second)
    deadline = time.monotonic() + 60
    while engine._inflight < len(big) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    waiting = [f"big{i}" for i, f in enumerate(big) if not f.done()]
    small = engine.submit(PageRequest("doc-small", 0, page(999, (600, 800)), priority=0))
    small.add_done_callback(note("small"))
    assert small.result(timeout=600).text.strip()
    for f in big:
        f.result(timeout=600)
    settle = time.monotonic() + 5  # done-callbacks run just after result() may return
    while len(done_at) < len(big) + 1 and time.monotonic() < settle:
        time.sleep(0.01)
    assert len(waiting) >= 8, f"only {len(waiting)} big pages were still queued or running: nothing to overtake"
    after = [k for k in waiting if done_at[k] > done_at["small"]]
    # first come, first served would finish the small page among the last (its bands queue behind
    # theirs); vLLM's priority scheduling gives it the next free seat each time
    assert len(after) > len(waiting) // 2, f"only {len(after)} of {len(waiting)} earlier big pages finished after the small one"
    print(f"overtaking: the small page finished before {len(after)} of the {len(waiting)} big pages queued before it")


def test_back_pressure_bounds_pages_in_flight(engine) -> None:  # type: ignore[no-untyped-def]
    # max_pages_in_flight=16: submit() must block beyond that, never hold more.
    held = []
    peak = 0
    lock = threading.Lock()

    def sub(i: int) -> None:
        nonlocal peak
        f = engine.submit(PageRequest("doc-bp", i, page(i, (600, 800)), priority=5))
        with lock:
            held.append(f)
            peak = max(peak, sum(1 for x in held if not x.done()))
        f.result(timeout=600)

    with cf.ThreadPoolExecutor(32) as ex:
        list(ex.map(sub, range(40)))
    assert 8 < peak <= 16  # the bound was reached (32 threads), never passed


def test_killed_engine_core_restarts_and_loses_no_page(engine, marker: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("psutil")
    pids = _engine_core_pids()
    assert pids, "no vLLM EngineCore child process found"
    restarts = engine.stats["restarts"]
    futs = [engine.submit(PageRequest(f"doc-k{i}", 0, page(100 + i))) for i in range(12)]
    # strike while requests are inside vLLM: past input processing, decoding
    deadline = time.monotonic() + 60
    while engine._inflight == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.5)
    requests_in_vllm = engine._inflight
    pages_unfinished = sum(1 for f in futs if not f.done())
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    assert requests_in_vllm > 0 and pages_unfinished > 0, (requests_in_vllm, pages_unfinished)
    res = [f.result(timeout=900) for f in futs]
    assert [r.index for r in res] == [0] * 12 and all(r.text.strip() for r in res)
    assert engine.stats["restarts"] >= restarts + 1
    assert engine.healthy()
    # the restarted engine core is a new fork: it has the patch too
    new_cores = set(_engine_core_pids()) - set(pids)
    assert new_cores, "no new EngineCore process after the restart"
    assert {m.pid for m in read_marks(marker)} & (new_cores | _descendants()) - set(pids)
    print(f"kill: {requests_in_vllm} request(s) in vLLM, {pages_unfinished}/12 page(s) unfinished; all 12 came back")
