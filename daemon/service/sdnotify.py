"""systemd integration: sd_notify messages and journald logging.

``notify()`` is a no-op returning False when not started by systemd (no ``NOTIFY_SOCKET``), so
callers never need to check. systemd-python is used when installed; a plain datagram socket is
the fallback (same protocol).
"""

from __future__ import annotations

import logging
import os
import socket
import sys


def notify(message: str) -> bool:
    """Send ``message`` (e.g. ``"READY=1"``) to systemd. False when not under systemd."""
    addr = os.environ.get("NOTIFY_SOCKET")
    if not addr:
        return False
    try:
        from systemd import daemon as sd_daemon  # type: ignore[attr-defined]

        return bool(sd_daemon.notify(message))
    except ImportError:
        pass
    if addr.startswith("@"):
        addr = "\0" + addr[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as s:
            s.connect(addr)
            s.sendall(message.encode("utf-8"))
        return True
    except OSError:
        return False


def watchdog_interval() -> float | None:
    """Seconds between WATCHDOG=1 pings systemd expects (half of WatchdogSec), or None."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    try:
        return int(usec) / 1e6 / 2
    except ValueError:
        return None


def setup_logging(level: str = "INFO", log_file: str | None = None) -> None:
    """Log to ``log_file`` when given (``run --log-file``: a ``WatchedFileHandler``, which reopens
    the file after logrotate moved it), else to journald (with structured fields) under systemd,
    else to stderr."""
    import logging.handlers

    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    handler: logging.Handler | None = None
    if log_file:
        handler = logging.handlers.WatchedFileHandler(log_file, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    elif os.environ.get("JOURNAL_STREAM") or os.environ.get("INVOCATION_ID"):
        try:
            from systemd.journal import JournalHandler

            handler = JournalHandler(SYSLOG_IDENTIFIER="ocr-daemon")
            handler.setFormatter(logging.Formatter("%(message)s"))
        except ImportError:
            handler = None
    if handler is None:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(level)
    # watchdog logs every inotify event at DEBUG; keep it quiet unless asked.
    logging.getLogger("watchdog").setLevel(logging.WARNING if level != "DEBUG" else logging.INFO)
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
