"""Environment variables the daemon's processes need, set at the entry point, never at import.

Contract: ``apply()`` sets every variable of ``PROCESS_ENV`` that the environment does not set
already (a value the user or the unit gives wins) in ``os.environ``, so every process started
afterwards inherits it: the render workers are children of a forkserver that the render pool
starts later, from this environment. ``daemon.cli.main`` calls it first thing, before any
command imports Tesseract; the systemd unit sets the same variables with ``Environment=``.
Scripts that import the engines directly (bench/, tests/) set them at their own start
(``tests/run.sh``, each bench script). No module of the daemon changes ``os.environ`` when it is
imported: an import must not change how the rest of the process behaves.

Why each variable:

- ``OMP_THREAD_LIMIT=1``: Debian's Tesseract is built with OpenMP. With its default (one thread
  per core for every page) it is ~8x slower on a 2-core machine, because the daemon already
  runs pages in parallel (one per Tesseract engine thread, and orientation detection in each
  render worker) and the OpenMP threads of those pages fight each other. libgomp reads it once,
  when Tesseract's library is loaded (the first ``import tesserocr`` of a process, which only
  ``daemon.tessapi`` makes, on first use), so it must be in the environment before that.
- ``MALLOC_ARENA_MAX=2``: glibc gives each thread that allocates its own malloc arena (up to 8 per
  core), and memory freed in one stays with the process. The daemon has ~24 threads (pipeline
  workers, the watcher, the stability tracker, rescans, HTTP, the scheduler), each with its own
  SQLite connection and page cache: a 100,000-file drop grew the daemon 91 -> 215 MB in the
  ~14 arenas it ended with (issue 34; bench/RESULTS.md). glibc reads the variable when a process
  starts, so ``apply()`` also sets the limit of the running process itself (``mallopt``); its
  children (the render workers) read the variable.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os

#: Variable -> value the daemon's processes run with (see the module docstring for why).
PROCESS_ENV: dict[str, str] = {"OMP_THREAD_LIMIT": "1", "MALLOC_ARENA_MAX": "2"}
#: glibc's ``mallopt`` parameter for the arena limit (malloc.h).
M_ARENA_MAX = -8


def apply() -> None:
    """Set the variables of ``PROCESS_ENV`` the environment lacks (see the module contract), and
    this process's malloc arena limit to the environment's value."""
    for key, value in PROCESS_ENV.items():
        os.environ.setdefault(key, value)
    limit_arenas(int(os.environ["MALLOC_ARENA_MAX"]) if os.environ["MALLOC_ARENA_MAX"].isdigit() else 0)


def release_free_memory() -> bool:
    """``malloc_trim(0)`` where the C library is glibc: the free pages of every arena go back to
    the system. Called after each full scan, which builds and drops a lookup of every file the
    journal knows under an inbox (one entry per file) while other threads allocate."""
    libc = _glibc()
    return bool(libc is not None and libc.malloc_trim(0))


@functools.cache
def _glibc() -> ctypes.CDLL | None:
    """The C library where it is glibc, else None; looked up once (``find_library`` runs
    ``ldconfig``)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    return libc if hasattr(libc, "gnu_get_libc_version") else None  # musl and others: no arenas


def limit_arenas(n: int) -> bool:
    """``mallopt(M_ARENA_MAX, n)`` in this process where the C library is glibc (whose malloc has
    arenas); False where it is not, or ``n`` is not a limit (0: glibc's default)."""
    libc = _glibc() if n > 0 else None
    return bool(libc is not None and libc.mallopt(M_ARENA_MAX, n))
