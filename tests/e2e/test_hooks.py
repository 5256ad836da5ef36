"""``routes[].on_done`` hooks (daemon/service/hooks.py, daemon/journal/deliveries.py), end to end.

Real daemons (``conftest.DaemonProc``), real Tesseract on tiny pages, and a real HTTP receiver: a
small ``http.server`` script run by the test as its own process on 127.0.0.1, which the test
kills with SIGKILL mid-delivery and starts again. What is checked is what a receiver and an
operator see: the requests (headers, body), the sidecar on disk, ``ocr-daemon status``,
``/status`` and ``/metrics``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import SESSION_MARK, http_url, run_cli, wait_for, with_http
from faultkit import fast_rules, journal_rows, tiny_png
from prometheus_client.parser import text_string_to_metric_families

RECEIVER = r'''
import http.server, json, os, sys, time
port, log, answers = int(sys.argv[1]), sys.argv[2], sys.argv[3].split(",")

class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        rec = {"path": self.path, "headers": dict(self.headers), "body": body.decode("utf-8"), "answer": answer}
        with open(log, "a") as f:
            f.write(json.dumps(rec) + "\n")
            f.flush()
            os.fsync(f.fileno())
        if answer == "hang":  # took the request, never answers: the test kills this process
            time.sleep(3600)
        self.send_response(int(answer))
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

http.server.HTTPServer(("127.0.0.1", port), Hook).serve_forever()
'''


class Receiver:
    """The webhook receiver as a process of its own: ``answers`` in order (``hang``: keep the
    request and never answer), the last one repeated; every request appended to ``log``."""

    def __init__(self, tmp: Path, port: int) -> None:
        self.script = tmp / "receiver.py"
        self.script.write_text(RECEIVER)
        self.log = tmp / "received.jsonl"
        self.port = port
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, answers: str) -> None:
        self.proc = subprocess.Popen([sys.executable, str(self.script), str(self.port), str(self.log), answers])

        def listening() -> bool:
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", self.port)) == 0

        wait_for(listening, 30, "the receiver to listen")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def requests(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[Receiver]:
    with socket.socket() as s:  # a free port, kept across the receiver's restarts
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = Receiver(tmp_path, port)
    yield r
    r.kill()


def hook_route(on_done: dict[str, Any], **match: Any) -> dict[str, Any]:
    return {"name": "hooked", "destination": "out", "source": "archive", "archive_to": "archive",
            "on_done": on_done, **({"match": match} if match else {})}


def status(cfg: Path) -> dict[str, Any]:
    r = run_cli("status", "--json", "--config", str(cfg))
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def metrics(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    body = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(body) for s in fam.samples}


def hook_count(m: dict[tuple[str, tuple[tuple[str, str], ...]], float], kind: str, outcome: str) -> float:
    return m[("ocr_daemon_hook_deliveries_total", (("kind", kind), ("outcome", outcome)))]


def sidecar_of(tmp: Path) -> Path:
    (side,) = (tmp / "out").glob("*.json")
    return side


def check_requests(reqs: list[dict[str, Any]], side: Path) -> None:
    """Every try carries the same idempotency key (the document id) and the sidecar's bytes."""
    body = side.read_text(encoding="utf-8")
    doc_id = json.loads(body)["document_id"]
    for i, r in enumerate(reqs, 1):
        h = {k.lower(): v for k, v in r["headers"].items()}
        assert h["idempotency-key"] == str(doc_id), r
        assert h["content-type"] == "application/json", r
        assert r["body"] == body, "the POSTed body is the sidecar, byte for byte"
        assert r["path"] == "/hook"
        assert int(h["x-ocr-daemon-attempt"]) >= i  # refused connections count as tries too


def test_webhook_receiver_killed_mid_delivery_then_restarted(tmp_path: Path, start_daemon: Any, receiver: Receiver) -> None:
    cfg = with_http(fast_rules(tmp_path, routes=[hook_route(
        {"webhook": f"http://127.0.0.1:{receiver.port}/hook", "timeout": 30, "attempts": 30, "backoff": 0.5,
         "backoff_max": 1})]))
    receiver.start("hang")
    d = start_daemon(cfg)
    d.wait_ready()
    url = http_url(d)
    tiny_png(tmp_path / "inbox" / "letter.png", "Hello hooks")

    wait_for(lambda: receiver.requests(), 120, "the first delivery to reach the receiver")
    assert [r["state"] for r in journal_rows(tmp_path)] == ["done"]  # the hook runs after "done"
    pending = status(cfg)["hooks"]
    assert pending["pending"] == 1 and pending["delivered"] == 0, pending
    receiver.kill()  # mid-delivery: the request was read, no answer will come
    d.wait_log("try 2 of 30 failed")  # the cut connection, then a refused one: both tries counted
    receiver.start("500,200")  # back, but failing once more first
    wait_for(lambda: any(r["answer"] == "200" for r in receiver.requests()), 60, "a delivery answered 200")
    d.wait_log("delivered (try")

    reqs = receiver.requests()
    assert [r["answer"] for r in reqs] == ["hang", "500", "200"], reqs
    check_requests(reqs, sidecar_of(tmp_path))
    hooks = status(cfg)["hooks"]
    assert (hooks["pending"], hooks["failed"], hooks["delivered"]) == (0, 0, 1), hooks
    m = metrics(url)
    assert hook_count(m, "webhook", "delivered") == 1
    assert hook_count(m, "webhook", "retry") >= 3  # cut off, refused at least once, 500
    assert hook_count(m, "webhook", "failed") == 0
    assert m[("ocr_daemon_hook_deliveries_pending", ())] == 0
    time.sleep(1.5)  # a delivered hook is not repeated
    assert len(receiver.requests()) == 3
    assert d.stop() == 0


