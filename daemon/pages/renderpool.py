"""Worker processes that open and render documents, fed by priority; the pipeline also runs each
recognised document's classification and output rendering here (``pipeline.prepare_outputs``, at
``OPEN_PRIORITY``), off the daemon's GIL.

Contract:
- ``RenderPool(workers, memory_mb)``; ``submit(fn, *args, priority=p)`` is thread-safe and returns
  a ``RenderTask`` (a ``concurrent.futures.Future``). Tasks wait in a priority queue (lower ``p``
  first, then submission order) and at most ``workers + prefetch`` are handed to the process pool
  at once, so a task's place is decided when a worker is free, not when it was submitted: opening a new
  file (priority -1) and the first pages of a small file overtake page 40 of a big one that was
  queued earlier.
- ``RenderTask.handed`` is the ``time.monotonic()`` at which the task was handed to the process
  pool (``None`` while it waits in the priority queue); ``RenderTask.started`` is when it began
  running on a worker, as far as the pool can tell: the hand-over when fewer tasks than workers
  were unfinished on that process pool, else the moment an earlier task there finished (its
  queue is first in, first out). Callers time out on running time (``deadline``/``overdue``), not
  on queueing, so a page prefetched behind a hung one is not blamed for the hang.
  ``.executor`` is the process pool it ran on.
- ``kill(task)`` kills the workers of the process pool ``task`` runs on (a page that hangs the
  renderer): ``task`` fails with ``BrokenProcessPool``; every other unfinished task of that pool
  (other documents' pages on the other workers, the prefetched ones) goes back into the queue and
  runs on the new pool, so the hang costs nobody else an attempt.
- A worker that crashes breaks its process pool: the tasks that had started on it fail with
  ``BrokenProcessPool`` (one of them crashed it; the pool cannot tell which), tasks that had not
  started go back into the queue, and the pool is rebuilt on the next dispatch. ``cancel()``
  works while a task waits (a task sent back to the queue after it began is dropped, with
  ``CancelledError``, when its turn comes).
- Every task runs through ``run_task``: an exception it raises comes back as itself when it
  pickles, else as a ``RenderWorkerError`` with its type's name and message (PyMuPDF's carry a
  SWIG pointer and cannot be pickled: the task failed with "TypeError: cannot pickle
  'SwigPyObject'" in place of MuPDF's reason). Its result is sent back as it is.
- Workers are forkserver children (the multi-threaded daemon is never forked) with an
  address-space limit (``memory_mb``), so a decompression bomb kills a worker, not the daemon.
- ``close(kill=True)`` kills the workers before waiting for them (the drain's deadline).
- Workers are waited for: ``close()`` shuts the process pool down with ``wait=True`` (each worker
  joined), and the last open ``RenderPool`` of the process then stops multiprocessing's forkserver
  and resource tracker and reaps them (``stop_helpers``). The workers are the forkserver's
  children, reaped by it; unless the forkserver itself is waited for, their CPU time never reaches
  this process's ``RUSAGE_CHILDREN`` (``/usr/bin/time`` missed 15-35 % of ``ocr-daemon once``'s
  CPU) and it outlives us, reparented to init. The wait is bounded (``HELPER_WAIT``): a helper
  that does not end in time is left to end on its own.
- Workers die with the daemon, even after ``kill -9`` (nothing else reaps them outside systemd;
  ~180 MB each). Their parent is the forkserver, which does *not* end with the daemon while
  workers live (every forkserver child holds the pipe whose EOF would end it, and each worker
  holds its own call queue open), so each worker watches the daemon itself: a thread blocked on
  a pidfd of the daemon kills the worker when the daemon exits (checked at start too, in case it
  is gone already), and ``PR_SET_PDEATHSIG`` kills it if the forkserver dies.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import functools
import heapq
import itertools
import multiprocessing
import os
import pickle
import threading
import time
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from daemon.pages import probe, render  # noqa: F401  (render: imported for the workers' warm-up)

#: Priority of opening a file (page count) and of finishing a document: ahead of every page render.
OPEN_PRIORITY = -1

#: Seconds ``stop_helpers`` waits for the forkserver (and the resource tracker) to end once told
#: to: they end as soon as every worker has closed its end of their pipe, which the pool's
#: shutdown(wait=True) has made sure of; a worker killed by a reset may take a moment longer.
HELPER_WAIT = 10.0

_open_lock = threading.Lock()
_open_pools = 0  # RenderPools created and not closed in this process


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with_parent(daemon_pid: int) -> None:
    """In a worker: be killed when the daemon ``daemon_pid`` exits, however it exits (see the
    module contract). A pidfd (Linux >= 5.3) becomes readable when its process ends; where there
    is none, the thread polls the pid every second. ``prctl(PR_SET_PDEATHSIG)`` goes through
    ctypes (no standard-library binding)."""
    import ctypes
    import os
    import select
    import signal

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    try:
        fd: int | None = os.pidfd_open(daemon_pid)
    except ProcessLookupError:
        os._exit(1)  # the daemon died before this worker finished starting
    except (OSError, AttributeError):
        fd = None

    def watch() -> None:
        if fd is not None:
            select.select([fd], [], [])
        else:
            while True:
                time.sleep(1.0)
                try:
                    os.kill(daemon_pid, 0)
                except ProcessLookupError:
                    break
                except PermissionError:
                    continue
        os.kill(os.getpid(), signal.SIGKILL)  # mid-task too: nobody will read its result

    threading.Thread(target=watch, name="die-with-daemon", daemon=True).start()


def _stop_helper(helper: Any, fd_attr: str, pid_attr: str, timeout: float) -> bool:
    """Close our end of ``helper``'s alive pipe (it ends once every holder has) and reap it,
    waiting at most ``timeout`` s; True when it was reaped (or was not running). The helpers are
    ``multiprocessing.forkserver._forkserver`` and ``resource_tracker._resource_tracker``: their
    own ``_stop()`` does this with an unbounded ``waitpid``; the attribute names are theirs
    (CPython 3.11-3.13), looked up defensively."""
    lock = getattr(helper, "_lock", None)
    if lock is None or not hasattr(helper, fd_attr) or not hasattr(helper, pid_attr):
        return False
    with lock:
        fd, pid = getattr(helper, fd_attr), getattr(helper, pid_attr)
        if fd is None or pid is None:
            return True
        os.close(fd)
        setattr(helper, fd_attr, None)
        end = time.monotonic() + timeout
        while True:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid  # reaped elsewhere
            if done:
                setattr(helper, pid_attr, None)
                if fd_attr == "_forkserver_alive_fd":  # its socket file, as its own _stop removes it
                    from multiprocessing import util

                    address = getattr(helper, "_forkserver_address", None)
                    if address and not util.is_abstract_socket_namespace(address):
                        with contextlib.suppress(OSError):
                            os.unlink(address)
                    helper._forkserver_address = None
                return True
            if time.monotonic() >= end:
                # Still running (a worker has not let go of the pipe): it ends on its own later.
                # Forget it, so the next pool starts a fresh one rather than reusing a closed fd.
                setattr(helper, pid_attr, None)
                return False
            time.sleep(0.02)


def stop_helpers(timeout: float = HELPER_WAIT) -> bool:
    """Stop and reap multiprocessing's forkserver and resource tracker (see the module contract);
    True when both were reaped (or not running)."""
    from multiprocessing import forkserver, resource_tracker

    ok = True
    fs = getattr(forkserver, "_forkserver", None)
    if fs is not None:
        ok = _stop_helper(fs, "_forkserver_alive_fd", "_forkserver_pid", timeout) and ok
    rt = getattr(resource_tracker, "_resource_tracker", None)
    if rt is not None:
        ok = _stop_helper(rt, "_fd", "_pid", timeout) and ok
    return ok


def _limit_worker(memory_bytes: int, nice: int = 0, daemon_pid: int = 0) -> None:
    """Initializer of render workers: die with the daemon (``die_with_parent``); an address-space
    cap, so a decompression bomb or a broken file that makes MuPDF allocate without end kills only
    this worker (MemoryError/crash); and ``nice`` steps of lower CPU priority than the daemon."""
    import os
    import resource

    if daemon_pid:
        die_with_parent(daemon_pid)

    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    if nice:
        with contextlib.suppress(OSError):
            os.nice(nice)
    # Be the first the kernel's OOM killer picks, not the daemon.
    with contextlib.suppress(Exception), open("/proc/self/oom_score_adj", "w") as f:
        f.write("500")


class RenderWorkerError(Exception):
    """An exception raised by a task in a render worker that could not be sent back as itself:
    ``"<its type's name>: <its message>"``."""


def sendable(e: BaseException) -> BaseException:
    """``e`` when it survives the trip back from a worker (pickled there, unpickled here), else a
    ``RenderWorkerError`` keeping its type's name and message."""
    try:
        pickle.loads(pickle.dumps(e))
    except Exception:
        return RenderWorkerError(f"{type(e).__name__}: {e}")
    return e


