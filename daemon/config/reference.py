"""The ``rules.yaml`` reference, generated from the models: the one source of truth is
:mod:`daemon.config.schema` (each key's ``Field(description=..., examples=[...])`` and default,
each section's class docstring).

Contract:
- ``sections()`` walks ``Config`` in field order: every model section with its key path
  (``daemon.http``, ``inboxes[]``, ``doctypes.NAME.regex[]``); ``config_keys()`` lists every key. A page
  range (``PagesRange``) is a value written inline, not a section; the keys of ``engine.debug``
  (benchmark switches) are left out of the reference (the JSON Schema has them).
- ``markdown()`` is docs/configuration.md, ``schema_text()`` docs/rules.schema.json (the JSON
  Schema, pydantic's ``model_json_schema`` plus the defaults of ``default_factory`` fields);
  tests/integration/test_config_reference.py fails when either committed file is stale.
  Regenerate both with ``python -m daemon.config.reference --write docs``.
- Why docs/rules.schema.json: it is generated and checked with the reference it sits beside (one
  command, one staleness test), a plain file an editor reads without running anything, and the
  shipped rules.yaml names it by a path relative to itself (``$schema=docs/rules.schema.json``),
  which resolves in a checkout without a network or a published URL. An installed
  /etc/ocr-daemon/rules.yaml has no docs/ beside it: ``ocr-daemon config schema`` writes the same
  schema wherever it is wanted.
- ``effective_yaml(cfg, in_force)`` is the effective config (defaults and the shipped
  doctypes filled in, paths resolved) as YAML that loads back to the same config; ``ocr-daemon
  config show`` prints it (``in_force``: what the automatic settings come to, from
  ``daemon.commands.config.in_force``) and ``ocr-daemon config schema`` the JSON Schema
  (``daemon.commands.config``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union, get_args, get_origin

import yaml
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import PydanticUndefined, core_schema

from daemon.config.restart import needs_restart
from daemon.config.schema import Config, EngineDebugCfg, PagesRange

#: Models written inline as one value (``{min: 1, max: 2}``), not as a section of their own.
LEAF_MODELS: tuple[type[BaseModel], ...] = (PagesRange,)
#: Sections whose keys the reference leaves out (the section's own row stays).
HIDDEN: tuple[type[BaseModel], ...] = (EngineDebugCfg,)
#: Defaults that a field's default does not show: filled in for the whole file by
#: daemon.config.normalise, or by a model validator.
DEFAULT_TEXT = {"doctypes": "the shipped doctypes", "inboxes[].name": "the folder's name"}

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
#: Put before the meaning of a key a reload does not apply (daemon/config/restart.py).
RESTART_MARK = "**(restart)**"
REGENERATE = "python -m daemon.config.reference --write docs"


@dataclass(frozen=True)
class Section:
    path: str  # "" for the top level
    model: type[BaseModel]


@dataclass(frozen=True)
class Key:
    path: str
    field: FieldInfo
    section: str | None  # the path of the section this key holds, if it holds one


def _nested(annotation: Any) -> tuple[type[BaseModel], str] | None:
    """The model a field holds and how its path continues: ``.`` (one), ``[]`` (a list), ``.NAME`` (a map)."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        found = [n for a in get_args(annotation) if a is not type(None) and (n := _nested(a))]
        return found[0] if found else None
    if origin is list:
        inner = _nested(get_args(annotation)[0])
        return (inner[0], "[]") if inner else None
    if origin is dict:
        inner = _nested(get_args(annotation)[1])
        return (inner[0], ".NAME") if inner else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel) and annotation not in LEAF_MODELS:
        return annotation, ""
    return None


def _fields(model: type[BaseModel]) -> Iterator[tuple[str, FieldInfo]]:
    for name, field in model.model_fields.items():
        if not field.exclude:  # Config.source_path: set by load_config, not part of the YAML
            yield name, field


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def sections(model: type[BaseModel] = Config, prefix: str = "") -> list[Section]:
    """Every section under ``model`` (itself first), depth first in field order."""
    out = [Section(prefix, model)]
    if model in HIDDEN:
        return out
    for name, field in _fields(model):
        nested = _nested(field.annotation)
        if nested:
            out += sections(nested[0], _join(prefix, name) + nested[1])
    return out


def config_keys() -> list[Key]:
    """Every documented key, section by section."""
    out = []
    for sec in sections():
        if sec.model in HIDDEN:
            continue
        for name, field in _fields(sec.model):
            nested = _nested(field.annotation)
            out.append(Key(_join(sec.path, name), field, _join(sec.path, name) + nested[1] if nested else None))
    return out


def models() -> list[type[BaseModel]]:
    """Every model a rules.yaml is made of (hidden and inline ones too): each key of each must be documented."""
    seen: list[type[BaseModel]] = []

    def visit(annotation: Any) -> None:
        for a in (annotation, *get_args(annotation)):
            if isinstance(a, type) and issubclass(a, BaseModel) and a not in seen:
                seen.append(a)
                for _, f in _fields(a):
                    visit(f.annotation)
            elif get_args(a) and a is not annotation:
                visit(a)

    visit(Config)
    return seen