def test_daemon_killed_after_done_delivers_on_restart(tmp_path: Path, start_daemon: Any, receiver: Receiver) -> None:
    cfg = fast_rules(tmp_path, routes=[hook_route(
        {"webhook": f"http://127.0.0.1:{receiver.port}/hook", "timeout": 30, "attempts": 3, "backoff": 0.5})])
    receiver.start("hang")
    d = start_daemon(cfg)
    d.wait_ready()
    tiny_png(tmp_path / "inbox" / "scan.png", "Killed before delivery")
    wait_for(lambda: receiver.requests(), 120, "the delivery to start")
    assert [r["state"] for r in journal_rows(tmp_path)] == ["done"]
    d.kill9()  # done, delivery under way and not answered: nothing says "delivered"
    receiver.kill()
    receiver.start("200")

    d2 = start_daemon(cfg)
    d2.wait_log("1 delivery(ies) pending from before this start")
    wait_for(lambda: len(receiver.requests()) == 2, 60, "the repeat after the restart")
    d2.wait_log("delivered (try 2")
    reqs = receiver.requests()
    assert [r["answer"] for r in reqs] == ["hang", "200"]
    check_requests(reqs, sidecar_of(tmp_path))
    hooks = status(cfg)["hooks"]
    assert (hooks["pending"], hooks["failed"], hooks["delivered"]) == (0, 0, 1), hooks
    assert d2.stop() == 0


HOOK_SCRIPT = r'''
import json, os, sys, time
out = sys.argv[1]
if "slow" in os.path.basename(sys.argv[-1]):
    with open(out + ".pid", "w") as f:
        f.write(str(os.getpid()))
    time.sleep(60)  # past its timeout: killed
got = {"argv": sys.argv, "stdin": sys.stdin.read(), "env": dict(os.environ), "cwd": os.getcwd()}
with open(out, "w") as f:
    json.dump(got, f)
'''


def test_exec_hook_gets_the_sidecar_and_once_runs_it(tmp_path: Path) -> None:
    script = tmp_path / "hook.py"
    script.write_text(HOOK_SCRIPT)
    got = tmp_path / "got.json"
    slow = {"exec": [sys.executable, str(script), str(tmp_path / "slow.json")], "timeout": 2, "attempts": 1}
    cfg = fast_rules(tmp_path, routes=[
        {**hook_route(slow, filename="slow*"), "name": "slow"},
        hook_route({"exec": [sys.executable, str(script), str(got)], "timeout": 30}),
    ])
    tiny_png(tmp_path / "inbox" / "memo.png", "Exec hook")
    tiny_png(tmp_path / "inbox" / "slow.png", "Slow hook")
    t0 = time.monotonic()
    r = run_cli("once", "--config", str(cfg), str(tmp_path / "inbox" / "memo.png"), str(tmp_path / "inbox" / "slow.png"))
    took = time.monotonic() - t0
    assert r.returncode == 0, r.stderr  # a failed hook never fails its document

    # the hook ran before `once` returned: the sidecar on stdin, its path as the last argument
    seen = json.loads(got.read_text())
    side = next(p for p in (tmp_path / "out").glob("memo*.json"))
    assert seen["argv"][1:] == [str(got), str(side)]
    assert seen["stdin"] == side.read_text(encoding="utf-8")
    assert seen["cwd"] == "/"
    env = seen["env"]
    assert env["OCR_DAEMON_DOCUMENT_ID"] == str(json.loads(seen["stdin"])["document_id"])
    assert env["OCR_DAEMON_SIDECAR"] == str(side) and env["OCR_DAEMON_ATTEMPT"] == "1"
    assert SESSION_MARK not in env and "HOME" not in env  # nothing of the daemon's environment
    assert set(env) <= {"PATH", "LANG", "LC_CTYPE", "OCR_DAEMON_DOCUMENT_ID", "OCR_DAEMON_SIDECAR", "OCR_DAEMON_ATTEMPT"}

    # the slow hook: killed at its timeout (its process is gone), recorded failed, shown
    assert "timed out after 2s (killed)" in r.stderr, r.stderr
    pid = int((tmp_path / "slow.json.pid").read_text())
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split(")")[-1][:3]
    assert not (tmp_path / "slow.json").exists()
    assert took < 120
    hooks = status(cfg)["hooks"]
    assert (hooks["pending"], hooks["failed"], hooks["delivered"]) == (0, 1, 1), hooks
    (failed,) = hooks["failed_deliveries"]
    assert failed["kind"] == "exec" and "timed out" in failed["error"] and failed["attempts"] == 1
    assert {row["state"] for row in journal_rows(tmp_path)} == {"done"}


