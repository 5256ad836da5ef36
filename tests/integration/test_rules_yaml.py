"""The shipped rules.yaml: it loads, documents every key with its default, classifies the corpus,
and the README's rules.yaml reference (block ``section:config``) matches daemon/config/schema.py.

Regenerate the README block after changing daemon/config/schema.py:
    .venv/bin/python tests/integration/test_rules_yaml.py --write-readme
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from daemon import config as C  # noqa: E402
from daemon.config import LANGUAGES, config_warnings, load_config  # noqa: E402
from daemon.understand.classify import classify  # noqa: E402
from daemon.understand.route import choose_route  # noqa: E402

SHIPPED = REPO / "rules.yaml"
README = REPO / "README.md"
DOCTYPES = ("invoice", "receipt", "contract", "bank_statement", "scientific_paper", "letter")

# ----------------------------------------------------------------------------- reference text

#: Meaning of every key (path as in the reference table). A key in daemon/config/schema.py with neither an
#: entry here nor a ``Field(description=...)`` fails test_every_config_key_is_documented.
HELP: dict[str, str] = {
    "daemon.state_dir": "folder of the journal (SQLite) and engine state",
    "daemon.failed_dir": "documents that cannot be processed are moved here with `<name>.error.txt`",
    "daemon.workers": "documents processed at once; 0 = enough to keep the engine full (half the engine's page capacity, at least 4)",
    "daemon.render_workers": "render processes (pages; classifying and rendering finished documents); 0 = half the CPU cores",
    "daemon.render_nice": "CPU priority of render processes below the daemon's (`nice` steps)",
    "daemon.pages_in_flight_per_document": "pages of one document rendered/OCRed at once",
    "daemon.log_level": "`DEBUG`, `INFO`, `WARNING` or `ERROR`",
    "daemon.rescan_interval": "seconds between safety rescans of every inbox",
    "daemon.max_attempts": "tries of a file that crashes its render worker (or hits an internal error) before it is failed",
    "daemon.retry_backoff_max": "longest wait between retries (seconds)",
    "daemon.retry_backoff": "seconds before the first retry; doubles on each retry",
    "daemon.duplicates": "same content under a new name: `link` to the earlier result, or `process` again",
    "daemon.drain_timeout": "seconds SIGTERM waits for in-flight documents",
    "daemon.http": "the HTTP endpoint (health, metrics, status page; below); `null` = off",
    "daemon.http.listen": "`host:port` (`[::1]:9750`; port 0 = any free port) or a Unix socket path (contains a `/`); on a taken port the daemon logs an error, keeps processing and retries every 30 s",
    "daemon.http.upload": "the page takes a file and drops it into a chosen inbox (the normal path: stability, journal, routing)",
    "daemon.http.upload_clients": "client networks (CIDR) allowed to upload; any client of a Unix socket (its file permissions guard it)",
    "daemon.http.upload_max_mb": "largest upload (MiB)",
    "engine.kind": "`auto` (vLLM when an NVIDIA GPU and vLLM are present, else Tesseract), `vllm`, `tesseract`, `openai`",
    "engine.model": "Hugging Face repo id or local model folder (vllm, openai)",
    "engine.render_longest_edge": "pages are rendered so the longest edge has this many pixels (the VLM engines; Tesseract: `engine.tesseract.render_dpi`)",
    "engine.max_pages": "documents with more pages fail (\"too many pages\")",
    "engine.max_image_pixels": "larger images are refused (decompression-bomb guard)",
    "engine.render_timeout": "seconds one page may take to render",
    "engine.render_memory_mb": "address-space limit of each render worker (MiB)",
    "engine.autorotate": "turn sideways/upside-down pages upright before OCR",
    "engine.crop_borders": "crop dark scanner borders",
    "engine.text_layer": "PDF pages: `auto` uses a page's own text layer where it is real text (not an invisible OCR layer over a scan, not glyph soup) and OCRs only the other pages; `any` also trusts an invisible OCR layer; `ocr` OCRs every page",
    "engine.sampling": "VLM decoding settings (below)",
    "engine.page_guards": "per-page checks of VLM output, vllm and openai (below)",
    "engine.page_guards.repetition_retries": "re-runs (at temperatures 0.5, 0.8, 1.0) of a page whose output loops",
    "engine.tesseract": "Tesseract engine settings (below)",
    "engine.vllm": "resident vLLM engine settings (below)",
    "engine.openai": "OpenAI-compatible server engine settings (below)",
    "engine.debug": "benchmark switches (bench/bench_gpu.py); leave it out",
    "engine.sampling.temperature": "VLM sampling temperature",
    "engine.sampling.top_p": "VLM nucleus sampling",
    "engine.sampling.max_tokens": "most tokens generated per page",
    "engine.tesseract.languages": "Tesseract languages when the inbox gives no hint",
    "engine.tesseract.threads": "pages OCRed at once; 0 = number of CPU cores",
    "engine.tesseract.render_dpi": "PDF pages are rendered at this resolution for Tesseract (it reads best near 300 dpi; 1540 px is ~132 dpi on A4 and loses small print); image pages keep their size between 1540 px and A4 at this resolution; `max_image_pixels` bounds both; `null`: pages at `render_longest_edge` as for the VLM",
    "engine.vllm.gpu_memory_utilization": "share of GPU memory vLLM may take",
    "engine.vllm.kv_cache_memory_bytes": "fixed KV-cache size (bytes) instead of the share above",
    "engine.vllm.max_num_seqs": "pages decoded at once",
    "engine.vllm.max_num_batched_tokens": "tokens per scheduler step",
    "engine.vllm.max_model_len": "context length (image + text tokens) per page",
    "engine.vllm.dtype": "`auto`, `bfloat16` or `float16`",
    "engine.vllm.kv_cache_dtype": "`auto` (same as `dtype`) or `fp8` (half the KV-cache memory and decode traffic)",
    "engine.vllm.attention_backend": "`auto` (vLLM's choice), `FLASH_ATTN` or `TRITON_ATTN`",
    "engine.vllm.block_size": "KV-cache block in tokens: `null` (vLLM's 16, or 64 with `kv_cache_dtype: fp8`), 16, 32, 64 or 128",
    "engine.vllm.profile": "`default` or `16gb` (settings for a 16 GB GPU)",
    "engine.vllm.load_format": "`auto`, `safetensors`, or `dummy` (random weights, tests only)",
    "engine.vllm.max_pages_in_flight": "back-pressure bound on submitted, unfinished pages",
    "engine.vllm.enforce_eager": "disable CUDA graphs (slower; for debugging)",
    "engine.vllm.hang_timeout": "seconds without progress before the engine counts as hung",
    "engine.vllm.pixtral_patch": "vision encoder attention: `varlen` (one flash-attention call over the images), `per_image`, or `off` (vLLM's code as shipped); `$OCR_DAEMON_PIXTRAL_PATCH` wins when set",
    "engine.openai.base_urls": "OpenAI-compatible servers, `http://host:port/v1`",
    "engine.openai.model": "model name on the server; default `engine.model`",
    "engine.openai.api_key": "API key, if the server wants one",
    "engine.openai.concurrency": "requests in flight",
    "engine.openai.timeout": "seconds per request",
    "engine.openai.retries": "retries of a failed request",
    "engine.openai.down_backoff": "seconds a failed server is left out, doubling per failure; then probed with `/v1/models`",
    "engine.openai.down_backoff_max": "longest time a failed server is left out before the next probe (seconds)",
    "inboxes[].path": "the watched folder (required)",
    "inboxes[].name": "name used by routes (`match.inbox`) and templates (`{inbox}`); default: the folder's name",
    "inboxes[].recursive": "also watch subfolders",
    "inboxes[].include": "globs of file names taken",
    "inboxes[].exclude": "globs (name or full path) never taken",
    "inboxes[].watch": "`auto` (inotify, polling if unavailable), `inotify`, `poll` (network filesystems)",
    "inboxes[].stability_delay": "seconds size and mtime must stay unchanged before a file is taken",
    "inboxes[].invalid_grace": "seconds a stable file that does not open waits before it is failed",
    "inboxes[].schedule": "cron expression (`0 2 * * *`): process this inbox only at these times",
    "inboxes[].languages": "language hint for Tesseract, e.g. `[de, en]`",
    "doctypes.NAME.threshold": "score the doctype needs; the highest score at or above its threshold wins, else `other`",
    "doctypes.NAME.keywords": "`{language: {word or phrase: weight}}`; the detected language's keywords count (English's too where at least ~5 % of the words are English function words; all languages' when the language is unknown or the doctype has none for it); each keyword counts once; Latin: whole words, case- and accent-insensitive; CJK: substring, spaces ignored",
    "doctypes.NAME.regex": "list of regex matchers (below); each counts once",
    "doctypes.NAME.regex[].pattern": "Python regular expression, searched in the whole text (multi-line)",
    "doctypes.NAME.regex[].weight": "added when the pattern is found",
    "doctypes.NAME.regex[].ignore_case": "case-insensitive search",
    "doctypes.NAME.features": "structural matchers (below)",
    "doctypes.NAME.features.has_table": "weight added when the text contains a table",
    "doctypes.NAME.features.has_math": "weight added when the text contains LaTeX math",
    "doctypes.NAME.features.pages": "page range `{min, max}` (either may be left out)",
    "doctypes.NAME.features.pages_weight": "weight added when the page count is in `pages`",
    "doctypes.NAME.filename": "`{glob on the file name: weight}`, case-insensitive",
    "routes[].name": "route name (required, unique); shown in sidecars and `route --explain`",
    "routes[].match": "conditions (below); all must hold; none = catch-all",
    "routes[].match.inbox": "inbox name(s)",
    "routes[].match.filename": "glob(s) on the file name, case-insensitive",
    "routes[].match.language": "ISO 639-1 code(s) among the 11, or `unknown`",
    "routes[].match.doctype": "doctype name(s), or `other`",
    "routes[].match.pages": "page range `{min, max}`",
    "routes[].match.has_table": "`true`/`false`: the text contains a table",
    "routes[].match.has_math": "`true`/`false`: the text contains LaTeX math",
    "routes[].formats": "outputs: `txt`, `md`, `json`, `tex`, `csv`, `xlsx`, `pdf`",
    "routes[].destination": "`beside` (the source's folder) or a folder template with `{inbox} {language} {doctype} {yyyy} {mm} {dd} {stem}` (`{yyyy}`… is the processing date) and `{doc_yyyy} {doc_mm} {doc_date}` (the date printed on the document: the first date after a label such as `Datum:`/`Invoice date`/`日付`, else the first date in the text, in the 11 languages' formats; `undated` when there is none; the sidecar's `doc_date`)",
    "routes[].source": "`keep`, `archive` (move to `archive_to`) or `delete` the source after the outputs are written",
    "routes[].archive_to": "folder template for `source: archive` (same placeholders)",
    "routes[].csv_bom": "start CSV files with a UTF-8 byte order mark, so Excel reads accents and CJK right",
    "routes[].pdfa": "make the searchable PDF (`pdf` format) a PDF/A-2b through Ghostscript",
}

# (path prefix, model): the sections of the reference, in order.
SECTIONS: list[tuple[str, type[BaseModel]]] = [
    ("daemon", C.DaemonCfg),
    ("daemon.http", C.HttpCfg),
    ("engine", C.EngineCfg),
    ("engine.sampling", C.SamplingCfg),
    ("engine.page_guards", C.PageGuardsCfg),
    ("engine.tesseract", C.TesseractCfg),
    ("engine.vllm", C.VllmCfg),
    ("engine.openai", C.OpenAICfg),
    ("inboxes[]", C.InboxCfg),
    ("doctypes.NAME", C.DoctypeCfg),
    ("doctypes.NAME.regex[]", C.RegexMatcher),
    ("doctypes.NAME.features", C.FeatureMatchers),
    ("routes[]", C.RouteCfg),
    ("routes[].match", C.RouteMatch),
]


def _default(field: Any) -> str:
    if field.is_required():
        return "(required)"
    if field.default_factory is not None:
        value = field.default_factory()
        if isinstance(value, BaseModel):
            return "(section)"
    else:
        value = field.default
    if value is PydanticUndefined:
        return "(required)"
    return _fmt(value)


def _fmt(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{}"
    return str(value)


def reference_rows() -> list[tuple[str, str, str]]:
    """(key path, default, meaning) for every key of every config model."""
    rows = []
    for prefix, model in SECTIONS:
        for name, field in model.model_fields.items():
            if name == "source_path":
                continue
            path = f"{prefix}.{name}"
            # HELP first; a new key with a pydantic description documents itself meanwhile.
            rows.append((path, _default(field), HELP.get(path) or field.description or ""))
    return rows


def reference_markdown() -> str:
    out = [
        "## rules.yaml reference",
        "",
        "One YAML file (`--config PATH`, default `/etc/ocr-daemon/rules.yaml`; the shipped, commented",
        "[rules.yaml](rules.yaml) is the starting point). Unknown keys are errors; relative paths are",
        "relative to the file's folder. `ocr-daemon check-config` lists every problem with file, line and",
        "key path. Sections: `daemon`, `engine`, `inboxes` (required, a list), `doctypes`, `routes`.",
        "",
        "| key | default | meaning |",
        "|---|---|---|",
    ]
    for path, default, meaning in reference_rows():
        out.append(f"| `{path}` | `{default}` | {meaning.replace('|', '/')} |")
    out += [
        "",
        "Shorthands: `match` values may be one value or a list. Templates are filled with sanitised",
        "values (no `/`, no `..`, no leading `-` or `.`), so a file name cannot steer outputs elsewhere.",
        "The shipped doctypes are `invoice`, `receipt`, `contract`, `bank_statement`, `scientific_paper`",
        "and `letter`, each with keywords in all 11 languages (zh en ja fr de es it nl pt sv da); a",
        "document that reaches no threshold is `other`. A file without a `doctypes:` section gets these",
        "shipped doctypes (packaged as `daemon/config/doctypes.yaml`, the same section as rules.yaml);",
        "`doctypes: {}` defines none, and `check-config` warns when a route then matches on `doctype`.",
        "When the last route is not a catch-all, a built-in route writes `txt`, `md`, `json` beside the",
        "source and keeps it.",
        "`ocr-daemon route --explain FILE` shows the detected language, every doctype's score and the",
        "matchers that fired, and for each route whether it matched or the first condition that failed.",
    ]
    return "\n".join(out) + "\n"


_BLOCK_RE = re.compile(r"(<!-- BEGIN section:config -->\n)(.*?)(<!-- END section:config -->)", re.DOTALL)


def readme_block() -> str:
    m = _BLOCK_RE.search(README.read_text(encoding="utf-8"))
    assert m, "README.md lacks the section:config block"
    return m.group(2)


def write_readme() -> None:
    text = README.read_text(encoding="utf-8")
    new = _BLOCK_RE.sub(lambda m: m.group(1) + reference_markdown() + m.group(3), text, count=1)
    README.write_text(new, encoding="utf-8")


# ----------------------------------------------------------------------------- tests


def test_every_config_key_is_documented() -> None:
    missing = [p for p, _, meaning in reference_rows() if not meaning]
    assert not missing, f"add these keys to HELP in tests/integration/test_rules_yaml.py: {missing}"
    stale = set(HELP) - {p for p, _, _ in reference_rows()}
    assert not stale, f"HELP documents keys daemon/config/schema.py no longer has: {sorted(stale)}"


def test_readme_reference_matches_config() -> None:
    assert readme_block() == reference_markdown(), (
        "README section:config is out of date; run: .venv/bin/python tests/integration/test_rules_yaml.py --write-readme"
    )


def _flatten(data: Any, prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(data, dict):
        for k, v in data.items():
            out[f"{prefix}.{k}" if prefix else str(k)] = v
            if isinstance(v, dict):
                out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    return out


def test_shipped_file_lists_every_setting_with_its_default() -> None:
    """daemon/engine/inbox keys all appear in rules.yaml, with daemon/config/schema.py's default value
    (except the inbox's path and name, which are the production values)."""
    raw = yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))
    flat = _flatten({"daemon": raw["daemon"], "engine": raw["engine"]}, "")
    flat.update(_flatten(raw["inboxes"][0], "inboxes[]"))
    defaults = {p: d for p, d, _ in reference_rows() if p.split(".")[0] in ("daemon", "engine", "inboxes[]")}
    for path, default in defaults.items():
        assert path in flat, f"rules.yaml does not show {path}"
        if default in ("(section)",) or path in ("inboxes[].path", "inboxes[].name"):
            continue
        shown = _fmt(flat[path])
        assert shown == default or _num(shown) == _num(default), f"{path}: rules.yaml has {shown}, schema.py {default}"


