"""The endpoint's responses: every one no-store and nosniff; HTML pages under a strict
Content-Security-Policy (no script at all, forms post only here, no framing).

Contract: ``response(code, body, ctype, headers)`` is the one constructor; ``text``, ``json_page``
and ``html`` are its plain-text (UTF-8), pretty JSON (UTF-8, not ASCII-escaped) and HTML forms.
``client(request)`` is the peer's address ("" when unknown, e.g. some Unix-socket setups).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

_CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; "
        "frame-ancestors 'none'")


def response(code: int, body: str | bytes, ctype: str, headers: dict[str, str] | None = None) -> Response:
    extra = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
    if ctype.startswith("text/html"):
        extra["Content-Security-Policy"] = _CSP  # no script at all; forms post only here; no framing
    return Response(body, code, {**extra, **(headers or {})}, media_type=ctype)


def text(code: int, body: str, headers: dict[str, str] | None = None) -> Response:
    return response(code, body, "text/plain; charset=utf-8", headers)


def json_page(data: Any) -> Response:
    return response(200, json.dumps(data, indent=2, ensure_ascii=False) + "\n", "application/json")


def html(page: str) -> Response:
    return response(200, page, "text/html; charset=utf-8")


def client(request: Request) -> str:
    return request.client.host if request.client else ""
