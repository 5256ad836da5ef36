"""The checks every request to the HTTP endpoint passes first: its Host, then its bearer token.

Contract:
- ``Guard(app, hosts=..., token=...)`` is ASGI middleware; it answers a request itself when
  - the Host header is missing, repeated or malformed (``[``, a space, a bad port): 400;
  - the Host names no allowed host: 421 Misdirected Request. Allowed: a name of ``hosts``
    (``daemon.http.hosts`` or its default), a ``*.domain`` entry's subdomains, and an IP literal
    equal to the address the connection came in on (no DNS rebinding can produce one: a page
    of another site always sends its own name);
  - ``token`` is set and the path is not ``/healthz/live`` or ``/healthz/ready`` (monitors probe
    those without credentials, and they tell nothing about documents) and the request has no
    ``Authorization: Bearer <token>``: 401 with a ``WWW-Authenticate`` challenge. ``Basic`` with the
    token as the password (any user name) is taken too, so a browser can open the pages.
  Everything else goes on to ``app``.
- ``parse_host(value)`` is the host name (lower case, no port, no brackets, no trailing dot) of a
  Host header, or None when it is malformed. Pure.
- Host and token are compared with ``secrets.compare_digest``; nothing is logged with a token.

Starlette's ``TrustedHostMiddleware`` does the host part for most sites, but it splits the
header at the first ``:`` (an IPv6 literal ``[::1]:9750`` becomes ``[``), answers 400 for a
well-formed foreign name and knows nothing of the local-address rule, hence this module.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
import secrets
from collections.abc import Iterable
from typing import Any

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

#: Paths served without the bearer token (liveness/readiness probes).
OPEN_PATHS = frozenset({"/healthz/live", "/healthz/ready"})

# RFC 3986 reg-name as DNS uses it (letters, digits, '-', '_', dots) and an optional port; an
# IP-literal in brackets. Anything else in a Host header is malformed here.
_NAME = re.compile(r"([a-z0-9_.-]+)(?::(\d{1,5}))?", re.IGNORECASE)
_LITERAL = re.compile(r"\[([0-9a-f:.]+)\](?::(\d{1,5}))?", re.IGNORECASE)


def parse_host(value: str) -> str | None:
    """The host of a Host header value (see the module contract); None when malformed."""
    m = _LITERAL.fullmatch(value) or _NAME.fullmatch(value)
    if m is None or (m.group(2) is not None and int(m.group(2)) > 65535):
        return None
    host = m.group(1).lower()
    if value.startswith("["):
        try:
            return str(ipaddress.IPv6Address(host))
        except ValueError:
            return None
    host = host.rstrip(".")
    if not host or ".." in host:
        return None
    return host


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        ip = ipaddress.ip_address(text.split("%")[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped  # a dual-stack socket reports IPv4 clients as ::ffff:a.b.c.d
    return ip


class Guard:
    """See the module docstring."""

    def __init__(self, app: ASGIApp, *, hosts: Iterable[str], token: str | None) -> None:
        self.app = app
        self.exact: set[str] = set()
        self.suffixes: list[str] = []
        for h in hosts:
            h = h.lower().rstrip(".")
            if h.startswith("*."):
                self.suffixes.append(h[1:])  # ".example.org"
            else:
                ip = _ip(h)
                self.exact.add(str(ip) if ip is not None else h)
        self.token = token.encode("utf-8") if token else None

    def host_allowed(self, host: str, local: Any) -> bool:
        """``host`` (from ``parse_host``) is one of ours; ``local``: the scope's ``server``."""
        ip = _ip(host)
        if ip is not None:
            here = _ip(str(local[0])) if isinstance(local, (tuple, list)) and local else None
            return str(ip) in self.exact or (here is not None and ip == here and not here.is_unspecified)
        return host in self.exact or any(host.endswith(s) for s in self.suffixes)

    def authorized(self, header: str | None) -> bool:
        if self.token is None:
            return True
        if not header:
            return False
        scheme, _, cred = header.strip().partition(" ")
        scheme, cred = scheme.lower(), cred.strip()
        given = b""
        if scheme == "bearer":
            given = cred.encode("utf-8", "replace")
        elif scheme == "basic":
            try:
                given = base64.b64decode(cred, validate=True).partition(b":")[2]
            except (binascii.Error, ValueError):
                return False
        return secrets.compare_digest(given, self.token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        hosts = [v.decode("latin-1") for k, v in scope["headers"] if k == b"host"]
        auth = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"authorization"), None)
        refusal = self.refusal(hosts, auth, scope["path"], scope.get("server"))
        if refusal is None:
            await self.app(scope, receive, send)
            return
        code, text, headers = refusal
        # the connection is closed after a refusal: nothing more of this client's is read
        await PlainTextResponse(text, code, headers={**headers, "Connection": "close", "Cache-Control": "no-store"})(
            scope, receive, send
        )

    def refusal(self, hosts: list[str], auth: str | None, path: str, local: Any) -> tuple[int, str, dict[str, str]] | None:
        """(status, text, headers) of the answer that refuses this request; None: let it through."""
        if len(hosts) != 1:
            return 400, "bad request: exactly one Host header is required\n", {}
        host = parse_host(hosts[0].strip())
        if host is None:
            return 400, "bad request: malformed Host header\n", {}
        if not self.host_allowed(host, local):
            return (421, "misdirected request: this endpoint does not serve that Host name "
                    "(daemon.http.hosts lists the names it answers to)\n", {})
        if path not in OPEN_PATHS and not self.authorized(auth):
            return (401, "unauthorized: send Authorization: Bearer <the token of daemon.http.token_file>\n",
                    {"WWW-Authenticate": 'Bearer realm="ocr-daemon", Basic realm="ocr-daemon", charset="UTF-8"'})
        return None
