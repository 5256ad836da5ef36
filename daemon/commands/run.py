"""``ocr-daemon run``: the daemon in the foreground (what the systemd unit runs).

Contract:
- ``add_arguments(p)`` / ``run(args) -> exit code``: loads the config, sets up logging
  (``--log-level``, or ``daemon.log_level``; ``--log-file``), logs the config's warnings and the
  inbox subtrees the service or its group cannot write, then runs ``Service`` until it stops.
- ``--log-file PATH`` (``detach_output``): stdout and stderr appended to PATH, stdin /dev/null, so
  the daemon can run detached (``setsid -f``); a file that cannot be opened is a usage error.
- ``--pid-file PATH`` (``PidFile``): the process id while it runs, removed at exit if still ours;
  a file naming another live ocr-daemon is refused (exit 5).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from daemon.commands.common import add_config_option
from daemon.config import config_warnings, load_config
from daemon.errors import ConfigError, ExitCode, TransientError

log = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_config_option(p)
    p.add_argument("--engine", choices=["tesseract", "vllm", "openai"], help="override engine.kind")
    p.add_argument("--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    p.add_argument(
        "--log-file", type=Path, metavar="PATH",
        help="append the log to PATH (reopened after logrotate moves it) instead of stderr/journald; stdout and "
        "stderr go there too and stdin is /dev/null, so the daemon can run detached (setsid -f)",
    )
    p.add_argument(
        "--pid-file", type=Path, metavar="PATH",
        help="write the daemon's process id to PATH while it runs (for kill -HUP / kill); removed at exit",
    )


def run(args: argparse.Namespace) -> int:
    from daemon.service.sdnotify import setup_logging
    from daemon.service.service import Service

    cfg = load_config(args.config)  # its warnings are logged below, once, where the log goes
    if args.log_file is not None:
        detach_output(args.log_file)
    setup_logging(args.log_level or cfg.daemon.log_level, str(args.log_file) if args.log_file else None)
    from daemon.config.checks import inbox_access

    for w in config_warnings(cfg) + inbox_access(cfg):  # inbox subtrees the service or the group cannot write
        log.warning("%s", w)
    pid_file = PidFile(args.pid_file) if args.pid_file is not None else None
    if pid_file is not None:
        pid_file.write()
    try:
        svc = Service(cfg, config_path=args.config, engine_override=args.engine)
        svc.install_signal_handlers()
        return svc.run()
    finally:
        if pid_file is not None:
            pid_file.remove()


def detach_output(path: Path) -> None:
    """``run --log-file``: stdout and stderr appended to ``path`` (a C library's message or a
    crash's traceback lands in the log, not on a terminal the daemon has left), stdin /dev/null.
    A file that cannot be opened is a usage error (exit 2) said on the terminal still there."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
    except OSError as e:
        raise ConfigError([f"--log-file {path}: cannot open it: {e.strerror}"]) from e
    sys.stdout.flush()
    sys.stderr.flush()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(null)
    os.close(fd)


class PidFile:
    """``run --pid-file``: the process id, written atomically at start and removed at exit if it
    is still ours. A file naming another live ocr-daemon is refused (exit 5, like the state
    folder's lock), so a second start cannot take the first one's pid file from it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def write(self) -> None:
        from daemon.errors import FatalError
        from daemon.fsio import atomic_write

        other = self._read()
        if other is not None and other != os.getpid() and _is_ocr_daemon(other):
            raise FatalError(f"--pid-file {self.path}: ocr-daemon pid {other} is running", ExitCode.LOCKED)
        try:
            atomic_write(self.path, f"{os.getpid()}\n".encode())
        except (OSError, TransientError) as e:
            raise ConfigError([f"--pid-file {self.path}: cannot write it: {e}"]) from e

    def remove(self) -> None:
        if self._read() == os.getpid():
            try:
                self.path.unlink()
            except OSError as e:
                log.warning("pid file %s not removed: %s", self.path, e.strerror)

    def _read(self) -> int | None:
        try:
            return int(self.path.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None


def _is_ocr_daemon(pid: int) -> bool:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"ocr-daemon" in cmd or b"daemon\x00run" in cmd