def _num(s: str) -> float | str:
    try:
        return float(s)
    except ValueError:
        return s


def test_shipped_rules_load_with_production_paths() -> None:
    cfg = load_config(SHIPPED)
    assert cfg.daemon.state_dir == Path("/var/lib/ocr-daemon")
    assert cfg.daemon.failed_dir == Path("/srv/ocr/failed")
    assert [i.path for i in cfg.inboxes] == [Path("/srv/ocr/inbox")]
    assert all(r.destination == "beside" or r.destination.startswith("/srv/ocr/archive/") for r in cfg.routes)
    assert all(r.archive_to is None or r.archive_to.startswith("/srv/ocr/archive/") for r in cfg.routes)
    # no loops into the inbox; the only warning-free outcome we ship
    assert config_warnings(cfg) == []
    assert cfg.routes[-1].match.is_catch_all()
    assert cfg.routes[-1].destination == "beside" and cfg.routes[-1].source == "keep"


def test_shipped_doctypes_cover_all_languages() -> None:
    cfg = load_config(SHIPPED)
    assert tuple(cfg.doctypes) == DOCTYPES
    for name, dt in cfg.doctypes.items():
        assert set(dt.keywords) == set(LANGUAGES), f"{name}: keywords for {sorted(set(LANGUAGES) - set(dt.keywords))} missing"
        for lang, kws in dt.keywords.items():
            assert len(kws) >= 5, f"{name}.{lang}: only {len(kws)} keywords"


