"""File I/O for outputs, the failed folder and source actions.

Contract:
- ``atomic_write``: temp file in the destination folder -> write -> fsync -> rename -> fsync the
  folder. Readers never see a partial output; a crash leaves at most a hidden ``.*.ocr-tmp`` file
  (which the watcher ignores) that the next write of the same output replaces.
- ``plan_output_set`` picks the output names for a document: ``<stem>.<ext>``, or ``<stem>-N.<ext>``
  when a *different* file already has the name. The stem is ``safe_stem``'s: no control
  characters, valid UTF-8 (issue 33: ``new\\nline.txt`` was written as it came). Paths this document already owns (recorded in
  the journal before a crash) are reused, so a repeat writes the same names, never a second set.
- ``is_within(path, folder)`` is the one "is this path that folder or inside it" test: whole path
  components (``/srv/inbox2`` is not inside ``/srv/inbox``), no file system access; callers
  resolve both sides the way their check needs (``realpath`` to see through links, ``abspath``
  not to).
- Folders the daemon creates inside an inbox (``set_shared_roots``; the inbox itself with
  ``make_inbox_dir``) are for the people who drop files there too: setgid and group-writable
  (``SHARED_MODE``, install.sh's 2775) whatever the umask, and, when the daemon runs as root,
  owned by the owner and group of the folder above -- so a subfolder made by a root ``once``
  never locks the service or the group out.
- ``move_file`` renames only: across filesystems it raises ``TransientError`` rather than silently
  copying and deleting (a half-copied source must never be the only copy).
- ``sha256_file(path)``: the hex SHA-256 of a file's bytes, read in 1 MiB chunks (the journal's
  content identity; the batch splitter and the source checks compute it too).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import os
from collections.abc import Callable, Set
from pathlib import Path, PurePath

from daemon.errors import NoSpaceError, TransientError

log = logging.getLogger(__name__)


def sha256_file(path: Path, bufsize: int = 1 << 20) -> str:
    """The SHA-256 of the file's bytes, hex: the content identity the journal keys documents by."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(bufsize):
            h.update(chunk)
    return h.hexdigest()


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
    if e.errno in _NO_SPACE:
        return NoSpaceError(f"{what}: {msg}")
    return TransientError(f"{what}: {msg}")


#: Errors of a destination that cannot take writes now (full, over quota, read-only): not the
#: document's fault, so it waits for them uncounted (errors.NoSpaceError).
_NO_SPACE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})

#: Mode of folders made inside an inbox: rwxrwsr-x, as install.sh makes /srv/ocr/inbox.
SHARED_MODE = 0o2775
_shared_roots: tuple[str, ...] = ()


def set_shared_roots(folders: list[Path]) -> None:
    """The inboxes: folders ``make_dirs`` creates inside them get ``SHARED_MODE`` (see the contract)."""
    global _shared_roots
    _shared_roots = tuple(os.path.abspath(f) for f in folders)


def make_dirs(folder: Path) -> None:
    """``mkdir -p folder``; each level created inside a shared root (an inbox) is shared."""
    if os.path.isdir(folder):
        return
    here = os.path.abspath(folder)
    if not any(is_within(here, r) for r in _shared_roots):
        Path(folder).mkdir(parents=True, exist_ok=True)
        return
    missing = []
    p = Path(here)
    while not os.path.lexists(p):
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        _shared_dir(d)


def make_inbox_dir(folder: Path) -> None:
    """Create the inbox ``folder`` if missing (its parents as plain folders), itself shared."""
    if os.path.isdir(folder):
        return
    Path(folder).parent.mkdir(parents=True, exist_ok=True)
    _shared_dir(Path(folder))


def _shared_dir(d: Path) -> None:
    try:
        os.mkdir(d)
    except FileExistsError:
        return  # made meanwhile by someone else: theirs to set
    if os.geteuid() == 0:  # as the folder above: not root's, which the service could not write
        st = os.stat(d.parent)
        os.chown(d, st.st_uid, st.st_gid)
    os.chmod(d, SHARED_MODE)  # the umask took g+w away


