"""File I/O for outputs, the failed folder and source actions.

Contract:
- ``atomic_write``: temp file in the destination folder -> write -> fsync -> rename -> fsync the
  folder. Readers never see a partial output; a crash leaves at most a hidden ``.*.ocr-tmp`` file
  (which the watcher ignores) that the next write of the same output replaces.
- ``plan_output_set`` picks the output names for a document: ``<stem>.<ext>``, or ``<stem>-N.<ext>``
  when a *different* file already has the name. Paths this document already owns (recorded in
  the journal before a crash) are reused, so a repeat writes the same names, never a second set.
- ``move_file`` renames only: across filesystems it raises ``TransientError`` rather than silently
  copying and deleting (a half-copied source must never be the only copy).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
from collections.abc import Callable
from pathlib import Path

from daemon.errors import TransientError

log = logging.getLogger(__name__)


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _transient(e: OSError, what: str) -> TransientError:
    msg = {
        errno.ENOSPC: "no space left on device",
        errno.EDQUOT: "disk quota exceeded",
        errno.EROFS: "read-only filesystem",
        errno.EACCES: "permission denied",
        errno.EPERM: "operation not permitted",
    }.get(e.errno or 0, e.strerror or str(e))
    return TransientError(f"{what}: {msg}")


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see module contract). OSError -> TransientError."""
    folder = path.parent
    tmp = folder / f".{path.name}.ocr-tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        fsync_dir(folder)
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise _transient(e, f"cannot write {path}") from e


def remove_stale_temp(path: Path) -> None:
    """Remove the temp file ``atomic_write`` would use for ``path``, if a crash left one."""
    with contextlib.suppress(OSError):
        (path.parent / f".{path.name}.ocr-tmp").unlink()


def plan_output_set(
    dest: Path, stem: str, names_for: Callable[[str], list[str]], owned: set[Path]
) -> tuple[str, list[Path]]:
    """Choose the stem whose output names collide with nothing but files this document owns."""
    for n in range(0, 10_000):
        s = stem if n == 0 else f"{stem}-{n}"
        paths = [dest / name for name in names_for(s)]
        if all(p in owned or not os.path.lexists(p) for p in paths):
            return s, paths
    raise TransientError(f"no free output name for {stem!r} in {dest}")


def unique_path(folder: Path, name: str) -> Path:
    """``folder/name``, or ``folder/stem-N.ext`` if taken."""
    p = folder / name
    if not os.path.lexists(p):
        return p
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    for n in range(1, 100_000):
        q = folder / (f"{stem}-{n}.{ext}" if ext else f"{stem}-{n}")
        if not os.path.lexists(q):
            return q
    raise TransientError(f"no free name for {name!r} in {folder}")


def move_file(src: Path, dst: Path) -> None:
    """Rename ``src`` to ``dst`` (never overwriting) and fsync both folders."""
    try:
        dst.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(dst):
            raise FileExistsError(errno.EEXIST, "exists", str(dst))
        # link + unlink instead of rename: link fails rather than overwrite if dst appeared.
        try:
            os.link(src, dst, follow_symlinks=False)
        except OSError as e:
            if e.errno in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
                os.rename(src, dst)  # filesystems without hard links (vfat, some FUSE)
            else:
                raise
        else:
            os.unlink(src)
        fsync_dir(dst.parent)
        fsync_dir(src.parent)
    except OSError as e:
        if e.errno == errno.EXDEV:
            raise TransientError(
                f"cannot move {src} to {dst}: different filesystems (ocr-daemon never copies-then-deletes a source; "
                "put archive/failed folders on the inbox's filesystem)"
            ) from e
        raise _transient(e, f"cannot move {src} to {dst}") from e


def same_filesystem(a: Path, b: Path) -> bool:
    """True if ``a`` and ``b`` (or their nearest existing parents) are on one filesystem."""

    def dev(p: Path) -> int:
        p = Path(os.path.abspath(p))
        while not p.exists():
            p = p.parent
        return p.stat().st_dev

    return dev(a) == dev(b)
