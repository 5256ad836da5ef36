"""One source of truth for the configuration: every key's description, default and examples live
in the models (daemon/config/schema.py, engine_schema.py); docs/configuration.md and the JSON
Schema docs/rules.schema.json are generated from them (daemon.config.reference) and must be
current; the shipped rules.yaml validates against that schema with a standard validator
(``jsonschema``), and the schema agrees with the loader on what is valid; ``ocr-daemon config
schema`` / ``config show`` print the schema and the effective config.

Regenerate the committed files after changing a model:
    .venv/bin/python -m daemon.config.reference --write docs
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from conftest import run_cli
from pydantic import BaseModel, ValidationError

from daemon.config import Config, load_config, parse_config_text, reference

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "rules.yaml"
DOCS = REPO / "docs"
STALE = f"is stale; regenerate it: .venv/bin/{reference.REGENERATE}"


# ----------------------------------------------------------------------------- every key documented


def _keys_of_every_model() -> list[tuple[str, str, Any]]:
    return [(m.__name__, name, f) for m in reference.models() for name, f in m.model_fields.items() if not f.exclude]


def test_every_key_has_a_description_and_an_example() -> None:
    keys = _keys_of_every_model()
    assert len(keys) >= 100  # the walk reaches every model (engine.debug and page ranges too)
    missing = [f"{m}.{n}" for m, n, f in keys if not (f.description or "").strip()]
    assert not missing, f"add Field(description=...) to: {missing}"
    sections = {k.path for k in reference.config_keys() if k.section}
    no_example = [
        k.path for k in reference.config_keys() if k.path not in sections and not k.field.examples
    ] + [f"{m}.{n}" for m, n, f in keys if m in ("EngineDebugCfg", "PagesRange") and not f.examples]
    assert not no_example, f"add Field(examples=[...]) to: {no_example}"
    # an example equal to the default teaches nothing
    same = [k.path for k in reference.config_keys() if k.field.examples and not k.field.is_required()
            and k.field.get_default(call_default_factory=True) in k.field.examples]
    assert not same, same
    for model in reference.models():
        assert (model.__doc__ or "").strip(), f"{model.__name__} needs a docstring (its section's description)"


def test_reference_shows_every_key_with_its_description() -> None:
    md = reference.markdown()
    keys = reference.config_keys()
    assert {"daemon.http.listen", "inboxes[].path", "doctypes.NAME.regex[].pattern", "routes[].match.doctype"} <= {
        k.path for k in keys
    }
    assert not [k for k in keys if k.path.startswith("engine.debug.")]  # benchmark switches stay out
    for k in keys:
        row = next((line for line in md.splitlines() if line.startswith(("| `" + k.path + "`", "| [`" + k.path + "`]"))), None)
        assert row, f"{k.path} has no row"
        assert (k.field.description or "").replace("|", "\\|") in row
    # every section a row links to has its heading, under GitHub's anchor for it
    anchors = {re.sub(r"[^a-z0-9_ -]", "", h.lower()).replace(" ", "-") for h in re.findall(r"^## (.+)$", md, re.M)}
    links = set(re.findall(r"\]\(#([^)]+)\)", md))
    assert links and links <= anchors, links - anchors


# ----------------------------------------------------------------------------- examples are valid values


def _example_data(model: type[BaseModel]) -> dict[str, Any]:
    """A section made of the first example of each of its keys (nested sections recursively)."""
    out: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if field.exclude:
            continue
        nested = reference._nested(field.annotation)
        if nested and nested[0] not in reference.HIDDEN:
            inner = _example_data(nested[0])
            out[name] = {"[]": [inner], ".NAME": {"example": inner}, "": inner}[nested[1]]
        elif field.examples:
            out[name] = field.examples[0]
    return out


def _set(data: dict[str, Any], path: str, value: Any) -> None:
    """``data`` at key path ``path`` (``inboxes[].path``, ``doctypes.NAME.threshold``) = ``value``."""
    node: Any = data
    *parents, last = path.replace("[]", ".[]").split(".")
    for part in parents:
        node = node[0] if part == "[]" else node["example"] if part == "NAME" else node[part]
    node[last] = value


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((DOCS / "rules.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_every_example_is_valid(validator: jsonschema.Draft202012Validator) -> None:
    """A rules.yaml made of every key's first example loads, and so does each other example put in
    its place: by the models and by the JSON Schema alike."""
    full = _example_data(Config)
    Config.model_validate(full)
    assert not list(validator.iter_errors(full))
    tried = 0
    for key in reference.config_keys():
        for example in (key.field.examples or [])[1:] if not key.section else key.field.examples or []:
            data = copy.deepcopy(full)
            _set(data, key.path, example)
            Config.model_validate(data)
            assert not [e.message for e in validator.iter_errors(data)], (key.path, example)
            tried += 1
    assert tried >= 5


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("inboxes: [{path: in}]\n", True),
        ("inboxes: [{path: in}]\nroutes: [{name: r, match: {doctype: invoice, language: de}}]\n", True),  # one value
        ("inboxes: [{path: in}]\nroutes: [{name: r, match: {doctype: [invoice, receipt]}}]\n", True),
        ("inboxes: [{path: in}]\ndaemon: {http: null, workers: 4}\n", True),
        ("inboxes: [{path: in}]\nengine: {vllm: {data_parallel_size: auto, block_size: 64}}\n", True),
        ("inboxes: []\n", False),  # at least one inbox
        ("daemon: {workers: 4}\n", False),  # inboxes required
        ("inboxes: [{path: in}]\ndaemon: {workerz: 4}\n", False),  # a typo
        ("inboxes: [{path: in}]\ndaemon: {workers: many}\n", False),
        ("inboxes: [{path: in}]\ndaemon: {workers: -1}\n", False),
        ("inboxes: [{path: in}]\nengine: {kind: gpu}\n", False),
        ("inboxes: [{path: in}]\nengine: {vllm: {block_size: 48}}\n", False),
        ("inboxes: [{path: in}]\nroutes: [{name: r, formats: [docx]}]\n", False),
        ("inboxes: [{path: in}]\nroutes: [{name: r, match: {language: xx}}]\n", False),
        ("inboxes: [{path: in}]\ndoctypes: {t: {keywords: {xx: {a: 1}}}}\n", False),
    ],
)
def test_schema_agrees_with_the_loader(validator: jsonschema.Draft202012Validator, text: str, valid: bool) -> None:
    data = yaml.safe_load(text)
    try:
        Config.model_validate(data)
        loads = True
    except ValidationError:
        loads = False
    errors = [e.message for e in validator.iter_errors(data)]
    assert (loads, not errors) == (valid, valid), errors


def test_shipped_rules_validate_against_the_schema_they_name(validator: jsonschema.Draft202012Validator) -> None:
    first = SHIPPED.read_text(encoding="utf-8").splitlines()[0]
    m = re.fullmatch(r"# yaml-language-server: \$schema=(\S+)", first)
    assert m, first
    assert (SHIPPED.parent / m.group(1)).resolve() == (DOCS / "rules.schema.json").resolve()
    data = yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))
    errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(data)]
    assert not errors, errors
    broken = copy.deepcopy(data)
    broken["routes"][0]["formats"] = ["txt", "docx"]
    assert [e.message for e in validator.iter_errors(broken)]


# ----------------------------------------------------------------------------- committed files are current


def test_committed_reference_is_current() -> None:
    assert (DOCS / "configuration.md").read_text(encoding="utf-8") == reference.markdown(), f"docs/configuration.md {STALE}"


def test_committed_schema_is_current() -> None:
    assert (DOCS / "rules.schema.json").read_text(encoding="utf-8") == reference.schema_text(), (
        f"docs/rules.schema.json {STALE}"
    )


def test_schema_has_the_defaults_of_factory_fields() -> None:
    props = reference.json_schema()["$defs"]
    assert props["HttpCfg"]["properties"]["upload_clients"]["default"] == ["127.0.0.0/8", "::1"]
    assert props["InboxCfg"]["properties"]["include"]["default"][0] == "*.pdf"
    assert "default" not in props["EngineCfg"]["properties"]["vllm"]  # a section: its keys carry theirs
    assert "default" not in reference.json_schema()["properties"]["doctypes"]  # absent = the shipped six, not {}
    assert "source_path" not in reference.json_schema()["properties"]


def test_generator_writes_both_files(tmp_path: Path) -> None:
    assert reference.main(["--write", str(tmp_path)]) == 0
    assert (tmp_path / "configuration.md").read_text(encoding="utf-8") == reference.markdown()
    assert (tmp_path / "rules.schema.json").read_text(encoding="utf-8") == reference.schema_text()


# ----------------------------------------------------------------------------- ocr-daemon config schema|show


def test_config_schema_command_prints_the_schema() -> None:
    p = run_cli("config", "schema", timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout == (DOCS / "rules.schema.json").read_text(encoding="utf-8")
    assert json.loads(p.stdout)["$schema"] == reference.SCHEMA_DIALECT


def test_config_show_prints_the_effective_config(tmp_path: Path) -> None:
    conf = tmp_path / "etc" / "rules.yaml"
    conf.parent.mkdir()
    conf.write_text(
        "daemon: {state_dir: state, http: null}\n"
        "engine: {kind: tesseract, vllm: {repetition_retries: 1}}\n"  # the key's old place
        "inboxes: [{path: ../inbox}]\n"
        "routes: [{name: invoices, match: {doctype: invoice}, destination: 'out/{doctype}'}]\n",
        encoding="utf-8",
    )
    p = run_cli("config", "show", "--config", str(conf), timeout=120)
    assert p.returncode == 0, p.stderr
    shown = yaml.safe_load(p.stdout)
    assert shown["daemon"]["state_dir"] == str(tmp_path / "etc" / "state")  # resolved against the file's folder
    assert shown["daemon"]["http"] is None and shown["daemon"]["max_attempts"] == 3
    assert shown["engine"]["vllm"]["max_num_seqs"] == 256 and shown["engine"]["page_guards"]["repetition_retries"] == 1
    assert shown["inboxes"][0]["name"] == "inbox" and shown["inboxes"][0]["stability_delay"] == 2.0
    assert list(shown["doctypes"]) == ["invoice", "receipt", "contract", "bank_statement", "scientific_paper", "letter"]
    assert shown["routes"][0]["match"]["doctype"] == ["invoice"] and shown["routes"][0]["formats"] == ["txt", "md", "json"]
    assert "source_path" not in shown
    # automatic settings show what they come to on this machine, as a comment (issue 35)
    assert re.search(r"^  workers: 0  # in force: \d+ \(auto\)$", p.stdout, re.M), p.stdout
    assert re.search(r"^    threads: 0  # in force: \d+ \(auto\)$", p.stdout, re.M), p.stdout
    # what it prints is a rules.yaml that loads, from anywhere, to the same config
    again = parse_config_text(p.stdout, "shown.yaml", base_dir=Path("/nonexistent"))
    assert again.model_dump() == load_config(conf).model_dump()


def test_config_show_refuses_an_invalid_file(tmp_path: Path) -> None:
    conf = tmp_path / "rules.yaml"
    conf.write_text("inboxes: [{path: in}]\ndaemon:\n  workerz: 4\n", encoding="utf-8")
    p = run_cli("config", "show", "--config", str(conf), timeout=120)
    assert p.returncode == 2 and p.stdout == ""
    assert f"{conf}:3 daemon.workerz" in p.stderr, p.stderr
