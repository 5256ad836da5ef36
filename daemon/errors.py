"""Exception types of ocr-daemon and the one place where they map to exit codes.

Contract:
- ``InputError`` (permanent): the *file* is bad (encrypted PDF, not what its extension says,
  too many pages, decompression bomb...). The document goes to the failed folder at once with
  ``reason`` written for a human. Never retried.
- ``TransientError`` (recoverable): something around the file is temporarily wrong (engine
  busy/restarting, disk full, destination read-only, file locked). The document is retried with
  exponential backoff (capped at ``daemon.retry_backoff_max``) and never sent to the failed
  folder for this reason: once the disk has room again or the engine is back, it goes through.
- ``NoSpaceError`` (transient, not counted): the destination is full or read-only; the
  document waits (no strike) until it can be written.
- ``WorkerCrash`` (transient, counted): the render worker died or hit its time/memory limit on
  this file; after ``daemon.max_attempts`` such tries the document is failed.
- ``EngineDeadError``: the OCR engine itself is gone; in-flight pages are re-queued and the engine
  is restarted by its owner. A subclass of ``TransientError`` so callers that only care about
  "retry or fail" need not know it.
- ``ConfigError``: ``rules.yaml`` is invalid; carries every problem found at once.
- ``FatalError``: the daemon cannot run at all (state dir unwritable, engine cannot start).
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Exit codes of the ``ocr-daemon`` command (documented in docs/operations.md, "Commands")."""

    OK = 0
    FAILURES = 1  # ran, but some documents failed (``once``) or an unexpected error
    CONFIG = 2  # invalid rules.yaml or usage error; systemd must not restart-loop on it
    ENGINE = 3  # the OCR engine could not be started
    STATE = 4  # state dir / journal unusable (also: the journal is damaged)
    LOCKED = 5  # another ocr-daemon holds the state dir (daemon.lock); systemd may retry later
    INTERRUPTED = 130


class OcrDaemonError(Exception):
    """Base class of every error this package raises on purpose."""

    exit_code: ExitCode = ExitCode.FAILURES


class InputError(OcrDaemonError):
    """A permanent problem with one input file. ``reason`` is shown to the user verbatim."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class TransientError(OcrDaemonError):
    """A temporary problem; the document is retried later."""


class NoSpaceError(TransientError):
    """The destination cannot take a write: full (ENOSPC), over quota (EDQUOT) or read-only
    (EROFS). Not counted: nothing is wrong with the document, so it waits with backoff, with
    this reason shown, for as long as it takes (``pipeline._wait_for_space``)."""


class WorkerCrash(TransientError):
    """A render worker crashed, ran out of memory or time on this file. Unlike other transient
    errors these are *counted*: after ``daemon.max_attempts`` the document is failed, because a
    file that kills its renderer every time must not be retried forever."""


class EngineDeadError(TransientError):
    """The OCR engine died or hung; its owner restarts it and in-flight pages are re-queued."""

    exit_code = ExitCode.ENGINE


class ConfigError(OcrDaemonError):
    """``rules.yaml`` is invalid. ``problems`` lists every error found, formatted for humans."""

    exit_code = ExitCode.CONFIG

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class FatalError(OcrDaemonError):
    """The daemon cannot continue at all."""

    def __init__(self, message: str, exit_code: ExitCode = ExitCode.FAILURES) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def exit_code_for(exc: BaseException) -> ExitCode:
    """Map any exception to the process exit code (the single mapping used by the CLI)."""
    if isinstance(exc, KeyboardInterrupt):
        return ExitCode.INTERRUPTED
    if isinstance(exc, OcrDaemonError):
        return exc.exit_code
    return ExitCode.FAILURES