# ----------------------------------------------------------------------------- values as YAML


def yaml_value(value: Any) -> str:
    """``value`` as it is written in rules.yaml (YAML flow style, one line)."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if isinstance(value, Path):
        value = str(value)
    text = yaml.safe_dump(value, default_flow_style=True, width=10**6, allow_unicode=True, sort_keys=False)
    return text.removesuffix("\n").removesuffix("\n...").strip()


def default_text(key: Key) -> str:
    """The key's default as the reference shows it."""
    if key.path in DEFAULT_TEXT:
        return DEFAULT_TEXT[key.path]
    field = key.field
    if field.is_required():
        return "(required)"
    value = field.default_factory() if field.default_factory is not None else field.default  # type: ignore[call-arg]
    if value is PydanticUndefined:
        return "(required)"
    if isinstance(value, BaseModel):
        return "(section)"
    return f"`{yaml_value(value)}`"


# ----------------------------------------------------------------------------- docs/configuration.md

INTRO = """\
One YAML file configures the daemon: `--config PATH`, default `$OCR_DAEMON_CONFIG` or
`/etc/ocr-daemon/rules.yaml`. The shipped, commented [rules.yaml](../rules.yaml) is the starting
point. Unknown keys are errors (a typo is caught, not ignored); relative paths are relative to the
file's folder.

- `ocr-daemon check-config` lists every problem at once as `FILE:LINE key.path: message`, plus
  warnings (outputs inside watched inboxes, no catch-all route).
- `ocr-daemon config show` prints the effective configuration: every default filled in, the
  shipped doctypes where the file has no `doctypes:`, relative paths resolved.
- `ocr-daemon config schema` prints the JSON Schema of the file, also committed as
  [rules.schema.json](rules.schema.json). The shipped rules.yaml names it on its first line
  (`# yaml-language-server: $schema=docs/rules.schema.json`), so an editor that uses
  yaml-language-server (VS Code's YAML extension, Neovim, Helix) completes keys, shows these
  descriptions and marks wrong values while you type. For the installed
  `/etc/ocr-daemon/rules.yaml` put the schema beside it
  (`ocr-daemon config schema | sudo tee /etc/ocr-daemon/rules.schema.json >/dev/null`) and change that line
  to `$schema=rules.schema.json`, or map the file to the schema in the editor's settings.
- A running daemon reads the file again on `systemctl reload ocr-daemon` (SIGHUP); an invalid
  file is logged and the running rules stay. Keys marked **(restart)** are read only at start
  (the state folder and journal, the HTTP endpoint, the engine, the workers, the log level): a
  reload logs which of them changed and were not applied (`systemctl restart ocr-daemon` applies
  them).

Sections: `daemon`, `engine`, `inboxes` (required, a list), `doctypes`, `routes`. In the tables,
*example* is a value one could write (not a recommendation), in YAML as it goes into the file.
"""

OUTRO = """\
## Notes

Shorthands: `match` values may be one value or a list. Templates are filled with sanitised
values (no `/`, no `..`, no leading `-` or `.`), so a file name cannot steer outputs elsewhere.
The shipped doctypes are `invoice`, `receipt`, `contract`, `bank_statement`, `scientific_paper`
and `letter`, each with keywords in all 11 languages (zh en ja fr de es it nl pt sv da); a
document that reaches no threshold is `other`. A file without a `doctypes:` section gets these
shipped doctypes (packaged as `daemon/config/doctypes.yaml`, the same section as rules.yaml);
`doctypes: {}` defines none, and `check-config` warns when a route then matches on `doctype`.
When the last route is not a catch-all, a built-in route writes `txt`, `md`, `json` beside the
source and keeps it.
`ocr-daemon route --explain FILE` shows the detected language, every doctype's score and the
matchers that fired, and for each route whether it matched or the first condition that failed.
"""


def _anchor(path: str) -> str:
    """GitHub's anchor of a ``## `path` `` heading: lower case, punctuation dropped."""
    return re.sub(r"[^a-z0-9_ -]", "", path.lower()).replace(" ", "-") or "top-level"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _doc(model: type[BaseModel]) -> str:
    return " ".join((model.__doc__ or "").split())


