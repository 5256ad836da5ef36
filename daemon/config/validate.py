"""Validating ``rules.yaml``: every error at once, then the warnings.

Contract:
- ``validate(loaded)`` normalises the loaded data (:mod:`daemon.config.normalise`), checks it
  against the models (:mod:`daemon.config.schema`) and across sections, and returns a
  ``Config`` or raises ``ConfigError`` listing *every* problem, each as
  ``FILE:LINE key.path: message`` (borgmatic style). The checks across sections (unique inbox
  and route names, no ``other`` doctype, a route's ``doctype``/``inbox`` must exist) read the
  raw data, so they are reported together with the model's errors, never only once those are
  fixed.
- ``config_warnings(cfg)``: problems that do not stop the daemon (outputs or state inside a
  watched inbox, no catch-all route, routes matching on ``doctype`` with no doctype defined).
- ``filesystem_problems(cfg)``: folders a source is moved to that are on another filesystem
  than its inbox (errors for ``check-config`` and the service; they need the disk, so they are
  not part of ``validate``).
- A ``daemon.http.listen`` that reaches the network is an error of ``validate`` unless
  ``daemon.http.allow_remote`` is true and ``daemon.http.token_file`` is set (each missing key
  named). ``http_problems(cfg)`` checks the token file on disk (errors for ``check-config``; the
  endpoint itself refuses to serve without a readable token and the daemon goes on processing);
  ``http_notes(cfg)`` says who can reach the endpoint when it is remote.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from daemon.config.http_schema import is_loopback_listen
from daemon.config.load import LoadedYaml, line_for
from daemon.config.normalise import normalise
from daemon.config.reference import _nested
from daemon.config.schema import Config, InboxCfg, template_root
from daemon.errors import ConfigError
from daemon.fsio import is_within, same_filesystem

#: The built-in fallback doctype: a document no doctype claims.
FALLBACK_DOCTYPE = "other"


def validate(loaded: LoadedYaml) -> Config:
    """A valid ``Config`` from ``loaded``, or ``ConfigError`` with every problem found."""
    data = normalise(loaded.data)
    problems: list[str] = []
    cfg: Config | None = None
    try:
        cfg = Config.model_validate(data)
    except ValidationError as e:
        problems.extend(_model_problems(e, loaded))
    problems.extend(p.format(loaded) for p in _cross_section_problems(data, loaded))
    if problems or cfg is None:
        raise ConfigError(by_line(problems))
    return cfg


def by_line(problems: list[str]) -> list[str]:
    """``FILE:LINE ...`` messages in the order of their lines (stable; those without a line last)."""
    def line(p: str) -> int:
        m = re.match(r"[^\n]*?:(\d+) ", p)
        return int(m.group(1)) if m else 10**9

    return sorted(problems, key=line)


# ----------------------------------------------------------------------------- model errors


def _model_problems(e: ValidationError, loaded: LoadedYaml) -> list[str]:
    out = []
    for err in e.errors():
        loc = _clean_loc(tuple(err["loc"]))
        out.append(f"{loaded.filename}:{line_for(loc, loaded.lines)} {_fmt_loc(loc)}: {_message(err)}")
    return out


def _fmt_loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _clean_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    # pydantic puts validator/union branch names into loc ("literal['a']", "function-after[...]").
    return tuple(p for p in loc if isinstance(p, int) or not any(c in str(p) for c in "[]('"))


def _message(err: Any) -> str:
    msg = str(err["msg"])
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if err["type"] == "extra_forbidden":
        near = difflib.get_close_matches(str(err["loc"][-1]), _known_keys(tuple(err["loc"][:-1])), n=1, cutoff=0.6)
        msg = f"unknown key; did you mean {near[0]!r}?" if near else "unknown key (typo?)"
    if err["type"] == "literal_error" or err["type"] == "enum":
        return f"{err.get('input')!r} {msg[0].lower()}{msg[1:]}"
    return msg


def _known_keys(loc: tuple[Any, ...]) -> list[str]:
    """The keys of the section at ``loc`` (for "did you mean"); [] when it cannot be told."""

    model: Any = Config
    parts = [p for p in loc if not isinstance(p, int)]
    i = 0
    while i < len(parts):
        field = model.model_fields.get(str(parts[i]))
        nested = _nested(field.annotation) if field is not None else None
        if nested is None:
            return []
        model, how = nested
        i += 2 if how == ".NAME" else 1  # a map's NAME is not a key of the model
    return [n for n, f in model.model_fields.items() if not f.exclude]


# ----------------------------------------------------------------------------- across sections
# These read the raw (normalised) data, defensively: a value of the wrong shape is the model's
# error to report, so it is skipped here rather than reported twice.

@dataclass(frozen=True)
class _Problem:
    """One cross-section problem: where (key path; ``line`` when more exact than the key's) and what."""

    loc: tuple[Any, ...]
    message: str
    line: int | None = None

    def format(self, loaded: LoadedYaml) -> str:
        line = line_for(self.loc, loaded.lines) if self.line is None else self.line
        return f"{loaded.filename}:{line} {_fmt_loc(self.loc)}: {self.message}"


def _cross_section_problems(data: dict[str, Any], loaded: LoadedYaml) -> Iterator[_Problem]:
    inbox_names = _raw_inbox_names(data.get("inboxes"))
    raw_routes = data.get("routes")
    routes = [r if isinstance(r, dict) else {} for r in raw_routes] if isinstance(raw_routes, list) else []
    doctypes = data.get("doctypes")
    if inbox_names is not None:
        yield from _repeated("inboxes", inbox_names, "inbox names must be unique; repeated: {} (set name: on each)")
    yield from _repeated("routes", [r.get("name") for r in routes], "route names must be unique; repeated: {}")
    if isinstance(doctypes, dict) and FALLBACK_DOCTYPE in doctypes:
        yield _Problem(("doctypes", FALLBACK_DOCTYPE), "doctype 'other' is the built-in fallback and cannot be defined")
    known = {
        "doctype": {str(k) for k in doctypes} | {FALLBACK_DOCTYPE} if isinstance(doctypes, dict) else None,
        "inbox": None if inbox_names is None else set(inbox_names),
    }
    for i, r in enumerate(routes):
        yield from _route_references(i, r.get("match"), known, loaded)
    yield from _remote_listen(data.get("daemon"))


def _remote_listen(daemon: Any) -> Iterator[_Problem]:
    """A listen address on the network needs ``allow_remote: true`` and a ``token_file``: the
    endpoint shows file names, OCR text and (with uploads) writes into inboxes."""
    http = daemon.get("http") if isinstance(daemon, dict) else None
    if not isinstance(http, dict):
        return
    listen = http.get("listen")
    if not isinstance(listen, str) or is_loopback_listen(listen):
        return
    loc = ("daemon", "http")
    if http.get("allow_remote") is not True:
        yield _Problem((*loc, "listen"), f"{listen!r} is reachable from the network: set daemon.http.allow_remote: true "
                       "and daemon.http.token_file to serve it (or listen on 127.0.0.1 or a Unix socket)")
    if not http.get("token_file"):
        yield _Problem((*loc, "token_file"), f"listen {listen!r} is reachable from the network: a bearer token file is "
                       "required (daemon.http.token_file; e.g. `openssl rand -hex 32 > token`)")


def _route_references(
    i: int, match: Any, known: dict[str, set[str] | None], loaded: LoadedYaml
) -> Iterator[_Problem]:
    """Route ``i``'s ``match.doctype`` and ``match.inbox`` name things that exist (``known[key]``;
    None: that section is malformed, its own errors say so)."""
    if not isinstance(match, dict):
        return
    for key, valid in known.items():
        values = match.get(key)
        if valid is None or values is None:
            continue
        for j, v in enumerate([values] if isinstance(values, str) else values if isinstance(values, list) else []):
            if isinstance(v, str) and v not in valid:
                loc = ("routes", i, "match", key)
                yield _Problem(loc, f"{v!r} is not one of {sorted(valid)}", loaded.lines.get((*loc, j)))


def _raw_inbox_names(inboxes: Any) -> list[str] | None:
    """Each inbox's name as ``InboxCfg`` will set it (default: the folder's name); None when an
    entry has no usable name or path, so no reference to it is flagged by mistake."""
    if not isinstance(inboxes, list):
        return None
    names = []
    for ib in inboxes:
        if not isinstance(ib, dict):
            return None
        name, path = ib.get("name"), ib.get("path")
        if isinstance(name, str) and name:
            names.append(name)
        elif isinstance(path, str):
            names.append(Path(path).name or "inbox")
        else:
            return None
    return names


def _repeated(section: str, names: list[Any], message: str) -> Iterator[_Problem]:
    """One problem, at the first repeat, naming every name given more than once."""
    seen: set[str] = set()
    repeats: list[tuple[int, str]] = []
    for i, n in enumerate(names):
        if n is None:
            continue
        if str(n) in seen:
            repeats.append((i, str(n)))
        seen.add(str(n))
    if repeats:
        yield _Problem((section, repeats[0][0]), message.format(sorted({n for _, n in repeats})))


# ----------------------------------------------------------------------------- warnings


def config_warnings(cfg: Config) -> list[str]:
    """Problems that do not stop the daemon but that the user should know about."""
    warns: list[str] = []
    src = str(cfg.source_path or "rules.yaml")

    inbox_roots = [(ib, ib.path.resolve()) for ib in cfg.inboxes]

    def inside(folder: Path) -> InboxCfg | None:
        f = folder.resolve()
        for ib, root in inbox_roots:
            if is_within(f, root) if ib.recursive else f == root:
                return ib
        return None

    for i, r in enumerate(cfg.routes):
        for key, tmpl in (("destination", r.destination), ("archive_to", r.archive_to)):
            if not tmpl or tmpl == "beside":
                continue
            ib = inside(template_root(tmpl))
            if ib is not None:
                warns.append(
                    f"{src}: routes[{i}].{key}: {tmpl!r} is inside watched inbox {ib.name!r}; "
                    "outputs/archived files there are skipped by the daemon, but keep them out of inboxes"
                )
    for key, folder in (("daemon.failed_dir", cfg.daemon.failed_dir), ("daemon.state_dir", cfg.daemon.state_dir)):
        ib = inside(folder)
        if ib is not None:
            warns.append(f"{src}: {key}: {folder} is inside watched inbox {ib.name!r}")
    if not cfg.doctypes:
        users = [f"routes[{i}]" for i, r in enumerate(cfg.routes) if r.match.doctype]
        if users:
            warns.append(
                f"{src}: doctypes: none is defined, but {', '.join(users)} match on doctype; every document is "
                f"'{FALLBACK_DOCTYPE}' (leave the doctypes: section out to get the shipped ones)"
            )
    if not cfg.routes or not cfg.routes[-1].match.is_catch_all():
        warns.append(f"{src}: routes: no catch-all route at the end; the built-in default (txt, md, json beside the source) applies")
    return warns


def filesystem_problems(cfg: Config) -> list[str]:
    """Folders a source is *moved* to (failed folder, archive_to) must be on the same filesystem
    as the inboxes it comes from: the daemon moves sources by rename only, never by
    copy-then-delete, so a crash can never leave a half copy as the only copy."""

    src = str(cfg.source_path or "rules.yaml")
    problems = []
    for ib in cfg.inboxes:
        if not same_filesystem(ib.path, cfg.daemon.failed_dir):
            problems.append(
                f"{src}: daemon.failed_dir: {cfg.daemon.failed_dir} is on another filesystem than inbox "
                f"{ib.name!r} ({ib.path}); sources are moved by rename only, so put them on one filesystem"
            )
    for i, ib in enumerate(cfg.inboxes):
        if ib.splits() and ib.batch_archive and not same_filesystem(ib.path, template_root(ib.batch_archive)):
            problems.append(
                f"{src}: inboxes[{i}].batch_archive: {template_root(ib.batch_archive)} is on another filesystem than "
                f"the inbox ({ib.path}); split originals are moved by rename only, so put them on one filesystem"
            )
    for i, r in enumerate(cfg.routes):
        if r.source != "archive" or not r.archive_to:
            continue
        for ib in cfg.inboxes:
            if r.match.inbox and ib.name not in r.match.inbox:
                continue
            root = template_root(r.archive_to)
            if not same_filesystem(ib.path, root):
                problems.append(
                    f"{src}: routes[{i}].archive_to: {root} is on another filesystem than inbox {ib.name!r} "
                    f"({ib.path}); sources are moved by rename only, so put them on one filesystem"
                )
    return problems


#: Shortest bearer token accepted (characters): 128 bits as hex; `openssl rand -hex 32` makes 64.
MIN_TOKEN_CHARS = 32


def read_token(path: Path) -> str:
    """The bearer token in ``path`` (surrounding whitespace removed). Raises ``ValueError`` with
    the reason when it cannot serve as one (unreadable, empty, short, more than one line)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read it: {getattr(e, 'strerror', None) or e}") from e
    token = text.strip()
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token) or not token.isprintable():
        raise ValueError(f"it must hold one token of at least {MIN_TOKEN_CHARS} printable characters, no spaces "
                         "(e.g. `openssl rand -hex 32`)")
    return token


def http_problems(cfg: Config) -> list[str]:
    """The token file of ``daemon.http`` as the endpoint will read it (errors for check-config)."""
    http = cfg.daemon.http
    if http is None or http.token_file is None:
        return []
    src = str(cfg.source_path or "rules.yaml")
    try:
        read_token(http.token_file)
    except ValueError as e:
        return [f"{src}: daemon.http.token_file: {http.token_file}: {e}"]
    return []


def http_notes(cfg: Config) -> list[str]:
    """Who can reach the endpoint, when it listens on the network (notes for check-config)."""
    http = cfg.daemon.http
    if http is None or not http.remote():
        return []
    src = str(cfg.source_path or "rules.yaml")
    notes = [
        f"{src}: daemon.http: listens on {http.listen}, reachable from the network: every request except "
        f"/healthz/live and /healthz/ready needs `Authorization: Bearer <the token in {http.token_file}>`; "
        f"Host must be one of {', '.join(http.allowed_hosts())} or an address of this machine's interface",
    ]
    if http.token_file is not None:
        try:
            if http.token_file.stat().st_mode & 0o004:
                notes.append(f"{src}: daemon.http.token_file: {http.token_file} is readable by every user (chmod o-r)")
        except OSError:
            pass  # http_problems reports it
    if http.upload:
        notes.append(f"{src}: daemon.http.upload: uploads are taken from {', '.join(http.upload_clients)} "
                     "(daemon.http.upload_clients), with the token")
    return notes