FAILING_HOOK = r'''
import sys
sys.stdin.read()
print("cannot reach the document database", file=sys.stderr)
sys.exit(3)
'''


def test_failing_exec_hook_leaves_the_document_done_and_shows(tmp_path: Path, start_daemon: Any) -> None:
    script = tmp_path / "failing.py"
    script.write_text(FAILING_HOOK)
    cfg = with_http(fast_rules(tmp_path, routes=[hook_route(
        {"exec": [sys.executable, str(script)], "attempts": 2, "backoff": 0.2})]))
    d = start_daemon(cfg)
    d.wait_ready()
    url = http_url(d)
    tiny_png(tmp_path / "inbox" / "bill.png", "Failing hook")
    d.wait_log("failed (after 2 tries; the document is done)", 120)

    assert [r["state"] for r in journal_rows(tmp_path)] == ["done"]
    assert sidecar_of(tmp_path).exists() and (tmp_path / "archive" / "bill.png").exists()
    hooks = status(cfg)["hooks"]
    assert (hooks["pending"], hooks["failed"], hooks["delivered"]) == (0, 1, 0), hooks
    (f,) = hooks["failed_deliveries"]
    assert f["error"].startswith("exit code 3: cannot reach the document database"), f
    assert f["attempts"] == 2 and f["max_attempts"] == 2 and f["target"].endswith("failing.py")
    text = run_cli("status", "--config", str(cfg)).stdout
    assert "hooks: 0 pending, 1 failed, 0 delivered" in text, text
    assert "failed  doc-1 exec" in text and "exit code 3" in text, text
    live = json.loads(urllib.request.urlopen(url + "/status", timeout=10).read())
    assert live["hooks"] == hooks
    page = urllib.request.urlopen(url + "/", timeout=10).read().decode()
    assert 'id="hooks"' in page and "exit code 3" in page
    m = metrics(url)
    assert hook_count(m, "exec", "failed") == 1 and hook_count(m, "exec", "retry") == 1
    assert hook_count(m, "exec", "delivered") == 0
    assert m[("ocr_daemon_hook_deliveries_pending", ())] == 0
    assert d.stop() == 0
    assert os.path.exists(tmp_path / "state" / "journal.sqlite3")


def test_on_done_config_is_checked(tmp_path: Path) -> None:
    """``check-config`` names a route whose hooks cannot work: no sidecar to give them, no hook at
    all, a URL that is not http(s), an empty command."""
    from daemon.config import parse_config_text
    from daemon.errors import ConfigError

    base = "inboxes: [{path: in}]\nroutes:\n  - name: r\n"
    ok = parse_config_text(base + "    on_done: {webhook: 'https://u:p@dms.example:8443/hook?t=1', exec: [/bin/true]}\n")
    h = ok.routes[0].on_done
    assert h is not None and (h.timeout, h.attempts, h.backoff, h.backoff_max) == (60.0, 8, 10.0, 600.0)
    for bad, says in (
        ("    formats: [txt]\n    on_done: {webhook: 'http://127.0.0.1/x'}\n", "needs `json` in formats"),
        ("    on_done: {timeout: 5}\n", "needs `exec`, `webhook` or both"),
        ("    on_done: {webhook: 'ftp://example/x'}\n", "not an http:// or https:// URL"),
        ("    on_done: {webhook: 'http://h:99999/x'}\n", "is not a URL"),
        ("    on_done: {exec: []}\n", "at least 1"),
        ("    on_done: {exec: ['']}\n", "must not be empty"),
        ("    on_done: {webhook: 'http://h/x', attempts: 0}\n", "greater than or equal to 1"),
    ):
        with pytest.raises(ConfigError) as e:
            parse_config_text(base + bad)
        assert any(says in p for p in e.value.problems), (bad, e.value.problems)
    from daemon.journal.deliveries import target_text
    from daemon.service.hooks import specs_of

    # what logs and status show of a webhook: no credentials, no query
    assert [target_text(s) for s in specs_of(ok.routes[0])] == ["/bin/true", "https://dms.example:8443/hook"]
