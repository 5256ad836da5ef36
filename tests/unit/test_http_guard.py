"""daemon.http.guard's decisions and daemon.http's new config keys, without a server:
Host parsing (malformed values, ports, IPv6 literals), the allow-list (names, ``*.domain``, the
local-address rule), the bearer/basic token, and the validation of a listen address on the
network (each missing key named). tests/integration/test_http_server.py sends the same over
real HTTP."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from daemon.config import parse_config_text
from daemon.config.validate import http_notes, http_problems, read_token
from daemon.errors import ConfigError
from daemon.http.guard import Guard, parse_host

TOKEN = "t0k3n-" + "x" * 40


@pytest.mark.parametrize(("value", "host"), [
    ("localhost", "localhost"), ("LocalHost:9750", "localhost"), ("127.0.0.1:80", "127.0.0.1"),
    ("[::1]:9750", "::1"), ("[0:0::1]", "::1"), ("ocr.example.org.", "ocr.example.org"),
    ("[", None), ("", None), ("a b", None), ("x:y", None), ("x:99999", None), ("[::1", None),
    ("[zz::1]", None), ("..", None), ("a..b", None), ("evil.example/path", None), ("user@host", None),
])
def test_parse_host(value: str, host: str | None) -> None:
    assert parse_host(value) == host


def test_allow_list_names_wildcards_and_the_local_address() -> None:
    g = Guard(None, hosts=["localhost", "127.0.0.1", "::1", "*.lan", "ocr.example.org"], token=None)  # type: ignore[arg-type]
    local = ("192.168.1.5", 9750)
    assert g.refusal(["ocr.example.org:9750"], None, "/", local) is None
    assert g.refusal(["scanner.lan"], None, "/", local) is None
    assert g.refusal(["192.168.1.5:9750"], None, "/", local) is None  # the interface it came in on
    assert g.refusal(["[::ffff:192.168.1.5]"], None, "/", ("::ffff:192.168.1.5", 9750)) is None
    for foreign in ("evil.example", "lan", "xlan", "192.168.1.6", "ocr.example.org.evil.example"):
        refused = g.refusal([foreign], None, "/", local)
        assert refused is not None and refused[0] == 421, foreign
    assert g.refusal(["0.0.0.0"], None, "/", ("0.0.0.0", 9750))[0] == 421  # type: ignore[index]
    assert g.refusal(["["], None, "/", local)[0] == 400  # type: ignore[index]
    assert g.refusal([], None, "/", local)[0] == 400  # type: ignore[index]
    assert g.refusal(["localhost", "localhost"], None, "/", local)[0] == 400  # type: ignore[index]


def test_token_bearer_or_basic_password_and_open_probes() -> None:
    g = Guard(None, hosts=["localhost"], token=TOKEN)  # type: ignore[arg-type]
    here = ("127.0.0.1", 1)
    basic = "Basic " + base64.b64encode(f"anyone:{TOKEN}".encode()).decode()
    for ok in (f"Bearer {TOKEN}", f"bearer  {TOKEN} ", basic):
        assert g.refusal(["localhost"], ok, "/status", here) is None, ok
    for bad in (None, "", "Bearer", f"Bearer {TOKEN}x", f"Token {TOKEN}", "Basic !!!", TOKEN):
        refused = g.refusal(["localhost"], bad, "/status", here)
        assert refused is not None and refused[0] == 401 and "WWW-Authenticate" in refused[2], bad
    assert g.refusal(["localhost"], None, "/healthz/live", here) is None
    assert g.refusal(["localhost"], None, "/healthz/ready", here) is None
    assert g.refusal(["evil.example"], f"Bearer {TOKEN}", "/healthz/live", here)[0] == 421  # type: ignore[index]


BASE = "inboxes: [{path: in}]\n"


def test_remote_listen_needs_allow_remote_and_token_file_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        parse_config_text("daemon:\n  http:\n    listen: 0.0.0.0:9750\n" + BASE)
    text = "\n".join(e.value.problems)
    assert "daemon.http.listen" in text and "allow_remote" in text and "daemon.http.token_file" in text
    assert "rules.yaml:3 " in text  # the listen line
    with pytest.raises(ConfigError) as e:
        parse_config_text("daemon: {http: {listen: '[::]:9750', allow_remote: true}}\n" + BASE)
    assert [p for p in e.value.problems if "daemon.http.token_file" in p] and len(e.value.problems) == 1
    with pytest.raises(ConfigError) as e:
        parse_config_text("daemon: {http: {listen: 'ocr.lan:9750', token_file: t}}\n" + BASE)
    assert len(e.value.problems) == 1 and "daemon.http.listen" in e.value.problems[0]
    for local in ("127.0.0.1:9750", "127.0.0.9:1", "localhost:9750", "[::1]:9750", "run/http.sock"):
        parse_config_text(f"daemon: {{http: {{listen: '{local}'}}}}\n" + BASE, base_dir=tmp_path)

    (tmp_path / "token").write_text(TOKEN + "\n")
    cfg = parse_config_text("daemon: {http: {listen: '0.0.0.0:9750', allow_remote: true, token_file: token, "
                            "hosts: [ocr.example.org, '*.lan']}}\n" + BASE, base_dir=tmp_path)
    http = cfg.daemon.http
    assert http is not None and http.token_file == tmp_path / "token"  # relative to the rules file
    assert http.allowed_hosts() == ["ocr.example.org", "*.lan"]
    assert http_problems(cfg) == []
    notes = http_notes(cfg)
    assert notes and "reachable from the network" in notes[0] and "Bearer" in notes[0]


def test_default_hosts_and_bad_hosts_named() -> None:
    cfg = parse_config_text("daemon: {http: {listen: '127.0.0.2:9750'}}\n" + BASE).daemon.http
    assert cfg is not None and cfg.allowed_hosts() == ["localhost", "127.0.0.1", "::1", "127.0.0.2"]
    assert http_notes(parse_config_text(BASE)) == []
    with pytest.raises(ConfigError) as e:
        parse_config_text("daemon: {http: {hosts: ['http://x.org', 'a b', 'ok.org:80']}}\n" + BASE)
    text = "\n".join(e.value.problems)
    assert "daemon.http.hosts" in text and "'http://x.org' is not a host name" in text


@pytest.mark.parametrize(("content", "ok"), [(TOKEN, True), (f"  {TOKEN}\n", True), ("short", False),
                                              ("", False), (f"{TOKEN} {TOKEN}", False), (None, False)])
def test_token_file_checked(tmp_path: Path, content: str | None, ok: bool) -> None:
    path = tmp_path / "token"
    if content is not None:
        path.write_text(content)
    if ok:
        assert read_token(path) == TOKEN
    else:
        with pytest.raises(ValueError):
            read_token(path)
    cfg = parse_config_text("daemon: {http: {token_file: token}}\n" + BASE, base_dir=tmp_path)
    problems = http_problems(cfg)
    assert (problems == []) == ok
    if not ok:
        assert "daemon.http.token_file" in problems[0]
