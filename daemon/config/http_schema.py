"""``daemon.http``: the HTTP endpoint's settings and what its listen address means.

``daemon/config/__init__.py`` re-exports ``HttpCfg`` (``DaemonCfg.http``, in
:mod:`daemon.config.daemon_schema`); the endpoint itself is daemon/service/http.py,
httpserver.py, httpguard.py, upload.py.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import Field, field_validator

from daemon.config.base import Strict

#: Names that always mean this machine: the default of ``daemon.http.hosts`` (with the listen address).
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
_HOSTNAME = re.compile(r"(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?", re.IGNORECASE)


def listen_host(listen: str) -> str | None:
    """The host part of a ``daemon.http.listen`` ``host:port`` (brackets of ``[v6]`` removed);
    None for a Unix socket path."""
    if "/" in listen:
        return None
    host = listen.rpartition(":")[0]
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def is_loopback_listen(listen: str) -> bool:
    """True for a Unix socket or a loopback address (``localhost``, 127.0.0.0/8, ``::1``): only
    this machine can connect. Any other name or address (``0.0.0.0``, ``::``, a LAN address, a
    host name that may resolve to one) reaches the network."""
    import ipaddress

    host = listen_host(listen)
    if host is None or host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class HttpCfg(Strict):
    """The HTTP endpoint: health checks, Prometheus metrics, the status JSON and page, uploads
    (the API, access control and remote access: docs/http.md)."""

    # daemon/http/ (endpoint.py, statuspage.py)
    listen: str = Field(
        "127.0.0.1:9750", examples=["[::1]:9750", "/var/lib/ocr-daemon/http.sock"],
        description="`host:port` (`[::1]:9750`; port 0 = any free port) or a Unix socket path (contains a `/`); "
        "on a taken port the daemon logs an error, keeps processing and retries every 30 s",
    )
    upload: bool = Field(
        False, examples=[True],
        description="the page takes a file and drops it into a chosen inbox (the normal path: stability, journal, routing)",
    )
    hosts: list[str] | None = Field(
        None, examples=[["ocr.example.org", "*.example.org"]],
        description="names (or IP addresses) a request's Host header may give; `*.example.org` also matches its "
        "subdomains; any other Host gets 421 (a web page cannot reach the endpoint by DNS rebinding). "
        "null = localhost, 127.0.0.1, ::1 and the listen address. An IP address of the interface a "
        "request came in on is always accepted",
    )
    allow_remote: bool = Field(
        False, examples=[True], description="listen on an address other than loopback (needs token_file too); off: only this machine connects"
    )
    token_file: Path | None = Field(
        None, examples=["/etc/ocr-daemon/http.token"],
        description="a file holding the bearer token every request except /healthz/live and /healthz/ready must "
        "send (`Authorization: Bearer <token>`); required with allow_remote; relative to the rules file",
    )
    upload_clients: list[str] = Field(
        default_factory=lambda: ["127.0.0.0/8", "::1"], examples=[["127.0.0.0/8", "::1", "192.0.2.0/24"]],
        description="client networks (CIDR) allowed to upload; any client of a Unix socket (its file permissions guard it)",
    )
    upload_max_mb: int = Field(100, ge=1, le=4096, examples=[500], description="largest upload (MiB)")
    upload_concurrency: int = Field(
        2, ge=1, le=64, examples=[4], description="uploads received at once; one more gets 503 with Retry-After"
    )

    @field_validator("listen")
    @classmethod
    def _listen(cls, v: str) -> str:
        if "/" in v:
            return v
        host, sep, port = v.rpartition(":")
        if not sep or not host or not port.isdigit() or int(port) > 65535:
            raise ValueError(f"{v!r} is not host:port (e.g. 127.0.0.1:9750, [::1]:9750) or a socket path")
        return v

    @field_validator("hosts")
    @classmethod
    def _hosts(cls, v: list[str] | None) -> list[str] | None:
        import ipaddress

        if v is None:
            return v
        out = []
        for h in v:
            name = h.strip().lower()
            name = name[1:-1] if name.startswith("[") and name.endswith("]") else name
            try:
                ipaddress.ip_address(name)
            except ValueError:
                if not _HOSTNAME.fullmatch(name):
                    raise ValueError(f"{h!r} is not a host name, an IP address or *.domain (no port, no scheme)") from None
            out.append(name.rstrip("."))
        return out

    @field_validator("upload_clients")
    @classmethod
    def _networks(cls, v: list[str]) -> list[str]:
        import ipaddress

        for net in v:
            try:
                ipaddress.ip_network(net, strict=False)
            except ValueError as e:
                raise ValueError(f"{net!r} is not an IP network ({e})") from e
        return v

    def unix_path(self) -> Path | None:
        """The socket path when ``listen`` names one."""
        return Path(self.listen) if "/" in self.listen else None

    def remote(self) -> bool:
        """True when ``listen`` reaches the network (see ``is_loopback_listen``)."""
        return not is_loopback_listen(self.listen)

    def allowed_hosts(self) -> list[str]:
        """``hosts``, or its default: the loopback names and the listen address (unless that is
        the any-address, which names no host)."""
        if self.hosts is not None:
            return list(self.hosts)
        out = list(LOOPBACK_HOSTS)
        host = (listen_host(self.listen) or "").lower()
        if host and host not in ("0.0.0.0", "::") and host not in out:
            out.append(host)
        return out
