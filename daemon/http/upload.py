"""An upload from the status page's form, streamed from the request body into an inbox.

Contract:
- ``UploadSink(boundary, max_bytes, open_file)`` takes a multipart/form-data body in chunks
  (``feed``), parsed by python-multipart's streaming ``MultipartParser`` (the parser Starlette
  and FastAPI use; the stdlib's ``cgi`` is gone in Python 3.13). The file part (field ``file``)
  goes straight to disk as it arrives: memory holds one chunk and the fields, never the file.
- Fields come before the file (the form puts them there, browsers send them in form order):
  ``open_file(fields, filename)`` runs when the file part starts, before a byte of it is
  written; it checks the form's token, the inbox and the name and returns an ``UploadTarget``
  (or raises ``UploadError``). A field after the file that would have changed that check is
  refused.
- Over ``max_bytes`` of file data: ``UploadError(413)`` at that chunk, while streaming (a body
  without Content-Length is counted too). Any error, a client gone away or a cancel:
  ``abort()`` removes the partial file; nothing is left in the inbox.
- ``finish()`` ends the body, fsyncs the file (written under a name no inbox glob takes:
  ``.<hex>.upload-part``) and renames it to a free name in the inbox, so the watcher sees one
  complete file appear and it goes the normal way (stability wait, journal, routing).
- ``feed``, ``finish`` and ``abort`` do blocking file I/O: the server calls them in a worker
  thread, one at a time per upload.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from python_multipart import MultipartParser
from python_multipart.multipart import parse_options_header

from daemon.fsio import unique_path

#: Bytes of all text fields together (token, inbox): the form's are well under 1 KiB.
MAX_FIELD_BYTES = 64 * 1024


class UploadError(Exception):
    """An upload refused: ``status`` (HTTP) and a message for the user."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Upload:
    """An upload that landed in its inbox (what ``GET /upload/<id>`` looks up)."""

    path: Path
    inbox: str
    name: str
    created: float  # Unix time, to tell this document from an earlier one at the same path


@dataclass
class UploadTarget:
    """Where the file part goes: ``folder`` (an inbox), under ``name`` once complete."""

    folder: Path
    name: str
    inbox: str


def clean_name(filename: str) -> str:
    """The last path component of a client's file name, without leading dots/dashes (no hidden
    file, no option-like name); ``UploadError(400)`` when nothing usable is left."""
    name = os.path.basename(filename.replace("\\", "/")).lstrip(".-").strip()
    if not name or len(name.encode("utf-8", "surrogateescape")) > 200 or "\x00" in name:
        raise UploadError(400, "the file needs a name (at most 200 bytes)")
    return name


@dataclass
class UploadSink:
    """See the module docstring."""

    boundary: bytes
    max_bytes: int
    open_file: Callable[[dict[str, str], str], UploadTarget]
    fields: dict[str, str] = field(default_factory=dict)
    target: UploadTarget | None = None
    size: int = 0  # file bytes written so far
    tmp: Path | None = None
    _file: IO[bytes] | None = None
    _part: dict[str, Any] = field(default_factory=dict)
    _header: list[bytes] = field(default_factory=lambda: [b"", b""])
    _field_bytes: int = 0
    _ended: bool = False  # the closing boundary came
    _parser: MultipartParser | None = None

    def __post_init__(self) -> None:
        self._parser = MultipartParser(self.boundary, {
            "on_part_begin": self._part_begin, "on_header_field": self._header_field,
            "on_header_value": self._header_value, "on_header_end": self._header_end,
            "on_headers_finished": self._headers_finished, "on_part_data": self._part_data,
            "on_part_end": self._part_end, "on_end": self._end,
        })

    # -- parser callbacks --------------------------------------------------------------------

    def _part_begin(self) -> None:
        self._part = {"headers": {}, "kind": "skip", "data": bytearray()}

    def _header_field(self, data: bytes, start: int, end: int) -> None:
        self._header[0] += data[start:end]

    def _header_value(self, data: bytes, start: int, end: int) -> None:
        self._header[1] += data[start:end]

    def _header_end(self) -> None:
        self._part["headers"][self._header[0].decode("latin-1").lower()] = self._header[1]
        self._header[0], self._header[1] = b"", b""

    def _headers_finished(self) -> None:
        _, opts = parse_options_header(self._part["headers"].get("content-disposition", b""))
        name = opts.get(b"name", b"").decode("utf-8", "replace")
        self._part["name"] = name
        if b"filename" not in opts:
            self._part["kind"] = "field"
            return
        if name != "file":
            return  # another file input: not ours, skipped unread
        if self.target is not None:
            raise UploadError(400, "one file per upload")
        filename = opts[b"filename"].decode("utf-8", "surrogateescape")
        self.target = self.open_file(dict(self.fields), filename)
        self.tmp = self.target.folder / f".{secrets.token_hex(8)}.upload-part"
        fd = os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o640)
        self._file = os.fdopen(fd, "wb")  # pieces of the parser's size go straight through
        self._part["kind"] = "file"

    def _part_data(self, data: bytes, start: int, end: int) -> None:
        kind = self._part["kind"]
        if kind == "file":
            self.size += end - start
            if self.size > self.max_bytes:
                raise UploadError(413, f"larger than daemon.http.upload_max_mb ({self.max_bytes >> 20} MiB)")
            assert self._file is not None
            self._file.write(data[start:end])
        elif kind == "field":
            self._field_bytes += end - start
            if self._field_bytes > MAX_FIELD_BYTES:
                raise UploadError(400, "bad form: the text fields are too long")
            self._part["data"] += data[start:end]

    def _part_end(self) -> None:
        if self._part.get("kind") != "field":
            return
        name = self._part["name"]
        if self.target is not None and name in ("token", "inbox"):
            raise UploadError(400, f"bad form: the field {name!r} must come before the file")
        self.fields[name] = bytes(self._part["data"]).decode("utf-8", "replace")

    def _end(self) -> None:
        self._ended = True

    # -- driving -----------------------------------------------------------------------------

    def feed(self, chunk: bytes) -> None:
        """Parse and store the next piece of the body."""
        assert self._parser is not None
        try:
            self._parser.write(chunk)
        except UploadError:
            raise
        except OSError as e:
            raise UploadError(500, f"cannot write into the inbox: {e.strerror}") from e
        except Exception as e:  # python-multipart's MultipartParseError and kin
            raise UploadError(400, f"bad form: {e}") from e

    def finish(self) -> Path:
        """The body ended: the file, complete, under a free name in its inbox."""

        assert self._parser is not None
        try:
            self._parser.finalize()
        except Exception as e:
            raise UploadError(400, f"bad form: {e}") from e
        if not self._ended:
            raise UploadError(400, "bad form: the body ended early")
        if self.target is None or self._file is None or self.tmp is None:
            raise UploadError(400, "no file in the form (field 'file')")
        if self.size == 0:
            raise UploadError(400, "the file is empty")
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None
            dest = unique_path(self.target.folder, self.target.name)
            os.rename(self.tmp, dest)
        except OSError as e:
            raise UploadError(500, f"cannot write into the inbox: {e.strerror}") from e
        self.tmp = None
        return dest

    def abort(self) -> None:
        """Drop the partial file, if any (idempotent)."""
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None
        if self.tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)
            self.tmp = None
