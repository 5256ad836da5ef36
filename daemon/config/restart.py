"""Which keys a reload (SIGHUP) cannot apply: the one list the reference (docs/configuration.md,
the JSON Schema) marks and the running service's reload reports.

Contract:
- ``RESTART_KEYS``: dotted key paths (a section stands for every key under it) read only when the
  daemon starts: the state folder and journal, the HTTP endpoint, the engine, the worker threads
  and processes, the log level.
- ``needs_restart(path)``: ``path`` is one of them or under one.
- ``restart_changes(old, new)``: the dotted keys under ``RESTART_KEYS`` whose values differ, in
  file order; what a reload logs as not applied.
"""

from __future__ import annotations

from typing import Any

from daemon.config.schema import Config

RESTART_KEYS = (
    "daemon.state_dir", "daemon.journal_url", "daemon.journal_lease", "daemon.workers", "daemon.render_workers",
    "daemon.render_nice", "daemon.log_level", "daemon.http", "engine",
)


def needs_restart(path: str) -> bool:
    return any(path == k or path.startswith(k + ".") for k in RESTART_KEYS)


def restart_changes(old: Config, new: Config) -> list[str]:
    a, b = _flat(old.model_dump(mode="json")), _flat(new.model_dump(mode="json"))
    return [k for k in dict.fromkeys([*a, *b]) if needs_restart(k) and a.get(k) != b.get(k)]


def _flat(data: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted key -> value; lists and ``None`` sections are values (a section set to null and back counts)."""
    if not isinstance(data, dict):
        return {prefix: data}
    out: dict[str, Any] = {}
    for k, v in data.items():
        out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
    return out or {prefix: {}}
