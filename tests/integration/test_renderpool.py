"""RenderPool: real forkserver worker processes, fed by priority; kill/reset; memory cap."""

from __future__ import annotations

import concurrent.futures as cf
import os
import threading
import time
from concurrent.futures.process import BrokenProcessPool

import pytest

from daemon.pages.renderpool import OPEN_PRIORITY, RenderPool


@pytest.fixture
def pool():  # type: ignore[no-untyped-def]
    p = RenderPool(1, memory_mb=512)
    yield p
    p.close()


def _wait_started(task, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while task.started is None:
        assert time.monotonic() < end, "task never began on a worker"
        time.sleep(0.01)


def _wait_handed(task, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while task.handed is None:
        assert time.monotonic() < end, "task never handed to the process pool"
        time.sleep(0.01)


def _crash() -> None:
    os.kill(os.getpid(), 9)


def test_waiting_tasks_run_by_priority_not_submission_order(pool: RenderPool) -> None:
    order: list[str] = []
    lock = threading.Lock()

    def label(name: str):  # type: ignore[no-untyped-def]
        def cb(_f) -> None:  # type: ignore[no-untyped-def]
            with lock:
                order.append(name)
        return cb

    # one worker + one prefetched task: both slots taken before the rest is submitted
    blocker = pool.submit(time.sleep, 0.5, priority=0)
    blocker.add_done_callback(label("blocker"))
    prefetched = pool.submit(time.sleep, 0.01, priority=9)
    prefetched.add_done_callback(label("prefetched"))
    _wait_started(blocker)
    _wait_handed(prefetched)
    assert prefetched.started is None  # in the process pool's queue, behind ``blocker``
    lows = [pool.submit(time.sleep, 0.01, priority=5 + i) for i in range(4)]
    for i, t in enumerate(lows):
        t.add_done_callback(label(f"page{i + 5}"))
    first_page = pool.submit(time.sleep, 0.01, priority=0)
    first_page.add_done_callback(label("page0"))
    opening = pool.submit(time.sleep, 0.01, priority=OPEN_PRIORITY)
    opening.add_done_callback(label("open"))
    assert all(t.started is None for t in [*lows, first_page, opening])  # slots full: all wait
    for t in [blocker, prefetched, *lows, first_page, opening]:
        t.result(timeout=60)
    assert order == ["blocker", "prefetched", "open", "page0", "page5", "page6", "page7", "page8"]
    assert prefetched.started is not None and prefetched.started - blocker.started >= 0.5  # began when blocker ended
    assert opening.started is not None and lows[0].started is not None and opening.started < lows[0].started


def test_kill_fails_only_its_task_the_prefetched_and_waiting_ones_run_on_a_new_pool(pool: RenderPool) -> None:
    hung = pool.submit(time.sleep, 60)
    prefetched = pool.submit(os.getpid)  # handed to the same process pool, behind ``hung``
    _wait_started(hung)
    _wait_handed(prefetched)
    time.sleep(0.3)  # let the worker take ``hung`` and the pool's queue take ``prefetched``
    waiting = pool.submit(os.getpid)  # still in the priority queue
    assert waiting.handed is None and prefetched.started is None
    time.sleep(1.0)
    assert not prefetched.overdue(1.0)  # its clock has not run while ``hung`` held the worker
    first = hung.executor
    pool.kill(hung)
    with pytest.raises(BrokenProcessPool):
        hung.result(timeout=30)
    # it never ran: it goes back to the queue and runs on the new process pool, not failed
    assert isinstance(prefetched.result(timeout=60), int)
    assert prefetched.executor is not None and prefetched.executor is not first
    assert isinstance(waiting.result(timeout=60), int)
    assert waiting.executor is not None and waiting.executor is not first


def test_kill_reruns_the_other_workers_pages(tmp_path) -> None:  # type: ignore[no-untyped-def]
    p = RenderPool(2, memory_mb=512)
    try:
        hung = p.submit(time.sleep, 60)
        innocent = p.submit(time.sleep, 1.5)  # the second worker, running when the kill comes
        _wait_started(hung)
        _wait_started(innocent)
        time.sleep(0.3)
        first = hung.executor
        p.kill(hung)
        with pytest.raises(BrokenProcessPool):
            hung.result(timeout=30)
        assert innocent.result(timeout=60) is None  # ran again, whole, on the new pool
        assert innocent.executor is not first
    finally:
        p.close()


def test_crashed_worker_fails_the_running_task_and_reruns_the_one_behind_it(pool: RenderPool) -> None:
    crasher = pool.submit(_crash)
    behind = pool.submit(os.getpid)  # prefetched behind it, never began
    with pytest.raises(BrokenProcessPool):
        crasher.result(timeout=60)
    assert isinstance(behind.result(timeout=60), int)
    assert behind.executor is not crasher.executor


def test_a_task_cancelled_after_it_was_sent_back_is_dropped(pool: RenderPool) -> None:
    hung = pool.submit(time.sleep, 60)
    prefetched = pool.submit(os.getpid)
    _wait_started(hung)
    _wait_handed(prefetched)
    time.sleep(0.3)
    blocker = pool.submit(time.sleep, 1.0, priority=-5)  # runs first on the new pool
    pool.kill(hung)
    assert not prefetched.cancel()  # it was already running: cancel() cannot stop it ...
    blocker.result(timeout=60)
    with pytest.raises(cf.CancelledError):  # ... but when it comes back to the queue it is dropped
        prefetched.result(timeout=60)


def test_close_fails_a_task_that_was_sent_back_to_the_queue() -> None:
    p = RenderPool(1, memory_mb=512)
    try:
        hung = p.submit(time.sleep, 60)
        prefetched = p.submit(os.getpid)
        _wait_started(hung)
        _wait_handed(prefetched)
        time.sleep(0.3)
        # two tasks ahead of it by priority fill the new pool's worker and prefetch slot
        blockers = [p.submit(time.sleep, 3.0, priority=-5), p.submit(time.sleep, 3.0, priority=-4)]
        p.kill(hung)
        _wait_started(blockers[0])
        _wait_handed(blockers[1])
        assert prefetched.running() and prefetched.handed is None  # back in the queue, not done
    finally:
        p.close()
    with pytest.raises(BrokenProcessPool, match="closed"):
        prefetched.result(timeout=10)


def test_cancel_while_waiting_and_close_fails_the_rest() -> None:
    p = RenderPool(1, memory_mb=512)
    try:
        busy = p.submit(time.sleep, 0.5)
        p.submit(time.sleep, 0)  # the prefetch slot
        _wait_started(busy)
        skipped = p.submit(time.sleep, 0)
        left = p.submit(time.sleep, 0)
        assert skipped.cancel()
        busy.result(timeout=60)
    finally:
        p.close()
    assert skipped.cancelled() and skipped.started is None
    # ``left`` either ran before close() or was failed by it; it never hangs
    try:
        left.result(timeout=10)
    except BrokenProcessPool as e:
        assert "closed" in str(e)
    with pytest.raises(RuntimeError):
        p.submit(time.sleep, 0)


def test_workers_have_an_address_space_cap(pool: RenderPool) -> None:
    with pytest.raises(MemoryError):
        pool.submit(bytearray, 1024 * 1024 * 1024).result(timeout=60)
    assert pool.submit(len, "still works").result(timeout=60) == 11  # the worker survived


def test_workers_run_nice_steps_below_the_daemon(pool: RenderPool) -> None:
    # os.nice(0) reads the calling process's niceness without changing it
    assert pool.submit(os.nice, 0).result(timeout=60) == os.nice(0)  # the default: same priority
    lower = RenderPool(1, memory_mb=512, nice=10)
    try:
        assert lower.submit(os.nice, 0).result(timeout=60) == min(19, os.nice(0) + 10)
    finally:
        lower.close()
