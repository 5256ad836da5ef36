"""daemon.http's pieces without a daemon: the listen setting, the failure reason classes, the
page-rate history, and the streaming multipart sink on a real form body."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from daemon.config import DaemonCfg, parse_config_text
from daemon.errors import ConfigError
from daemon.http.endpoint import parse_listen
from daemon.http.upload import UploadError, UploadSink, UploadTarget
from daemon.service.metrics import Metrics, reason_class


def test_default_listens_on_loopback_9750_with_uploads_off() -> None:
    cfg = DaemonCfg().http
    assert cfg is not None and cfg.listen == "127.0.0.1:9750" and cfg.upload is False
    assert parse_listen(cfg.listen) == (socket.AF_INET, ("127.0.0.1", 9750))
    assert parse_listen("[::1]:9750") == (socket.AF_INET6, ("::1", 9750))
    assert parse_listen("localhost:0") == (socket.AF_INET, ("localhost", 0))
    assert parse_listen("/run/ocr/http.sock") == (socket.AF_UNIX, "/run/ocr/http.sock")


def test_http_config_null_off_socket_resolved_and_errors_named(tmp_path: Path) -> None:
    base = "inboxes: [{path: in}]\n"
    assert parse_config_text("daemon: {http: null}\n" + base).daemon.http is None
    cfg = parse_config_text("daemon: {http: {listen: run/http.sock}}\n" + base, base_dir=tmp_path)
    assert cfg.daemon.http is not None and cfg.daemon.http.listen == str(tmp_path / "run/http.sock")
    with pytest.raises(ConfigError) as e:
        parse_config_text("daemon: {http: {listen: '9750', upload_clients: [everyone]}}\n" + base)
    text = "\n".join(e.value.problems)
    assert "daemon.http.listen" in text and "not host:port" in text
    assert "daemon.http.upload_clients" in text and "'everyone' is not an IP network" in text


@pytest.mark.parametrize(("reason", "cls"), [
    ("encrypted PDF (password protected)", "encrypted"),
    ("too many pages: 900 > limit 500", "too_many_pages"),
    ("image too large (…; refused as a possible decompression bomb)", "too_large"),
    ("page 3 took longer than 120s to render (render worker killed) (gave up after 3 tries)", "timeout"),
    ("the render worker crashed on this file (gave up after 3 tries)", "crash"),
    # the same error twice in a row fails at once (daemon.service.pipeline._retry): same classes
    ("page 3 took longer than 120s to render (render worker killed)"
     " (the same error twice in a row: not a passing problem)", "timeout"),
    ("the render worker crashed on this file (the same error twice in a row: not a passing problem)", "crash"),
    ("internal error: KeyError: 'x' (the same error twice in a row: not a passing problem)", "internal"),
    ("the file is a symbolic link; links are refused so nothing outside the inbox is read", "refused_link"),
    ("the file disappeared before it could be processed", "disappeared"),
    ("not a PDF: the file is a PNG image", "wrong_type"),
    ("not a PDF (starts with 'this is not')", "wrong_type"),
    ("truncated PDF (no end-of-file marker)", "corrupt"),
    ("corrupt image (broken data stream)", "corrupt"),
    ("page 2 was refused by the OCR engine: bad", "engine"),
    ("internal error: KeyError: 'x' (gave up after 3 tries)", "internal"),
    ("something new", "other"),
])
def test_failure_reasons_fall_into_classes(reason: str, cls: str) -> None:
    assert reason_class(reason) == cls


def test_progress_rate_and_history_follow_the_pages() -> None:
    m = Metrics()
    m.started -= 600  # as if up for 10 minutes: rates are per full window
    m.document_started(7, "big.pdf", "inbox", 10)
    for _ in range(4):
        m.page_rendered(7, time.monotonic() - 0.2)
    for _ in range(3):
        m.page_recognized(7, 0.5)
    p = m.progress()[7]
    assert (p.pages_total, p.pages_done, p.pages_in_engine) == (10, 3, 1)
    assert p.pages_per_second > 0 and p.eta_seconds is not None and p.eta_seconds > 0
    assert m.pages_count == 3 and m.rate(60) == pytest.approx(3 / 60)
    hist = m.history()
    assert len(hist) == 15 and sum(b["pages"] for b in hist) == 3 and hist[-1]["pages"] == 3
    m.document_finished(7, "failed", "corrupt PDF page 4 (x)")
    assert m.progress() == {}
    assert m.failures.labels(reason="corrupt")._value.get() == 1


def _form(boundary: str, data: bytes, *, fields_after: bool = False) -> bytes:
    inbox = f'--{boundary}\r\nContent-Disposition: form-data; name="inbox"\r\n\r\nscans\r\n'.encode()
    file = (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="Grüße.pdf"\r\n'
            "Content-Type: application/pdf\r\n\r\n").encode() + data + b"\r\n"
    parts = [file, inbox] if fields_after else [inbox, file]
    return b"".join(parts) + f"--{boundary}--\r\n".encode()


def test_multipart_sink_streams_binary_files_byte_for_byte(tmp_path: Path) -> None:
    data = bytes(range(256)) * 50 + b"\r\n--not-the-boundary\r\n"
    boundary = "XyZ123"
    body = _form(boundary, data)
    seen: list[tuple[dict[str, str], str]] = []

    def open_file(fields: dict[str, str], filename: str) -> UploadTarget:
        seen.append((fields, filename))
        return UploadTarget(tmp_path, "upload.pdf", fields["inbox"])

    sink = UploadSink(boundary.encode(), 1 << 20, open_file)
    for i in range(0, len(body), 7):  # boundaries and headers split across pieces
        sink.feed(body[i:i + 7])
    dest = sink.finish()
    assert seen == [({"inbox": "scans"}, "Grüße.pdf")]
    assert dest == tmp_path / "upload.pdf" and dest.read_bytes() == data and sink.size == len(data)
    assert [p.name for p in tmp_path.iterdir()] == ["upload.pdf"]  # the partial file renamed


@pytest.mark.parametrize(("case", "status"), [("too large", 413), ("field after the file", 400), ("ended early", 400)])
def test_multipart_sink_refusals_leave_nothing(tmp_path: Path, case: str, status: int) -> None:
    boundary = "XyZ123"
    data = b"%PDF-1.4 " * 2000
    body = _form(boundary, data, fields_after=case == "field after the file")
    if case == "ended early":
        body = body[: len(body) // 2]
    sink = UploadSink(boundary.encode(), 1000 if case == "too large" else 1 << 20,
                      lambda fields, name: UploadTarget(tmp_path, "x.pdf", "scans"))
    with pytest.raises(UploadError) as e:
        for i in range(0, len(body), 512):
            sink.feed(body[i:i + 512])
        sink.finish()
    assert e.value.status == status, e.value.message
    if case == "too large":
        assert sink.size <= 1000 + 512  # stopped at the piece that crossed the limit
    sink.abort()
    assert list(tmp_path.iterdir()) == []


def test_upload_page_links_outputs_wraps_and_previews_no_link(tmp_path: Path) -> None:
    from daemon.http.statuspage import PREVIEW_CHARS, upload_page_html

    txt = tmp_path / "letter.txt"
    txt.write_text("Dear Mr Smith, " + "x" * 300 + " <b>" + "y" * (2 * PREVIEW_CHARS), encoding="utf-8")
    md = tmp_path / "letter.md"
    md.write_text("# Letter\n", encoding="utf-8")
    state = {"name": "letter.pdf", "inbox": "inbox", "state": "done", "language": "en", "doctype": "letter",
             "route": "all", "pages": 1, "outputs": [str(txt), str(md)],
             "downloads": ["/upload/u1/files/0/letter.txt", "/upload/u1/files/1/letter.md"]}
    page = upload_page_html(state)
    assert '<a href="/upload/u1/files/0/letter.txt" download>letter.txt</a>' in page
    assert '<a href="/upload/u1/files/1/letter.md" download>letter.md</a>' in page
    assert "white-space:pre-wrap" in page  # the preview wraps
    pre = page.split("<pre>", 1)[1].split("</pre>", 1)[0]
    assert pre.startswith("Dear Mr Smith, ") and "&lt;b&gt;" in pre and len(pre) < PREVIEW_CHARS + 20
    # an output swapped for a symbolic link (to a secret) is not previewed
    secret = tmp_path / "secret"
    secret.write_text("the token", encoding="utf-8")
    txt.unlink()
    txt.symlink_to(secret)
    page = upload_page_html(state)
    assert "the token" not in page and "<pre>" not in page
