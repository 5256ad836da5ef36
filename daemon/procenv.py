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
"""

from __future__ import annotations

import os

#: Variable -> value the daemon's processes run with (see the module docstring for why).
PROCESS_ENV: dict[str, str] = {"OMP_THREAD_LIMIT": "1"}


def apply() -> None:
    """Set the variables of ``PROCESS_ENV`` the environment lacks (see the module contract)."""
    for key, value in PROCESS_ENV.items():
        os.environ.setdefault(key, value)