def _write_temp(path: Path, data: bytes) -> Path:
    """``data`` written and fsynced to the temp file of ``path``; returns the temp path.
    On OSError the temp file is removed and the error re-raised."""
    folder = path.parent
    tmp = folder / f".{path.name}.ocr-tmp"
    try:
        make_dirs(folder)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return tmp


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see module contract). OSError -> TransientError."""
    atomic_write_all({path: data})


def atomic_write_all(files: dict[Path, bytes]) -> None:
    """Write several files so that all of them appear or none does: every temp file is written
    and fsynced first, and only then are they renamed into place. A full disk or a read-only
    folder never leaves half an output set visible (only a crash between the renames can, and
    the repeat of the document after the crash completes it under the same names).
    OSError -> TransientError; temp files of a failed call are removed."""
    staged: list[tuple[Path, Path]] = []
    path: Path | None = None
    try:
        for path, data in files.items():
            staged.append((_write_temp(path, data), path))
        for tmp, path in staged:
            os.replace(tmp, path)
        for folder in dict.fromkeys(p.parent for _, p in staged):
            fsync_dir(folder)
    except OSError as e:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                tmp.unlink()
        raise _transient(e, f"cannot write {path}") from e


NAME_MAX = 255  # bytes in one file name on Linux filesystems
#: Bytes an output name may need beyond ``<stem><ext>``: a ``-NNNN`` collision suffix plus the
#: temp file's leading ``.`` and ``.ocr-tmp``.
_RESERVE = len("-9999") + 1 + len(".ocr-tmp")


def fit_stem(stem: str, tail_bytes: int) -> str:
    """``stem``, cut so that it plus ``tail_bytes`` bytes fit in one file name (NAME_MAX).

    A 255-byte source name is legal, but ``<name>.json`` or ``.<name>.ocr-tmp`` is not: without
    this the write fails with ENAMETOOLONG, a "transient" error retried forever. The cut never
    ends inside a multi-byte UTF-8 character.
    """
    raw = os.fsencode(stem)
    room = max(1, NAME_MAX - tail_bytes)
    if len(raw) <= room:
        return stem
    cut = raw[:room]
    while len(cut) > 1 and cut[-1] >= 0x80:  # drop a trailing partial (or whole) multi-byte char
        b, cut = cut[-1], cut[:-1]
        if b >= 0xC0:
            break
    return os.fsdecode(cut)


def error_note_name(name: str) -> str:
    """Name of the ``.error.txt`` note written beside a failed file called ``name``."""
    tail = ".error.txt"
    return fit_stem(name, len(tail) + 1 + len(".ocr-tmp")) + tail


def remove_stale_temp(path: Path) -> None:
    """Remove the temp file ``atomic_write`` would use for ``path``, if a crash left one."""
    with contextlib.suppress(OSError):
        (path.parent / f".{path.name}.ocr-tmp").unlink()


def safe_stem(stem: str) -> str:
    """An output name's stem made safe for people and tools: every control character (newline,
    tab, ESC...) and every byte that is not UTF-8 becomes ``_``; when anything was replaced, a
    6-hex-digit hash of the original name's bytes is appended, so two names that differ only
    there (``a\\nb``, ``a\\tb``) still get different, stable outputs (the same source name always
    gives the same stem, whatever order files come in)."""
    raw = os.fsencode(stem)
    text = raw.decode("utf-8", "replace")
    clean = "".join("_" if (not c.isprintable() and c != " ") or c == "\ufffd" else c for c in text)
    if clean == text and "\ufffd" not in text:
        return stem
    return f"{clean}-{hashlib.sha256(raw).hexdigest()[:6]}"


def plan_output_set(
    dest: Path, stem: str, names_for: Callable[[str], list[str]], owned: set[Path], taken: set[Path] | None = None
) -> tuple[str, list[Path]]:
    """Choose the stem whose output names collide with nothing but files this document owns.
    ``taken``: names other unfinished documents have planned (not on disk yet) -- also avoided."""
    taken = taken or set()
    stem = safe_stem(stem)
    first = names_for(stem)
    tail = max((len(os.fsencode(n)) for n in first), default=0) - len(os.fsencode(stem))
    stem = fit_stem(stem, max(0, tail) + _RESERVE)
    for n in range(0, 10_000):
        s = stem if n == 0 else f"{stem}-{n}"
        paths = [dest / name for name in names_for(s)]
        if all(p in owned or (p not in taken and not os.path.lexists(p)) for p in paths):
            return s, paths
    raise TransientError(f"no free output name for {stem!r} in {dest}")


def unique_path(folder: Path, name: str, taken: Set[Path] = frozenset()) -> Path:
    """``folder/name``, or ``folder/stem-N.ext`` if taken (on disk, or in ``taken``: names
    promised to another file that is not there yet)."""
    p = folder / name
    if not os.path.lexists(p) and p not in taken:
        return p
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    for n in range(1, 100_000):
        tail = f"-{n}.{ext}" if ext else f"-{n}"
        q = folder / (fit_stem(stem, len(os.fsencode(tail))) + tail)
        if not os.path.lexists(q) and q not in taken:
            return q
    raise TransientError(f"no free name for {name!r} in {folder}")


def move_file(src: Path, dst: Path) -> None:
    """Rename ``src`` to ``dst`` (never overwriting) and fsync both folders."""
    try:
        make_dirs(dst.parent)
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


def is_within(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> bool:
    """True if ``path`` is ``folder`` or inside it, comparing whole components lexically (see the
    module contract); both should be absolute, or both relative to one folder."""
    p, f = PurePath(path), PurePath(folder)
    return p == f or f in p.parents
