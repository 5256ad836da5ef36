"""The ``pdf`` output end to end: ``ocr-daemon run`` (Tesseract) writes searchable PDFs for
files dropped into its inbox, and a headless Chromium opens one in a PDF viewer and finds a
searched word (Latin and Chinese) on the page where it is.

The viewer is pdf.js (Debian's ``libjs-pdf``: the same viewer Firefox ships), served on
localhost: Chromium's built-in PDF viewer renders nothing in headless mode (a blank page in
``--screenshot``), so it cannot be searched there. Chromium is driven through the DevTools
protocol over ``--remote-debugging-pipe`` (no port, no extra package). The screenshot of the
search lands in the test's tmp folder, and in ``$OCR_DAEMON_SCREENSHOT_DIR`` when set (that is
how docs/pdf-search.png was made).
"""

from __future__ import annotations

import base64
import functools
import http.server
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docgen
import pytest
from conftest import write_rules

PDFJS = Path("/usr/share/javascript/pdf")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or not (PDFJS / "web" / "viewer.html").is_file() or shutil.which("pdftotext") is None,
    reason="needs chromium, libjs-pdf and poppler-utils (tests/run.sh installs them)",
)


class Chrome:
    """Headless Chromium spoken to over the DevTools pipe (fd 3: commands in, fd 4: replies out)."""

    def __init__(self, profile: Path) -> None:
        cmd_r, self._cmd_w = os.pipe()
        self._out_r, out_w = os.pipe()

        def child_fds() -> None:  # runs in the child before exec: put the pipe ends at 3 and 4
            a, b = os.dup(cmd_r), os.dup(out_w)  # fresh numbers, so dup2 below never sees a == 3 / b == 4
            a, b = (os.dup(a) if a in (3, 4) else a), (os.dup(b) if b in (3, 4) else b)
            os.dup2(a, 3)
            os.dup2(b, 4)

        assert CHROMIUM is not None
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={profile}", "--remote-debugging-pipe", "--window-size=1000,800", "about:blank"],
            close_fds=False, preexec_fn=child_fds, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        os.close(cmd_r)
        os.close(out_w)
        self._n = 0
        self._buf = b""

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self._n += 1
        msg: dict[str, Any] = {"id": self._n, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        while True:
            while b"\0" not in self._buf:
                chunk = os.read(self._out_r, 1 << 16)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                self._buf += chunk
            raw, self._buf = self._buf.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._n:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return dict(reply["result"])

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                self.send("Browser.close")
                self.proc.wait(timeout=10)
        except Exception:
            pass
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)  # its own session: renderer/zygote go too
                self.proc.wait(timeout=10)
            os.close(self._cmd_w)
            os.close(self._out_r)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """An HTTP server on localhost for tmp_path/site (pdf.js linked in): (base URL, folder)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "pdfjs").symlink_to(PDFJS)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", site
    finally:
        httpd.shutdown()
        httpd.server_close()
        t.join(5)


def search_in_viewer(base: str, pdf: str, query: str, page: int, profile: Path, shot: Path) -> str:
    """Open ``pdf`` in pdf.js, search ``query`` (the viewer's #search= link, as a user's Ctrl+F),
    go to ``page``, screenshot; returns the viewer's result line ("1 of 1 match", or its
    "Phrase not found")."""
    chrome = Chrome(profile)
    try:
        target = chrome.send("Target.createTarget", {"url": f"{base}/pdfjs/web/viewer.html?file=/{pdf}#page={page}&search={query}"})
        session = chrome.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})["sessionId"]
        found = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            # the match count, or the viewer's "Phrase not found" message
            r = chrome.send("Runtime.evaluate", {
                "expression": "['findResultsCount', 'findMsg'].map(i => (document.getElementById(i) || {}).textContent || '')"
                              ".join(' ').trim()",
                "returnByValue": True,
            }, session)
            found = str(r["result"].get("value") or "")
            if found:
                break
            time.sleep(0.3)
        time.sleep(0.5)  # let the highlight paint
        data = chrome.send("Page.captureScreenshot", {"format": "png"}, session)["data"]
        shot.write_bytes(base64.b64decode(data))
        extra = os.environ.get("OCR_DAEMON_SCREENSHOT_DIR")
        if extra:
            Path(extra).mkdir(parents=True, exist_ok=True)
            shutil.copy(shot, Path(extra) / shot.name)
        return found
    finally:
        chrome.close()


def test_daemon_pdf_searchable_in_viewer(tmp_path: Path, start_daemon: Any, serve: tuple[str, Path]) -> None:
    s = docgen.SAMPLES
    cfg = write_rules(tmp_path, routes=[
        {"name": "pdfa", "match": {"filename": "*archive*"}, "formats": ["pdf", "json"], "pdfa": True,
         "destination": str(tmp_path / "out")},
        {"name": "all", "formats": ["pdf", "json"]},
    ])
    inbox = tmp_path / "inbox"
    d = start_daemon(cfg)
    d.wait_ready()
    staging = tmp_path / "staging"
    staging.mkdir()
    docgen.make_pdf(staging / "rechnung.pdf", [s["de"], s["zh"]], scanned=True)
    docgen.make_image(staging / "photo.jpg", s["fr"], "jpeg", exif_orientation=6)
    docgen.make_multipage_tiff(staging / "archive.tiff", [s["en"], s["ja"]])
    for f in staging.iterdir():
        os.replace(f, inbox / f.name)
    d.wait_log(" done: ", timeout=240, count=3)
    time.sleep(4)  # longer than the stability delay: a PDF written into the inbox would be taken by now
    assert d.log().count(" processing ") == 3, d.log()  # the outputs are not fed back as new documents
    d.stop()

    beside = json.loads((inbox / "rechnung.json").read_text(encoding="utf-8"))
    assert [p["placement"] for p in beside["pdf"]["pages"]] == ["words", "words"]
    assert str(inbox / "rechnung.ocr.pdf") in beside["outputs"]  # beside its PDF source: .ocr.pdf
    photo = json.loads((inbox / "photo.json").read_text(encoding="utf-8"))
    assert str(inbox / "photo.pdf") in photo["outputs"]
    archived = json.loads((tmp_path / "out" / "archive.json").read_text(encoding="utf-8"))
    assert archived["pdf"]["pdfa"] == "PDF/A-2b", archived["pdf"]
    assert (tmp_path / "out" / "archive.pdf").is_file()
    text = subprocess.run(["pdftotext", str(inbox / "photo.pdf"), "-"], capture_output=True, text=True, check=True).stdout
    assert "Facture" in text and "commande" in text

    base, site = serve
    shutil.copy(inbox / "rechnung.ocr.pdf", site / "rechnung.ocr.pdf")
    found = search_in_viewer(base, "rechnung.ocr.pdf", "Bestellung", 1, tmp_path / "chrome1", tmp_path / "pdf-search.png")
    assert found.startswith("1 of 1"), found
    found = search_in_viewer(base, "rechnung.ocr.pdf", "感谢", 2, tmp_path / "chrome2", tmp_path / "pdf-search-zh.png")
    assert found.startswith("1 of 1"), found
    nothing = search_in_viewer(base, "rechnung.ocr.pdf", "Quittung", 1, tmp_path / "chrome3", tmp_path / "none.png")
    assert "not found" in nothing.lower(), nothing  # the viewer's search is real: an absent word is not found
