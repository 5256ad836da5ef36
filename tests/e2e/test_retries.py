"""Every retry is bounded and visible (daemon/service/endings.py ``Endings.retry``).

A document whose outputs cannot be written (its route's destination is a file, not a folder:
the same error on every try, an error around the document rather than about it) is shown as
retrying -- attempt count, last error, next try -- by ``ocr-daemon status`` (text and
``--json``), ``/status``, the status page and ``/metrics`` while it waits, and after
``max_attempts`` tries goes to the failed folder with its reason instead of being retried
forever. An error about the document itself (a page that hangs its renderer, a bug) that comes
back the same is failed on its second try (tests/e2e/test_faults.py, the render hang).
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from pathlib import Path
from typing import Any

import docgen
from conftest import http_url, run_cli, wait_for, with_http, write_rules

from daemon.config import Config
from daemon.journal.store import Journal
from daemon.service.pipeline import Pipeline


def test_repeating_error_is_shown_then_fails_the_document(tmp_path: Path, start_daemon: Any) -> None:
    (tmp_path / "blocked").write_text("a file where the route wants a folder\n")
    cfg = with_http(write_rules(
        tmp_path,
        daemon={"state_dir": "state", "failed_dir": "failed", "rescan_interval": 2, "retry_backoff": 20,
                "max_attempts": 3, "workers": 1, "render_workers": 1, "http": None},
        routes=[{"name": "all", "formats": ["txt", "json"], "destination": "blocked/out", "source": "keep"}],
    ))
    d = start_daemon(cfg)
    d.wait_ready()
    url = http_url(d)
    docgen.make_image(tmp_path / "letter.png", docgen.SAMPLES["en"]).rename(tmp_path / "inbox" / "letter.png")

    # attempt 1 failed: visible everywhere while it waits for its next try
    d.wait_log("attempt 1 of 3 failed, retry in 20s")
    # a WARNING line naming the file (issue 35: "where did my file go?" from the log alone)
    assert re.search(rf"WARNING \S+: doc-1 {re.escape(str(tmp_path / 'inbox' / 'letter.png'))}: attempt 1 of 3 failed",
                     d.log()), d.log()
    status = json.loads(run_cli("status", "--json", "--config", str(cfg)).stdout)
    (r,) = status["retrying"]
    assert r["attempts"] == 1 and r["max_attempts"] == 3 and r["path"].endswith("letter.png")
    assert r["error"] and r["next_try"] > time.time() - 1
    text = run_cli("status", "--config", str(cfg)).stdout
    assert re.search(r"doc-1 letter.png: attempt 1 of 3 failed, (next try in \d+s|being tried again now)", text), text
    live = json.loads(urllib.request.urlopen(url + "/status", timeout=10).read())
    assert [x["id"] for x in live["retrying"]] == [1]
    page = urllib.request.urlopen(url + "/", timeout=10).read().decode()
    assert 'class="retrying"' in page and "letter.png" in page and "no failures" not in page
    metrics = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
    assert "ocr_daemon_retries_total 1.0" in metrics and "ocr_daemon_documents_retrying 1.0" in metrics

    # the same error on every try: failed with its reason once max_attempts tries failed
    d.wait_log("attempt 2 of 3 failed, retry in 40s", 120)
    wait_for(lambda: (tmp_path / "failed" / "letter.png.error.txt").exists(), 180, "the failed folder")
    reason = (tmp_path / "failed" / "letter.png.error.txt").read_text()
    assert "(gave up after 3 tries)" in reason, reason
    assert r["error"].split(" (")[0] in reason
    after = json.loads(run_cli("status", "--json", "--config", str(cfg)).stdout)
    assert after["retrying"] == [] and after["counts"].get("failed") == 1
    metrics = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
    assert "ocr_daemon_retries_total 3.0" in metrics and "ocr_daemon_documents_retrying 0.0" in metrics
    d.stop()


def test_max_attempts_bounds_changing_errors(tmp_path: Path) -> None:
    """Different errors each time (nothing repeats): failed once ``max_attempts`` tries failed,
    with a backoff that doubles in between."""
    cfg = Config.model_validate({
        "daemon": {"state_dir": str(tmp_path / "state"), "failed_dir": str(tmp_path / "failed"), "max_attempts": 3,
                   "retry_backoff": 10, "retry_backoff_max": 600},
        "inboxes": [{"path": str(tmp_path / "inbox")}],
    })
    (tmp_path / "inbox").mkdir()
    src = docgen.make_image(tmp_path / "inbox" / "a.png", "hello")
    journal = Journal(cfg.daemon.state_dir)
    pipe = Pipeline(cfg, journal, engine=None, render_workers=1)  # type: ignore[arg-type]
    try:
        adm = journal.admit(src, "inbox")
        assert adm.document is not None
        delays = []
        for k in range(3):
            doc = journal.claim(adm.document.id)
            assert doc is not None
            out = pipe.endings.retry(doc, src, f"engine went away ({k})")
            delays.append(out.retry_in)
        assert delays[:2] == [10.0, 20.0]
        assert out.state == "failed" and "gave up after 3 tries" in out.reason
        assert (tmp_path / "failed" / "a.png").exists()
    finally:
        pipe.close()
        journal.close()
