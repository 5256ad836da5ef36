"""Reading ``rules.yaml``: the file's text, its YAML data and the line of every key.

Contract:
- ``read_config_file(path)`` returns the file's text or raises ``ConfigError`` (missing, not
  UTF-8, unreadable, larger than ``MAX_CONFIG_BYTES``).
- ``parse_yaml(text, filename)`` returns a :class:`LoadedYaml`: the data (a mapping) and
  ``lines``, ``{key path: line}`` for every key and list item, so a later step can report
  ``FILE:LINE key.path: message``. It raises ``ConfigError`` (one problem) for a YAML syntax
  error, Python tags, an empty file, a top level that is not a mapping, or aliases that expand
  beyond ``MAX_EXPANDED_NODES`` nodes (an alias bomb).
- YAML is read with ``yaml.safe_load`` semantics only (no Python tags).
- Nothing here knows the schema: validation is :mod:`daemon.config.validate`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from daemon.errors import ConfigError

MAX_CONFIG_BYTES = 1 << 20  # 1 MiB: a rules file is a few KiB; more is a mistake or an attack
MAX_EXPANDED_NODES = 200_000  # alias-bomb guard: nodes after expanding every alias

#: ``{key path: line}``; a key path is a tuple of mapping keys and list indexes.
Lines = dict[tuple[Any, ...], int]


@dataclass(frozen=True)
class LoadedYaml:
    """One parsed rules file: its data, the line of every key path and the name to report."""

    data: dict[str, Any]
    lines: Lines
    filename: str


def read_config_file(path: Path) -> str:
    """The text of ``path``; ``ConfigError`` when it cannot or must not be read."""
    try:
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise ConfigError([f"{path}: file is {size} bytes, more than {MAX_CONFIG_BYTES}; refusing to parse it"])
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([f"{path}: no such file"]) from None
    except UnicodeDecodeError as e:
        raise ConfigError([f"{path}: not UTF-8 text ({e.reason} at byte {e.start})"]) from None
    except OSError as e:
        raise ConfigError([f"{path}: cannot read: {e.strerror}"]) from None


def parse_yaml(text: str, filename: str = "rules.yaml") -> LoadedYaml:
    """The YAML data of ``text`` with the line of every key (see the module contract)."""
    if len(text.encode("utf-8", "replace")) > MAX_CONFIG_BYTES:
        raise ConfigError([f"{filename}: file is larger than {MAX_CONFIG_BYTES} bytes; refusing to parse it"])
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as e:
        raise ConfigError([f"{filename}:{_yaml_line(e)} YAML syntax error: {_yaml_problem(e)}"]) from None
    if node is None:
        raise ConfigError([f"{filename}:1 the file is empty; at least 'inboxes:' is required"])
    if _expanded_size(node, {}) > MAX_EXPANDED_NODES:
        raise ConfigError([f"{filename}: YAML aliases expand to more than {MAX_EXPANDED_NODES} nodes; refusing"])
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:  # e.g. !!python/object tags: ConstructorError
        raise ConfigError([f"{filename}:{_yaml_line(e)} {_yaml_problem(e)}"]) from None
    if not isinstance(data, dict):
        raise ConfigError([f"{filename}:1 the top level must be a mapping (daemon:, engine:, inboxes:, ...)"])
    lines: Lines = {}
    _node_lines(node, (), lines)
    return LoadedYaml(data=data, lines=lines, filename=filename)


def line_for(loc: tuple[Any, ...], lines: Lines) -> int:
    """The line of ``loc``, or of its nearest parent that has one (a missing key has no line)."""
    for n in range(len(loc), -1, -1):
        if loc[:n] in lines:
            return lines[loc[:n]]
    return 1


def _node_lines(node: yaml.Node, path: tuple[Any, ...], out: Lines) -> None:
    out.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            key = k.value if isinstance(k, yaml.ScalarNode) else str(k)
            out[(*path, key)] = k.start_mark.line + 1
            _node_lines(v, (*path, key), out)
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            _node_lines(v, (*path, i), out)


def _expanded_size(node: yaml.Node, memo: dict[int, int]) -> int:
    """Number of nodes after alias expansion, computed without expanding (alias-bomb guard)."""
    key = id(node)
    if key in memo:
        return memo[key]
    memo[key] = 1  # cycle guard
    if isinstance(node, yaml.MappingNode):
        n = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
    elif isinstance(node, yaml.SequenceNode):
        n = 1 + sum(_expanded_size(v, memo) for v in node.value)
    else:
        n = 1
    memo[key] = n
    return n


def _yaml_line(e: yaml.YAMLError) -> int:
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    return mark.line + 1 if mark is not None else 1


def _yaml_problem(e: yaml.YAMLError) -> str:
    problem = getattr(e, "problem", None)
    ctx = getattr(e, "context", None)
    msg = " ".join(str(p) for p in (ctx, problem) if p) or str(e)
    cm, pm = getattr(e, "context_mark", None), getattr(e, "problem_mark", None)
    if cm is not None and pm is not None and cm.line != pm.line:
        msg += f" (started at line {cm.line + 1})"
    return msg
