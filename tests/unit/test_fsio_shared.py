"""fsio's shared inbox folders (issue 35): what the daemon creates inside an inbox is setgid and
group-writable whatever the umask, so the people who drop files there can use it; folders
outside the inboxes are made as before."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from daemon import fsio


def test_folders_made_inside_an_inbox_are_group_writable(tmp_path: Path) -> None:
    inbox, outside = tmp_path / "inbox", tmp_path / "archive"
    old = os.umask(0o022)
    try:
        fsio.set_shared_roots([inbox])
        fsio.make_inbox_dir(inbox)  # missing: made shared
        fsio.atomic_write(inbox / "acme" / "2026" / "scan.txt", b"text")
        fsio.atomic_write(outside / "invoice" / "scan.txt", b"text")
    finally:
        os.umask(old)
        fsio.set_shared_roots([])
    for d in (inbox, inbox / "acme", inbox / "acme" / "2026"):
        assert stat.S_IMODE(d.stat().st_mode) == 0o2775, (d, oct(d.stat().st_mode))
        assert d.stat().st_gid == d.parent.stat().st_gid, d  # the group of the folder above
    for d in (outside, outside / "invoice"):
        assert stat.S_IMODE(d.stat().st_mode) == 0o755, d  # not an inbox: as the umask says
    assert (inbox / "acme" / "2026" / "scan.txt").read_bytes() == b"text"