def run_task(fn: Callable[..., Any], *args: Any) -> Any:
    """In a worker: ``fn(*args)``, with an exception that cannot be pickled replaced by one that
    can (``sendable``): concurrent.futures would send back its own pickling error instead."""
    try:
        return fn(*args)
    except BaseException as e:
        out = sendable(e)
        if out is e:
            raise
        raise out from None


def warm_render() -> None:
    """Import the render modules (in a worker: ``RenderPool.warm``'s default)."""
    probe.probe(Path("/"))


class RenderTask(cf.Future[Any]):
    """A pool task: waits by priority, then runs in a worker process (see the module contract)."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], priority: int) -> None:
        super().__init__()
        self.handed: float | None = None
        self.started: float | None = None
        self.executor: cf.ProcessPoolExecutor | None = None
        self._call = (fn, args)
        self._priority = priority
        self._abandoned = False  # cancel() after it began: drop it if it comes back to the queue

    #: While a task waits for a worker its deadline is re-checked this often (seconds).
    RECHECK = 1.0

    def deadline(self, limit: float) -> float:
        """When the task will have run ``limit`` seconds (or when to look again while it waits)."""
        return self.started + limit if self.started is not None else time.monotonic() + self.RECHECK

    def overdue(self, limit: float) -> bool:
        """True once the task has been running (not waiting) for ``limit`` seconds."""
        return self.started is not None and time.monotonic() - self.started >= limit

    def cancel(self) -> bool:
        self._abandoned = True
        return super().cancel()


class RenderPool:
    """Worker processes that render pages; rebuilt when a worker dies or is killed."""

    def __init__(self, workers: int, memory_mb: int = 4096, prefetch: int = 1, nice: int = 0) -> None:
        self.workers = max(1, workers)
        self.nice = nice
        # Tasks handed to the process pool beyond one per worker: the next task already waits in
        # the pool's queue when a worker finishes (no round trip through the dispatcher).
        self.slots = self.workers + max(0, prefetch)
        self.memory_bytes = memory_mb * 1024 * 1024
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._pool: cf.ProcessPoolExecutor | None = None
        self._queue: list[tuple[int, int, RenderTask]] = []  # (priority, submission order, task)
        self._seq = itertools.count()
        self._running = 0
        self._closed = False
        self._dispatcher: threading.Thread | None = None
        # Unfinished tasks per process pool in hand-over order: the first ``workers`` of them are
        # running, the rest wait in its call queue (started times, innocent bystanders of a kill).
        self._handed: dict[cf.ProcessPoolExecutor, list[RenderTask]] = {}
        self._killed: dict[cf.ProcessPoolExecutor, RenderTask] = {}  # pool -> the task it was killed for
        global _open_pools
        with _open_lock:
            _open_pools += 1

    # -- submission -------------------------------------------------------------------------------

    def submit(self, fn: Callable[..., Any], *args: Any, priority: int = 0) -> RenderTask:
        task = RenderTask(fn, args, priority)
        with self._cond:
            if self._closed:
                raise RuntimeError("the render pool is closed")
            heapq.heappush(self._queue, (priority, next(self._seq), task))
            if self._dispatcher is None:
                # Submitting to the process pool happens on this one thread, never inside a
                # future's callback (those run on the pool's own management thread).
                self._dispatcher = threading.Thread(target=self._dispatch_loop, name="render-dispatch", daemon=True)
                self._dispatcher.start()
            self._cond.notify_all()
        return task

    def _dispatch_loop(self) -> None:
        while True:
            with self._cond:
                while not self._closed and (self._running >= self.slots or not self._queue):
                    self._cond.wait()
                if self._closed:
                    return
                _, _, task = heapq.heappop(self._queue)
                fn, args = task._call
                if task.running():  # sent back after a kill or crash: it is RUNNING already
                    if task._abandoned:
                        task.set_exception(cf.CancelledError())
                        continue
                elif not task.set_running_or_notify_cancel():
                    continue  # cancelled while it waited
                self._running += 1
            inner: cf.Future[Any] | None = None
            error: BaseException | None = None
            for _ in range(2):  # a pool another thread just killed: once more on a fresh one
                with self._lock:
                    pool = self._get_locked()
                    # in the pool's list before it can finish (its callback takes it out)
                    handed = self._handed.setdefault(pool, [])
                    handed.append(task)
                    task.executor = pool
                    task.handed = time.monotonic()
                    task.started = task.handed if len(handed) <= self.workers else None
                try:
                    inner = pool.submit(run_task, fn, *args)
                    break
                except (BrokenProcessPool, RuntimeError) as e:  # broken, or shut down under us
                    with self._lock:
                        self._forget(pool, task)
                    self.reset(pool)
                    error = e if isinstance(e, BrokenProcessPool) else BrokenProcessPool(str(e))
            if inner is None:
                self._finish(task, None, error)
                continue
            inner.add_done_callback(functools.partial(self._finish, task, error=None))

    def _forget(self, pool: cf.ProcessPoolExecutor | None, task: RenderTask, freed: bool = True) -> None:
        """Take ``task`` off ``pool``'s list; if its worker is ``freed`` (the task ended, the pool
        did not break), the task that moves into a worker starts now. Lock held."""
        handed = self._handed.get(pool) if pool is not None else None
        if handed is None or task not in handed:
            return
        handed.remove(task)
        now = time.monotonic()
        for t in handed[: self.workers] if freed else ():
            if t.started is None:
                t.started = now
        if not handed and pool is not self._pool:  # a pool that is gone and has nothing left
            del self._handed[pool]  # type: ignore[arg-type]
            self._killed.pop(pool, None)  # type: ignore[arg-type]

    def _finish(self, task: RenderTask, inner: cf.Future[Any] | None, error: BaseException | None) -> None:
        if inner is not None:
            if inner.cancelled():  # the pool was reset or closed while the task sat in its call queue
                error = BrokenProcessPool("the render pool was closed" if self._closed else "the render workers were restarted")
            else:
                error = inner.exception()
        with self._cond:
            pool = task.executor
            killed_for = self._killed.get(pool) if pool is not None else None
            began = task.started is not None
            self._forget(pool, task, freed=not isinstance(error, BrokenProcessPool))
            self._running -= 1
            # An innocent bystander of a kill (any task but the one it was for), or a task that had
            # not begun when its pool broke, runs again on the new pool instead of failing.
            again = (
                isinstance(error, BrokenProcessPool)
                and not self._closed
                and ((killed_for is not None and killed_for is not task) or not began)
            )
            if again:
                task.handed = task.started = None
                task.executor = None
                heapq.heappush(self._queue, (task._priority, next(self._seq), task))
            self._cond.notify_all()
        if again:
            return
        if error is not None:
            task.set_exception(error)
        else:
            assert inner is not None
            task.set_result(inner.result())

    # -- pool lifecycle ---------------------------------------------------------------------------

    def _get_locked(self) -> cf.ProcessPoolExecutor:
        if self._pool is None:
            # forkserver: never fork the multi-threaded daemon itself (engine threads, locks).
            ctx = multiprocessing.get_context("forkserver")
            self._pool = cf.ProcessPoolExecutor(
                max_workers=self.workers, mp_context=ctx, initializer=_limit_worker,
                initargs=(self.memory_bytes, self.nice, os.getpid()),
            )
        return self._pool

    def kill(self, culprit: RenderTask) -> None:
        """Kill the workers of the process pool ``culprit`` runs on (a page that hangs the
        renderer) and start afresh: ``culprit`` fails, the pool's other tasks run again."""
        pool = culprit.executor
        if pool is None:
            return
        with self._lock:
            if culprit in self._handed.get(pool, ()):
                self._killed[pool] = culprit
        # ProcessPoolExecutor has no public way to stop a running task (3.14 adds
        # terminate_workers); its process table is the only handle.
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            with contextlib.suppress(Exception):
                proc.kill()
        self.reset(pool)

    def reset(self, broken: cf.ProcessPoolExecutor | None) -> None:
        """Forget ``broken``; the next task starts a new process pool."""
        if broken is None:
            return
        with self._lock:
            if self._pool is broken:
                self._pool = None
        broken.shutdown(wait=False, cancel_futures=True)

    def warm(self, fn: Callable[[], Any] | None = None) -> None:
        """Start the workers and run ``fn`` as many times as there are workers, all at once, now
        rather than on the first file (default: import the render modules). Each worker runs it
        when the call takes long enough that a worker busy with one leaves the next to another
        (not guaranteed for a call of a few milliseconds)."""
        for f in [self.submit(fn or warm_render) for _ in range(self.workers)]:
            with contextlib.suppress(Exception):
                f.result(timeout=120)

    def close(self, *, kill: bool = False) -> None:
        """Fail waiting tasks, stop the dispatcher and the workers. ``kill``: kill the workers
        first rather than wait for their tasks (a drain whose deadline passed: a worker busy with
        a huge file must not hold the stop past ``drain_timeout``; issue 33 saw 109 s)."""
        global _open_pools
        with self._cond:
            if self._closed:
                return
            self._closed = True
            waiting, self._queue = self._queue, []
            pool, self._pool = self._pool, None
            self._cond.notify_all()
        for _, _, task in waiting:
            # a task sent back to the queue after a kill is RUNNING already
            if task.running() or task.set_running_or_notify_cancel():
                task.set_exception(BrokenProcessPool("the render pool was closed"))
        if pool is not None:
            if kill:
                for proc in list((getattr(pool, "_processes", None) or {}).values()):
                    with contextlib.suppress(Exception):
                        proc.kill()
            pool.shutdown(wait=True, cancel_futures=True)
        with _open_lock:
            _open_pools -= 1
            last = _open_pools == 0
        if last:  # no other pool of this process may need the forkserver now
            stop_helpers()
