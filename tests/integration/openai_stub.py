"""A stand-alone OpenAI-compatible server for the fleet tests: the subset the ``openai`` engine uses.

Contract: ``python tests/integration/openai_stub.py --name A [--port P] [--delay S] --log FILE``
serves ``GET /v1/models`` (one model, ``lightonai/LightOnOCR-2-1B``) and ``POST
/v1/chat/completions`` (answers ``"<name> <w>x<h>"`` for the page image of the request, after
``delay`` seconds) on 127.0.0.1, one thread per connection. Port 0 (the default) picks a free
one; the first line on stdout is ``PORT <n>``. Every chat request appends ``<name> <w>x<h>`` to
``--log`` when it arrives (flushed), so a test counts the requests each server got, also from a
server it killed with SIGKILL. Standard library + Pillow only.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from PIL import Image


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--log", required=True)
    a = ap.parse_args()
    log = open(a.log, "a", encoding="utf-8")  # noqa: SIM115 - open for the server's life

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
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
                self._send(200, {"object": "list", "data": [{"id": "lightonai/LightOnOCR-2-1B", "object": "model"}]})
            else:
                self._send(404, {"error": "not found"})

        def do_POST(self) -> None:  # noqa: N802
            if self.path != "/v1/chat/completions":
                self._send(404, {"error": "not found"})
                return
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            url = body["messages"][0]["content"][0]["image_url"]["url"]
            w, h = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).size
            log.write(f"{a.name} {w}x{h}\n")
            log.flush()
            time.sleep(a.delay)
            self._send(200, {"object": "chat.completion", "model": body["model"],
                             "choices": [{"index": 0, "message": {"role": "assistant", "content": f"{a.name} {w}x{h}"},
                                          "finish_reason": "stop"}],
                             "usage": {"prompt_tokens": 1, "completion_tokens": 3, "total_tokens": 4}})

    ThreadingHTTPServer.daemon_threads = True
    httpd = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    print(f"PORT {httpd.server_address[1]}", flush=True)
    try:
        httpd.serve_forever()
    finally:
        httpd.server_close()


if __name__ == "__main__":
    sys.exit(main())