def markdown() -> str:
    """docs/configuration.md."""
    out = [
        "# Configuration reference: rules.yaml",
        "",
        "<!-- GENERATED from daemon/config/schema.py by `python -m daemon.config.reference --write docs`:",
        "     do not edit by hand; tests/integration/test_config_reference.py fails when it is stale. -->",
        "",
        INTRO,
    ]
    secs = [s for s in sections() if s.path]
    out += [", ".join(f"[`{s.path}`](#{_anchor(s.path)})" for s in secs), ""]
    for sec in sections():
        title = f"`{sec.path}`" if sec.path else "Top level"
        out += [f"## {title}", "", _doc(sec.model), ""]
        if sec.model in HIDDEN:
            out += ["Its keys are not listed here (see the JSON Schema or daemon/config/engine_schema.py).", ""]
            continue
        out += ["| key | default | example | meaning |", "|---|---|---|---|"]
        for name, field in _fields(sec.model):
            key = Key(_join(sec.path, name), field, None)
            nested = _nested(field.annotation)
            label = f"[`{key.path}`](#{_anchor(key.path + nested[1])})" if nested else f"`{key.path}`"
            example = "; ".join(f"`{_cell(yaml_value(e))}`" for e in field.examples or [])
            meaning = (RESTART_MARK + " " if needs_restart(key.path) else "") + (field.description or "")
            out.append(f"| {label} | {_cell(default_text(key))} | {example} | {_cell(meaning)} |")
        out.append("")
    out.append(OUTRO)
    return "\n".join(out)


# ----------------------------------------------------------------------------- the JSON Schema


class _SchemaWithFactoryDefaults(GenerateJsonSchema):
    """pydantic leaves out the defaults of ``default_factory`` fields; editors show defaults, so
    they are put in (a section's default is its keys' defaults, shown on those keys instead)."""

    # default_schema, not get_default_value: the latter is not called by older pydantic 2 releases
    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        factory = schema.get("default_factory")
        if "default" not in schema and factory is not None and not schema.get("default_factory_takes_data"):
            value = factory()  # type: ignore[call-arg]
            if not isinstance(value, BaseModel):
                schema = core_schema.WithDefaultSchema(**{**schema, "default": value})
                schema.pop("default_factory", None)
        return super().default_schema(schema)


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of rules.yaml."""
    schema = Config.model_json_schema(schema_generator=_SchemaWithFactoryDefaults)
    schema["title"] = "ocr-daemon rules.yaml"
    schema["properties"]["doctypes"].pop("default")  # the factory's {} is not what an absent key gets
    for sec in sections():  # the keys a reload does not apply (daemon/config/restart.py), as in the table
        props = schema["properties"] if sec.model is Config else schema.get("$defs", {}).get(sec.model.__name__, {}).get("properties", {})
        for name, prop in props.items():
            if needs_restart(_join(sec.path, name)) and isinstance(prop, dict):
                prop["description"] = f"(restart: a reload does not apply it) {prop.get('description', '')}".strip()
    return {"$schema": SCHEMA_DIALECT, **schema}


def schema_text() -> str:
    """docs/rules.schema.json."""
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


# ----------------------------------------------------------------------------- config show


def effective_yaml(cfg: Config, in_force: dict[str, str] | None = None) -> str:
    """``cfg`` with every default filled in, as rules.yaml text that loads back to ``cfg``.
    ``in_force``: dotted key -> the value an automatic setting (``0``, ``auto``) has on this
    machine, added as a comment on that key's line (the value itself stays, so the text still
    loads back to ``cfg`` and means "auto" wherever it is used)."""
    data = cfg.model_dump(mode="json")
    head = f"# effective configuration of {cfg.source_path} (ocr-daemon config show): every default filled in\n"
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=110)
    return head + (_annotate(text, in_force) if in_force else text)


def _annotate(text: str, notes: dict[str, str]) -> str:
    """Append ``# in force: VALUE`` to the lines of the dotted keys of ``notes`` (mapping keys
    only: the keys annotated live in nested mappings, never in lists)."""
    out: list[str] = []
    path: list[tuple[int, str]] = []  # (indent, key) of the mapping keys above the current line
    for line in text.splitlines():
        m = re.match(r"( *)([A-Za-z_][A-Za-z0-9_]*):( |$)", line)
        if m:
            indent = len(m.group(1))
            while path and path[-1][0] >= indent:
                path.pop()
            path.append((indent, m.group(2)))
            dotted = ".".join(k for _, k in path)
            if dotted in notes:
                line += f"  # in force: {notes[dotted]}"
        out.append(line)
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- the generator


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m daemon.config.reference",
        description="Print docs/configuration.md (the rules.yaml reference) generated from daemon/config/schema.py.",
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument("--schema", action="store_true", help="print the JSON Schema (docs/rules.schema.json) instead")
    g.add_argument("--write", type=Path, metavar="DIR", help="write DIR/configuration.md and DIR/rules.schema.json")
    args = p.parse_args(argv)
    if args.write:
        args.write.mkdir(parents=True, exist_ok=True)
        (args.write / "configuration.md").write_text(markdown(), encoding="utf-8")
        (args.write / "rules.schema.json").write_text(schema_text(), encoding="utf-8")
        print(f"wrote {args.write / 'configuration.md'} and {args.write / 'rules.schema.json'}")
    else:
        sys.stdout.write(schema_text() if args.schema else markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
