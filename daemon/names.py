"""Safe text for file names that users (or attackers) chose.

Linux file names are bytes: they may hold newlines, terminal escapes, or bytes that are not
UTF-8. ``display()`` gives a str that is always valid UTF-8 (undecodable bytes as ``\\xNN``) for
sidecars and messages; ``for_log()`` additionally escapes control characters so a name can never
forge or split a log line.
"""

from __future__ import annotations

import os
from pathlib import Path


def display(p: Path | str) -> str:
    """Valid-UTF-8 text for ``p``; undecodable bytes become ``\\xNN``."""
    return os.fsencode(p).decode("utf-8", "backslashreplace")


def for_log(p: Path | str) -> str:
    """``display(p)`` with control characters (newline, ESC, ...) escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in display(p))
