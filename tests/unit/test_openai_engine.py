"""OpenAIEngine against small fake OpenAI-compatible servers (http.server on 127.0.0.1)."""

from __future__ import annotations

import base64
import io
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from PIL import Image

from daemon.config import EngineCfg
from daemon.engines.base import PageRequest
from daemon.engines.openai_engine import OpenAIEngine
from daemon.errors import FatalError, InputError, TransientError


class Fake:
    """One fake server: records requests; ``script`` decides each answer."""

    def __init__(self, name: str, script=None, delay: float = 0.0) -> None:  # type: ignore[no-untyped-def]
        self.name = name
        self.script = script or (lambda n, body: (200, None))
        self.delay = delay
        self.bodies: list[dict[str, Any]] = []
        self.active = 0
        self.peak = 0
        self.lock = threading.Lock()
        fake = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def _send(self, status: int, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                if self.path == "/v1/models":
                    self._send(200, {"data": [{"id": "lightonai/LightOnOCR-2-1B"}]})
                else:
                    self._send(404, {})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake.lock:
                    fake.bodies.append(body)
                    n = len(fake.bodies)
                    fake.active += 1
                    fake.peak = max(fake.peak, fake.active)
                try:
                    time.sleep(fake.delay)
                    status, text, *finish = fake.script(n, body)  # (status, text[, finish_reason])
                    if status != 200:
                        self._send(status, {"error": "scripted"})
                        return
                    img = body["messages"][0]["content"][0]["image_url"]["url"]
                    size = Image.open(io.BytesIO(base64.b64decode(img.split(",", 1)[1]))).size
                    self._send(200, {"choices": [{"message": {"role": "assistant", "content": text or f"{fake.name} {size[0]}x{size[1]}"},
                                                  "finish_reason": finish[0] if finish else "stop"}], "usage": {"completion_tokens": 7}})
                finally:
                    with fake.lock:
                        fake.active -= 1

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(OpenAIEngine, "backoff_base", 0.01)
    made: list[Fake] = []

    def make(*a: Any, **k: Any) -> Fake:
        f = Fake(*a, **k)
        made.append(f)
        return f

    yield make
    for f in made:
        f.close()


def cfg(urls: list[str], **o: Any) -> EngineCfg:
    return EngineCfg(kind="openai", openai={"base_urls": urls, "concurrency": 4, "timeout": 10, "retries": 2, **o})


def req(i: int, w: int = 300, h: int = 400) -> PageRequest:
    return PageRequest("doc", i, Image.new("RGB", (w, h), "white"))


def test_pages_spread_over_servers_with_model_card_message_shape(fakes) -> None:  # type: ignore[no-untyped-def]
    a, b = fakes("A", delay=0.05), fakes("B", delay=0.05)
    eng = OpenAIEngine(cfg([a.url, b.url.removesuffix("/v1")]))
    eng.start()
    try:
        res = eng.recognize([req(i, 300 + i) for i in range(12)], timeout=30)
    finally:
        eng.close()
    assert [r.index for r in res] == list(range(12))
    assert all(r.text.endswith(f"{300 + i}x400") for i, r in enumerate(res))
    assert eng.name == "openai:lightonai/LightOnOCR-2-1B" and eng.output_is_markdown
    assert len(a.bodies) >= 3 and len(b.bodies) >= 3  # both servers used
    body = a.bodies[0]
    assert body["model"] == "lightonai/LightOnOCR-2-1B"
    (msg,) = body["messages"]
    assert msg["role"] == "user" and len(msg["content"]) == 1  # the image alone, no text
    assert msg["content"][0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.2, 0.9, 4096)
    assert max(a.peak, b.peak) <= 4  # concurrency limit


def test_retries_with_backoff_move_to_the_healthy_server(fakes) -> None:  # type: ignore[no-untyped-def]
    bad = fakes("BAD", script=lambda n, body: (503, None))
    good = fakes("GOOD")
    eng = OpenAIEngine(cfg([bad.url, good.url]))
    eng.start()
    try:
        res = eng.recognize([req(i) for i in range(6)], timeout=30)
    finally:
        eng.close()
    assert all(r.text.startswith("GOOD") for r in res)
    assert len(good.bodies) == 6


def test_flaky_server_recovers_within_retries(fakes) -> None:  # type: ignore[no-untyped-def]
    flaky = fakes("F", script=lambda n, body: (429, None) if n <= 2 else (200, None))
    eng = OpenAIEngine(cfg([flaky.url], retries=3))
    eng.start()
    try:
        assert eng.submit(req(0)).result(timeout=30).text.startswith("F ")
    finally:
        eng.close()
    assert len(flaky.bodies) == 3


def test_all_servers_failing_is_transient_and_refusal_is_input_error(fakes) -> None:  # type: ignore[no-untyped-def]
    down = fakes("D", script=lambda n, body: (500, None))
    refuse = fakes("R", script=lambda n, body: (400, None))
    eng = OpenAIEngine(cfg([down.url], retries=1))
    eng.start()
    with pytest.raises(TransientError):
        eng.submit(req(0)).result(timeout=30)
    eng.close()
    assert len(down.bodies) == 2
    eng2 = OpenAIEngine(cfg([refuse.url]))
    eng2.start()
    with pytest.raises(InputError):
        eng2.submit(req(0)).result(timeout=30)
    eng2.close()
    assert len(refuse.bodies) == 1  # a refused page is not retried


def test_repetition_guard_applies(fakes) -> None:  # type: ignore[no-untyped-def]
    """A looping answer cut off at max_tokens is retried hotter, in the page's worker thread."""
    loop = "start\n" + "\n".join(["same row"] * 200)

    def script(n: int, body: dict[str, Any]) -> tuple[int, str, str]:
        return (200, loop, "length") if body["temperature"] == 0.2 else (200, "clean", "stop")

    s = fakes("S", script=script)
    eng = OpenAIEngine(cfg([s.url]))
    eng.start()
    try:
        r = eng.submit(req(0)).result(timeout=30)
    finally:
        eng.close()
    assert r.text == "clean" and r.meta["attempts"] == 2 and r.flags == []
    assert [b["temperature"] for b in s.bodies] == [0.2, 0.5]
    assert "ignore_eos" not in s.bodies[0]


def test_page_guards_retries_come_from_engine_page_guards(fakes) -> None:  # type: ignore[no-untyped-def]
    loop = "start\n" + "\n".join(["same row"] * 200)
    s = fakes("S", script=lambda n, body: (200, loop, "length"))
    eng = OpenAIEngine(EngineCfg(kind="openai", openai={"base_urls": [s.url]}, page_guards={"repetition_retries": 1}))
    eng.start()
    try:
        r = eng.submit(req(0)).result(timeout=30)
    finally:
        eng.close()
    assert r.flags == ["repetition"] and len(s.bodies) == 2 and r.text.count("same row") == 1


def test_debug_forces_output_length_without_guards(fakes) -> None:  # type: ignore[no-untyped-def]
    """engine.debug (benchmarks): ignore_eos in every body, max_tokens from sampling, one request
    per page even when it stops at max_tokens."""
    s = fakes("S", script=lambda n, body: (200, "x " * 50, "length"))
    eng = OpenAIEngine(EngineCfg(kind="openai", openai={"base_urls": [s.url]}, sampling={"max_tokens": 100},
                                 debug={"ignore_eos": True, "page_guards": False}))
    eng.start()
    try:
        r = eng.submit(req(0, h=1000)).result(timeout=30)
    finally:
        eng.close()
    assert r.flags == [] and r.meta["attempts"] == 1 and len(s.bodies) == 1
    assert s.bodies[0]["ignore_eos"] is True and s.bodies[0]["max_tokens"] == 100


def test_no_reachable_server_is_fatal() -> None:
    eng = OpenAIEngine(cfg(["http://127.0.0.1:9/v1"]))
    with pytest.raises(FatalError):
        eng.start()
    with pytest.raises(FatalError):
        OpenAIEngine(EngineCfg(kind="openai"))
