"""The HTTP endpoint (daemon.http) of a real ``ocr-daemon run`` subprocess, over real HTTP.

- readiness: 503 (or not yet listening) while starting, 200 once started, 503 during the drain;
- /metrics parsed by ``prometheus_client``'s own parser, moving when documents are processed
  and when one fails; /status agrees with ``ocr-daemon status --json``;
- read-only: writes refused, and a non-loopback Host refused (DNS rebinding);
- the page rendered by a real headless Chromium (Debian's ``chromium``): DOM and screenshot show
  the document in progress with its progress and the failure with its reason;
- upload: a real multipart/form-data POST over a Unix socket, the file's outputs shown when done;
- a taken port: the daemon logs it, keeps processing and binds once the port is free.

Every daemon listens on a free port (127.0.0.1:0) or a Unix socket in its tmp folder, never on
the default 9750, so tests run side by side.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
from email.message import Message
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import docgen
from conftest import http_url, run_cli, wait_for, with_http, write_rules
from faultkit import tiny_png_bytes
from monitoringkit import metrics_used
from prometheus_client.parser import text_string_to_metric_families

LETTER = ("Dear Mr Smith,\nThank you for your letter of 3 March. We are pleased to confirm your appointment "
          "on Monday at ten o'clock.\nYours sincerely,\nJane Doe")
ROUTES = [{"name": "all", "destination": "out"}]


# --- a small HTTP client (TCP or Unix socket) -------------------------------------------------


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("localhost", timeout=30)
        self._path = path

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(30)
        s.connect(self._path)
        self.sock = s


def request(url: str, method: str, path: str, body: bytes | None = None,
            headers: dict[str, str] | None = None) -> tuple[int, Message, bytes]:
    """(status, headers (case-insensitive), body); status 0 when nothing listens."""
    if url.startswith("unix:"):
        conn: http.client.HTTPConnection = _UnixConnection(url[len("unix:"):])
    else:
        u = urlsplit(url)
        conn = http.client.HTTPConnection(u.hostname or "", u.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.headers, r.read()
    except (ConnectionError, FileNotFoundError):
        return 0, Message(), b""
    finally:
        conn.close()


def get(url: str, path: str, **kw: Any) -> tuple[int, str]:
    status, _, body = request(url, "GET", path, **kw)
    return status, body.decode("utf-8", "replace")


def status_json(url: str) -> dict[str, Any]:
    code, body = get(url, "/status")
    assert code == 200, (code, body)
    return json.loads(body)


def metrics(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of /metrics, parsed by prometheus_client: (name, sorted labels) -> value."""
    code, body = get(url, "/metrics")
    assert code == 200, body
    out = {}
    for fam in text_string_to_metric_families(body):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def sample(m: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return m[(name, tuple(sorted(labels.items())))]


def multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    """A multipart/form-data body (RFC 7578) and its Content-Type."""
    boundary = "----ocr-daemon-test-" + secrets.token_hex(8)
    parts = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    for name, (filename, data) in files.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                     f"Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def ocr_shows(read: str, *names: str) -> bool:
    """Each of ``names`` is among the words Tesseract read off a screenshot, allowing for a
    misread character or two (it has read ``wide-letter,json`` for ``wide-letter.json``): a
    screenshot check says the page is drawn; the exact text is the DOM's check."""
    import difflib

    flat = re.sub(r"\s+", "", read)  # a name wrapped in a narrow column, a space put in "4 / 16"

    def near(name: str) -> bool:
        return any(difflib.SequenceMatcher(None, name, flat[i:i + len(name)]).ratio() >= 0.85
                   for i in range(max(1, len(flat) - len(name) + 1)))

    return all(near(n) for n in names)


def drop(tmp: Path, name: str, make: Any) -> None:
    """Write a file next to the inbox, then move it in (the daemon sees it complete)."""
    staged = tmp / f"staged-{name}"
    make(staged)
    shutil.move(staged, tmp / "inbox" / name)


# --- tests --------------------------------------------------------------------------------------


def test_ready_metrics_status_and_drain(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    cfg = with_http(write_rules(tmp_path, routes=ROUTES))
    d = start_daemon(cfg)
    url = http_url(d)  # the endpoint comes up first, before the journal, engine and inboxes

    seen: list[tuple[int, str]] = []
    wait_for(lambda: seen.append(get(url, "/healthz/ready")) or seen[-1][0] == 200, 120, "ready")
    assert all(code == 503 and "starting" in body for code, body in seen[:-1]), seen
    assert seen[-1] == (200, "ready\n")
    assert get(url, "/healthz/live") == (200, "live\n")
    d.wait_ready()

    m0 = metrics(url)
    assert sample(m0, "ocr_daemon_pages_total") == 0
    assert sample(m0, "ocr_daemon_documents", state="done") == 0
    assert sample(m0, "ocr_daemon_ready") == 1
    assert sample(m0, "ocr_daemon_engine_restarts_total") == 0

    drop(tmp_path, "letter.pdf", lambda p: docgen.make_pdf(p, [LETTER, "Page two. " + LETTER], scanned=True))
    wait_for(lambda: status_json(url)["counts"].get("done") == 1, 180, "letter.pdf done")
    m1 = metrics(url)
    assert sample(m1, "ocr_daemon_pages_total") == 2
    assert sample(m1, "ocr_daemon_documents", state="done") == 1
    assert sample(m1, "ocr_daemon_documents_finished_total", outcome="done") == 1
    for stage, n in (("stability_wait", 1), ("render", 2), ("engine", 2), ("finish", 1)):
        assert sample(m1, "ocr_daemon_stage_seconds_count", stage=stage) == n, stage
        assert sample(m1, "ocr_daemon_stage_seconds_sum", stage=stage) > 0, stage
    # stability_delay is 0.5 s in write_rules: the wait is at least that
    assert sample(m1, "ocr_daemon_stage_seconds_sum", stage="stability_wait") >= 0.5
    assert sample(m1, "ocr_daemon_pages_per_second") > 0
    assert sample(m1, "ocr_daemon_pages_in_flight") == 0
    assert sample(m1, "process_start_time_seconds") > 0  # the library's process collector
    assert sample(m1, "ocr_daemon_engine_up") == 1 and sample(m1, "ocr_daemon_journal_writable") == 1
    assert 0 < sample(m1, "ocr_daemon_disk_free_bytes", folder="state") <= sample(m1, "ocr_daemon_disk_size_bytes", folder="state")

    # A file that is not what its name says: failed, counted by reason class, shown with its reason.
    (tmp_path / "inbox" / "broken.pdf").write_bytes(b"this is not a PDF at all\n" * 20)
    wait_for(lambda: status_json(url)["counts"].get("failed") == 1, 60, "broken.pdf failed")
    m2 = metrics(url)
    assert sample(m2, "ocr_daemon_failures_total", reason="wrong_type") == 1
    assert sample(m2, "ocr_daemon_documents_finished_total", outcome="failed") == 1
    # the shipped alert rules and Grafana dashboard (docs/monitoring/) query only what is served
    served = {name for name, _ in m2}
    assert metrics_used() <= served, sorted(metrics_used() - served)
    st = status_json(url)
    assert "not a PDF" in st["recent_failures"][0]["error"]
    live = st["live"]
    assert live["ready"] and live["pages_since_start"] == 2 and live["engine"] == "tesseract"
    assert sum(b["pages"] for b in live["history"]) == 2

    # /status carries what `ocr-daemon status --json` prints, field for field.
    cli = run_cli("status", "--json", "--config", str(cfg))
    assert cli.returncode == 0, cli.stderr
    printed = json.loads(cli.stdout)
    assert set(printed) == {"counts", "in_progress", "retrying", "waiting_for_space", "recent_failures", "recent_done", "hooks",
                            "state_size"}
    (done,) = printed["recent_done"]  # where did my file go: route, outputs' folder, the original
    assert (Path(done["path"]).name, done["route"], done["outputs_folder"]) == ("letter.pdf", "all", str(tmp_path / "out"))
    assert done["source_now"] == done["path"]  # kept (the route's default)
    text = run_cli("status", "--config", str(cfg)).stdout
    assert f"letter.pdf: all: {tmp_path / 'out'}; original kept" in text, text
    # pages read from a text layer count as pages done too (and on their own)
    drop(tmp_path, "manual.pdf", lambda p: docgen.make_pdf(p, ["Chapter one. " + LETTER] * 3))
    wait_for(lambda: status_json(url)["counts"].get("done") == 2, 60, "manual.pdf done")
    live = status_json(url)["live"]
    assert (live["pages_since_start"], live["text_layer_pages_since_start"]) == (5, 3), live
    assert sample(metrics(url), "ocr_daemon_text_layer_pages_total") == 3
    assert {k: st[k] for k in printed if k != "state_size"} == {k: v for k, v in printed.items() if k != "state_size"}
    assert st["state_size"]["journal_bytes"] > 0  # the state folder's size (measured: it moves between reads)

    # Read-only unless uploads are on; loopback names only (no DNS rebinding).
    assert request(url, "POST", "/upload", b"x", {"Content-Type": "text/plain"})[0] == 403
    for method in ("PUT", "DELETE", "POST"):
        assert request(url, method, "/status")[0] == 405, method
    assert get(url, "/upload")[0] == 403
    assert get(url, "/status", headers={"Host": "attacker.example:80"})[0] == 421  # Misdirected Request
    assert get(url, "/status", headers={"Host": "localhost"})[0] == 200
    assert get(url, "/nothing-here")[0] == 404

    # Drain: SIGTERM while a document is in flight -> not ready (503), still live, then exit 0.
    drop(tmp_path, "long.pdf", lambda p: docgen.make_pdf(p, [f"Page {i + 1}. " + LETTER for i in range(8)], scanned=True))
    wait_for(lambda: any(doc["name"] == "long.pdf" and doc["pages_done"] >= 1 for doc in status_json(url)["live"]["documents"]),
             180, "long.pdf in progress")
    d.signal(signal.SIGTERM)
    code, body = wait_for(lambda: (r := get(url, "/healthz/ready"))[0] != 200 and r, 10, "503 during the drain")
    assert code == 503 and "stopping" in body, (code, body)
    assert get(url, "/healthz/live")[0] == 200
    assert d.proc.wait(timeout=90) == 0
    assert get(url, "/healthz/live")[0] == 0  # closed with the daemon


def _chromium(*args: str, tmp: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Debian's chromium, headless, with a fresh profile; its whole process group is killed after."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    assert exe, "chromium is not installed (bash tests/run.sh installs the Debian package)"
    profile = tmp / f"chromium-profile-{secrets.token_hex(4)}"
    proc = subprocess.Popen(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", f"--user-data-dir={profile}", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_status_page_in_headless_chromium(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    cfg = with_http(write_rules(tmp_path, routes=ROUTES))
    d = start_daemon(cfg)
    url = http_url(d)
    d.wait_ready()
    drop(tmp_path, "letter.png", lambda p: docgen.make_image(p, LETTER))
    (tmp_path / "inbox" / "scan-0042.pdf").write_bytes(b"%PDF-1.4\n1 0 obj\n<<>>\nendobj\n")  # truncated
    wait_for(lambda: status_json(url)["counts"] == {"done": 1, "failed": 1}, 60, "letter.png done, scan-0042.pdf failed")
    pages = 16
    drop(tmp_path, "annual-report.pdf",
         lambda p: docgen.make_pdf(p, [f"Page {i + 1}. " + LETTER for i in range(pages)], scanned=True))
    wait_for(lambda: any(doc["pages_done"] >= 1 for doc in status_json(url)["live"]["documents"]), 180,
             "annual-report.pdf in progress")

    dom = _chromium("--dump-dom", url + "/", tmp=tmp_path)
    assert dom.returncode == 0, dom.stderr[-3000:]
    html = dom.stdout
    row = re.search(r'<tr class="doc">.*?</tr>', html, re.DOTALL)
    assert row, html
    assert "annual-report.pdf" in row.group(0)
    prog = re.search(r'<progress max="16" value="(\d+)"', row.group(0))
    text = re.search(r"(\d+) / 16 pages", row.group(0))
    assert prog and text and 1 <= int(prog.group(1)) == int(text.group(1)) < pages, row.group(0)
    failures = re.search(r'<table id="failures">.*?</table>', html, re.DOTALL)
    assert failures and "scan-0042.pdf" in failures.group(0) and "PDF" in failures.group(0), html
    assert "<script" not in html
    counts = re.search(r'<table id="counts">.*?</table>', html, re.DOTALL)
    assert counts and re.search(r"<td>done</td><td[^>]*>1</td>", counts.group(0)), html
    # the recently finished documents: route, outputs' folder, where the original is now
    recent = re.search(r'<table id="recent-done">.*?</table>', html, re.DOTALL)
    assert recent, html
    cells = re.findall(r"<td[^>]*>(.*?)</td>", re.search(r'<tr class="done">.*?</tr>', recent.group(0), re.DOTALL).group(0))
    assert cells == ["letter.png", "all", str(tmp_path / "out"), "kept"], cells

    shot = tmp_path / "status-page.png"
    r = _chromium(f"--screenshot={shot}", "--window-size=1100,1000", "--hide-scrollbars",
                  "--force-device-scale-factor=2", url + "/", tmp=tmp_path)
    assert r.returncode == 0 and shot.is_file(), r.stderr[-3000:]
    # The screenshot really shows the page: Tesseract reads the names off the pixels (tolerantly:
    # the DOM above is the exact check; this one says the page is drawn, not blank).
    read = subprocess.run(["tesseract", str(shot), "-", "-l", "eng"], capture_output=True, text=True, timeout=120)
    assert ocr_shows(read.stdout, "annual-report.pdf", "scan-0042.pdf"), read.stdout
    assert re.search(r"\d+\s*/\s*16\s*pages", read.stdout), read.stdout
    if os.environ.get("OCR_DAEMON_SCREENSHOT"):  # how docs/status-page.png is made
        shutil.copy(shot, os.environ["OCR_DAEMON_SCREENSHOT"])
    d.stop()


def test_upload_over_a_unix_socket(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    sock = tmp_path / "http.sock"
    cfg = with_http(write_rules(tmp_path, routes=ROUTES), listen=str(sock), upload=True)
    d = start_daemon(cfg)
    url = http_url(d)
    assert url == f"unix:{sock}"
    wait_for(lambda: get(url, "/healthz/ready")[0] == 200, 120, "ready")

    code, form = get(url, "/upload")
    assert code == 200, form
    token = re.search(r'name="token" value="([^"]+)"', form)
    assert token and 'name="file"' in form and '<option value="inbox">' in form
    png = docgen.make_image(tmp_path / "letter.png", LETTER)
    body, ctype = multipart({"token": token.group(1), "inbox": "inbox"}, {"file": ("letter.png", png.read_bytes())})
    code, headers, text = request(url, "POST", "/upload", body, {"Content-Type": ctype})
    assert code == 303, text
    where = headers["Location"]
    assert where.startswith("/upload/")

    def finished() -> dict[str, Any] | None:
        code, text = get(url, where + ".json")
        assert code == 200, text
        state = json.loads(text)
        return state if state["state"] in ("done", "failed") else None

    state = wait_for(finished, 120, "the upload processed")
    assert state["state"] == "done" and state["language"] == "en", state
    outs = [Path(o) for o in state["outputs"]]
    assert {o.name for o in outs} == {"letter.txt", "letter.md", "letter.json"}
    assert all(o.parent == tmp_path / "out" for o in outs)
    assert "appointment" in (tmp_path / "out" / "letter.txt").read_text(encoding="utf-8")
    # it went the normal way: an inbox file, journaled, routed
    assert (tmp_path / "inbox" / "letter.png").read_bytes() == png.read_bytes()
    assert "queued letter.png from inbox 'inbox'" in d.log()
    code, page = get(url, where)
    assert code == 200 and "letter.txt" in page and "appointment" in page and 'http-equiv="refresh"' not in page
    # each output a link that downloads the file the daemon wrote; nothing else is served there
    links = re.findall(r'<a href="(/upload/[^"]+/files/\d+/[^"]+)" download>([^<]+)</a>', page)
    assert sorted(name for _, name in links) == ["letter.json", "letter.md", "letter.txt"], page
    assert [link for link, _ in links] == state["downloads"]
    for link, name in links:
        code, headers, data = request(url, "GET", link)
        assert code == 200 and data == (tmp_path / "out" / name).read_bytes(), (link, code)
        assert headers["content-disposition"] == f"attachment; filename*=UTF-8''{name}"
    first = links[0][0]
    for wrong in (first.rsplit("/", 1)[0] + "/rules.yaml", first.replace("/files/0/", "/files/9/"),
                  first.replace(where, "/upload/nope"), first.rsplit("/", 1)[0] + "/..%2Frules.yaml"):
        assert request(url, "GET", wrong)[0] == 404, wrong
    # an output swapped for a symbolic link (to a file of the daemon's) is not served
    json_link = next(link for link, name in links if name == "letter.json")
    (tmp_path / "out" / "letter.json").unlink()
    (tmp_path / "out" / "letter.json").symlink_to(cfg)
    assert request(url, "GET", json_link)[0] == 404

    # refused: no token, a type the inbox does not take, an unknown inbox
    body, ctype = multipart({"inbox": "inbox"}, {"file": ("x.png", png.read_bytes())})
    assert request(url, "POST", "/upload", body, {"Content-Type": ctype})[0] == 403
    body, ctype = multipart({"token": token.group(1)}, {"file": ("notes.txt", b"hello")})
    code, _, text = request(url, "POST", "/upload", body, {"Content-Type": ctype})
    assert code == 400 and b"does not take" in text
    body, ctype = multipart({"token": token.group(1), "inbox": "nope"}, {"file": ("y.png", png.read_bytes())})
    assert request(url, "POST", "/upload", body, {"Content-Type": ctype})[0] == 400
    assert not (tmp_path / "inbox" / "notes.txt").exists() and not list((tmp_path / "inbox").glob(".*upload-part"))

    assert d.stop() == 0
    assert not sock.exists()


def test_port_taken_logs_an_error_keeps_processing_and_binds_later(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    blocker = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        cfg = with_http(write_rules(tmp_path, routes=ROUTES), listen=f"127.0.0.1:{port}", upload=True,
                        upload_clients=["192.0.2.0/24"])
        d = start_daemon(cfg)
        d.wait_log(f"cannot listen on 127.0.0.1:{port}: the address is in use", 60)
        d.wait_ready()
        (tmp_path / "inbox" / "hello.png").write_bytes(tiny_png_bytes("Hello world 42", size=(400, 60), font_size=32))
        wait_for(lambda: (tmp_path / "out" / "hello.txt").exists(), 120, "hello.png processed while the port is taken")
    finally:
        blocker.close()
    url = http_url(d, timeout=60)  # retried every 30 s
    assert url == f"http://127.0.0.1:{port}"
    assert get(url, "/healthz/ready")[0] == 200
    assert status_json(url)["counts"]["done"] == 1
    # uploads on, but only for 192.0.2.0/24: refused from loopback
    code, text = get(url, "/upload")
    assert code == 403 and "upload_clients" in text
    assert d.stop() == 0



def test_upload_pages_in_headless_chromium(tmp_path: Path, start_daemon) -> None:  # type: ignore[no-untyped-def]
    """The upload form and an upload's result page as a person sees them: screenshots by a real
    headless Chromium over loopback, read back with Tesseract. The result page shows the file's
    outputs as download links and wraps a long line of text inside the window."""
    cfg = with_http(write_rules(tmp_path, routes=ROUTES), upload=True)
    d = start_daemon(cfg)
    url = http_url(d)
    wait_for(lambda: get(url, "/healthz/ready")[0] == 200, 120, "ready")

    form_shot = tmp_path / "upload-form.png"
    r = _chromium(f"--screenshot={form_shot}", "--window-size=900,700", "--hide-scrollbars", url + "/upload",
                  tmp=tmp_path)
    assert r.returncode == 0 and form_shot.is_file(), r.stderr[-3000:]
    seen = subprocess.run(["tesseract", str(form_shot), "-", "-l", "eng"], capture_output=True, text=True,
                          timeout=120).stdout
    assert "inbox" in seen.lower() and re.search(r"upload|file", seen, re.I), seen

    code, form = get(url, "/upload")
    token = re.search(r'name="token" value="([^"]+)"', form)
    assert code == 200 and token, form
    long_line = "Appointment confirmation for the annual maintenance visit " * 3  # wider than the window
    png = docgen.make_image(tmp_path / "wide-letter.png", long_line.strip(), width=2400, font_size=30)
    body, ctype = multipart({"token": token.group(1), "inbox": "inbox"}, {"file": ("wide-letter.png", png.read_bytes())})
    code, headers, text = request(url, "POST", "/upload", body, {"Content-Type": ctype})
    assert code == 303, text
    where = headers["Location"]
    wait_for(lambda: json.loads(get(url, where + ".json")[1])["state"] == "done", 180, "the upload processed")

    shot = tmp_path / "upload-result.png"
    r = _chromium(f"--screenshot={shot}", "--window-size=700,900", "--hide-scrollbars", url + where, tmp=tmp_path)
    assert r.returncode == 0 and shot.is_file(), r.stderr[-3000:]
    read = subprocess.run(["tesseract", str(shot), "-", "-l", "eng"], capture_output=True, text=True, timeout=120).stdout
    # the outputs are there by name (as links: the DOM check below), and the text is on screen,
    # wrapped: words from the end of the long line are visible in a 700 px window
    assert ocr_shows(read, "wide-letter.txt", "wide-letter.json"), read
    assert read.lower().count("maintenance") >= 2, read
    dom = _chromium("--dump-dom", url + where, tmp=tmp_path).stdout
    assert re.search(r'<a href="/upload/[^"]+/files/\d+/wide-letter\.txt" download="">wide-letter\.txt</a>', dom), dom
    d.stop()