def test_packaged_default_doctypes_are_the_shipped_rules_doctypes() -> None:
    """One source of truth: rules.yaml shows users the doctypes a file without ``doctypes:`` gets
    (daemon/config/doctypes.yaml); edit both together."""
    packaged = yaml.safe_load((REPO / "daemon/config/doctypes.yaml").read_text(encoding="utf-8"))
    assert set(packaged) == {"doctypes"}
    assert packaged["doctypes"] == yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))["doctypes"]
    assert C.shipped_doctypes() == packaged["doctypes"]
    no_section = C.parse_config_text("inboxes: [{path: in}]\n")
    assert no_section.doctypes == load_config(SHIPPED).doctypes


def test_every_shipped_key_has_a_comment() -> None:
    """Every ``key: value`` line of the daemon/engine/inboxes sections carries a comment
    (block headers such as ``vllm:`` are exempt)."""
    section = None
    uncommented = []
    for line in SHIPPED.read_text(encoding="utf-8").splitlines():
        if re.match(r"^[a-z]", line):
            section = line.split(":")[0]
            continue
        if section not in ("daemon", "engine", "inboxes") or not line.strip() or line.lstrip().startswith("#"):
            continue
        key, _, value = line.strip().lstrip("- ").partition(":")
        if value.strip() and "#" not in value:
            uncommented.append(line)
    assert not uncommented, uncommented


# the tuning corpus, through the shipped rules.yaml
from corpus import CORPUS  # noqa: E402


@pytest.fixture(scope="module")
def shipped() -> C.Config:
    return load_config(SHIPPED)


@pytest.mark.parametrize(("lang", "doctype", "text"), CORPUS, ids=[f"{d}-{lang}" for lang, d, _ in CORPUS])
def test_shipped_rules_classify_corpus(shipped: C.Config, lang: str, doctype: str, text: str) -> None:
    c = classify(text, cfg=shipped, filename="scan.pdf", pages=1, markdown=False)
    assert (c.language, c.doctype) == (lang, doctype), (c.doctype_scores, c.fired.get(doctype))


def test_shipped_routes_send_corpus_where_documented(shipped: C.Config) -> None:
    from datetime import datetime

    expected = {
        "invoice": ("invoices-and-receipts", "/srv/ocr/archive/invoice/2024", "archive"),
        "receipt": ("invoices-and-receipts", "/srv/ocr/archive/receipt/2024", "archive"),
        "bank_statement": ("bank-statements", "/srv/ocr/archive/bank_statement/2024/05", "archive"),
        "contract": ("contracts", "/srv/ocr/archive/contract/2024", "archive"),
        "scientific_paper": ("scientific-papers", "/srv/ocr/archive/scientific_paper/de", "keep"),
        "letter": ("everything-else", "/srv/ocr/inbox", "keep"),
        "other": ("everything-else", "/srv/ocr/inbox", "keep"),
    }
    for lang, doctype, text in CORPUS:
        if lang != "de":
            continue
        c = classify(text, cfg=shipped, filename="scan.pdf", pages=1, markdown=False)
        decision, _ = choose_route(shipped, path=Path("/srv/ocr/inbox/scan.pdf"), inbox="inbox", cls=c, pages=1,
                                   when=datetime(2024, 5, 2))
        assert (decision.name, str(decision.destination), decision.source_action) == expected[doctype]


@pytest.mark.parametrize(("lang", "doctype"), [("de", "invoice"), ("ja", "receipt"), ("da", "letter")])
def test_shipped_rules_classify_real_tesseract_output(shipped: C.Config, lang: str, doctype: str) -> None:
    """A corpus document drawn as a page image and read by the real Tesseract engine."""
    from corpus import DOCTYPE_TEXTS
    from docgen import text_image

    from daemon.engines.base import PageRequest
    from daemon.engines.tesseract import TesseractEngine

    img = text_image(DOCTYPE_TEXTS[doctype][lang], font_size=28, lang=lang if lang in ("zh", "ja") else None)
    eng = TesseractEngine(C.EngineCfg(kind="tesseract", tesseract=C.TesseractCfg(threads=1)))
    eng.start()
    try:
        text = eng.submit(PageRequest("t", 0, img)).result(timeout=120).text
    finally:
        eng.close()
    c = classify(text, cfg=shipped, filename="scan.png", pages=1, markdown=False)
    assert (c.language, c.doctype) == (lang, doctype), (text[:300], c.doctype_scores)


if __name__ == "__main__":
    if "--write-readme" in sys.argv:
        write_readme()
        print("README.md section:config rewritten")
    else:
        print(reference_markdown())
