"""The typed models of ``rules.yaml`` (pydantic) and the names they are built from.

Contract:
- Every model forbids unknown keys (``extra="forbid"``), so typos are errors, not silent defaults.
- A model checks what one section can check alone (ranges, regexes, cron expressions, template
  placeholders); checks across sections (unique inbox/route names, a route's doctype or inbox
  must exist) are in :mod:`daemon.config.validate`, which runs them even when a model check
  failed, so every error is reported at once.
- Every key has a ``description`` and ``examples``: the one source of its documentation, read by
  :mod:`daemon.config.reference` (docs/configuration.md, the JSON Schema docs/rules.schema.json,
  ``ocr-daemon config schema``); the class docstring describes a section.
- The names the models are built from (languages, formats, placeholders, ``Strict``) are in
  :mod:`daemon.config.base`, the ``engine`` section's models in :mod:`daemon.config.engine_schema`;
  both are re-exported here. The ``daemon`` section's model is :mod:`daemon.config.daemon_schema`
  (``from daemon.config import DaemonCfg``).
- Nothing here reads files: loading is :mod:`daemon.config.load`.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import string
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator
from pydantic.json_schema import JsonDict, SkipJsonSchema

from daemon.config.base import (
    DEFAULT_CONFIG_PATH,
    FORMATS,
    INPUT_SUFFIXES,
    LANGUAGES,
    TEMPLATE_FIELDS,
    Format,
    Lang,
    LangOrUnknown,
    Strict,
)
from daemon.config.daemon_schema import DaemonCfg
from daemon.config.engine_schema import (
    EngineCfg,
    EngineDebugCfg,
    OpenAICfg,
    PageGuardsCfg,
    SamplingCfg,
    TesseractCfg,
    VllmCfg,
)

__all__ = [
    "DEFAULT_CONFIG_PATH",
    "DEFAULT_ROUTE",
    "FORMATS",
    "INPUT_SUFFIXES",
    "LANGUAGES",
    "TEMPLATE_FIELDS",
    "Config",
    "DoctypeCfg",
    "EngineCfg",
    "EngineDebugCfg",
    "FeatureMatchers",
    "Format",
    "InboxCfg",
    "Lang",
    "LangOrUnknown",
    "OnDoneCfg",
    "OpenAICfg",
    "PageGuardsCfg",
    "PagesRange",
    "RegexMatcher",
    "RouteCfg",
    "RouteMatch",
    "SamplingCfg",
    "Strict",
    "TesseractCfg",
    "VllmCfg",
    "template_root",
]


#: ``quality.min_confidence``'s default, chosen on bench/bench_flag.py's calibration set (generated
#: pages and real bench/realdocs tune pages scanned three ways): with the signals of
#: daemon.quality.signals beside it (the share of unsure words catches pages read partly wrong),
#: the flag's best F1 holds for any figure from 30 to 70; 50 is the middle. A figure near 76 (the
#: default before, bench/RESULTS.md "Quality flag") also flagged well-read pages full of symbols
#: (reference cards: few word-like tokens), which the figure alone cannot tell from junk.
MIN_CONFIDENCE = 50.0


@functools.lru_cache(maxsize=64)
def _globs(globs: tuple[str, ...]) -> re.Pattern[str]:
    """``fnmatch.fnmatch(x, g)`` for any ``g`` of ``globs`` as one pattern (a POSIX system: no case
    folding); matches nothing for no globs."""
    return re.compile("|".join(f"(?:{fnmatch.translate(g)})" for g in globs) or r"(?!)")


class InboxCfg(Strict):
    """A watched folder (`inboxes` is a list of them; at least one)."""

    path: Path = Field(examples=["/srv/ocr/inbox"], description="the watched folder (required)")
    name: str = Field(
        "", examples=["scans"],
        description="name used by routes (`match.inbox`) and templates (`{inbox}`); default: the folder's name",
    )
    recursive: bool = Field(False, examples=[True], description="also watch subfolders")
    include: list[str] = Field(
        default_factory=lambda: ["*" + s for s in INPUT_SUFFIXES], examples=[["*.pdf", "*.tif"]],
        description="globs of file names taken",
    )
    exclude: list[str] = Field(
        default_factory=list, examples=[["~*", "*/tmp/*"]], description="globs (name or full path) never taken"
    )
    watch: Literal["auto", "inotify", "poll"] = Field(
        "auto", examples=["poll"],
        description="`auto` (inotify, polling if unavailable), `inotify`, `poll` (network filesystems)",
    )
    stability_delay: float = Field(
        2.0, ge=0, examples=[10], description="seconds size and mtime must stay unchanged before a file is taken"
    )
    invalid_grace: float = Field(
        30.0, ge=0, examples=[120], description="seconds a stable file that does not open waits before it is failed"
    )
    # daemon/intake/contentcheck.py: a file over it is failed at once, never read (issue 33)
    max_file_mb: int = Field(
        2048, ge=1, examples=[4096],
        description="MiB: a bigger file is failed at once (never opened nor hashed) with the reason in its "
        "`.error.txt`; 2048 holds a 1,000-page 300 dpi colour scan",
    )
    schedule: str | None = Field(
        None, examples=["0 2 * * *"], description="cron expression (`0 2 * * *`): process this inbox only at these times"
    )
    languages: list[Lang] | None = Field(
        None, examples=[["de", "en"]],
        description="language hint for Tesseract, e.g. `[de, en]`; `null` = `engine.tesseract.languages`",
    )
    # daemon/intake/batch.py, pagescan.py; docs/batches.md
    separator: str | None = Field(
        None, min_length=1, max_length=200, examples=["PATCH T"],
        description="split each PDF or multi-page TIFF at separator sheets: pages with a barcode or QR code "
        "holding exactly this text; the sheets are left out and each part is its own document "
        "(`<name>.part1.pdf`, `<name>.part2.pdf`, ... beside it); see docs/batches.md",
    )
    drop_blank_pages: bool = Field(
        False, examples=[True],
        description="leave blank pages (the empty backs of a duplex scan) out of PDFs and multi-page TIFFs: the "
        "rest is written as `<name>.part1.pdf`; the sidecar lists them under `dropped_pages` with their page "
        "numbers in the original",
    )
    batch_archive: str | None = Field(
        None, examples=["/srv/scans/originals/{yyyy}-{mm}"],
        description="folder the original of a split or cleaned file is moved to once every part is written; "
        "template with `{inbox} {subdir} {stem} {yyyy} {mm} {dd}`; `null` = `batch-originals/<subfolder>` in "
        "the inbox; on the inbox's filesystem",
    )

    @field_validator("batch_archive")
    @classmethod
    def _batch_tmpl(cls, v: str | None) -> str | None:
        return None if v is None else _check_template(v, BATCH_TEMPLATE_FIELDS)

    def splits(self) -> bool:
        """True if files of this inbox go through the batch splitter (daemon.intake.batch)."""
        return self.separator is not None or self.drop_blank_pages

    @field_validator("schedule")
    @classmethod
    def _cron(cls, v: str | None) -> str | None:
        if v is not None:
            from apscheduler.triggers.cron import CronTrigger

            try:
                CronTrigger.from_crontab(v)
            except ValueError as e:
                raise ValueError(f"not a valid cron expression ({e})") from e
        return v

    @model_validator(mode="after")
    def _default_name(self) -> InboxCfg:
        if not self.name:
            self.name = self.path.name or "inbox"
        return self

    def wants(self, path: Path) -> bool:
        """True if ``path`` (inside this inbox) passes the include/exclude globs (include: the name,
        case-insensitive; exclude: the name or the whole path). The globs of each list are one
        compiled pattern (``_globs``): a rescan tests every file of the inbox with them."""
        return self.wants_name(path.name, str(path))

    def wants_name(self, name: str, path: str) -> bool:
        """``wants`` of the file ``name`` at ``path`` (a scan tests every file of the inbox: no
        ``Path`` built for it)."""
        if not _globs(tuple(g.lower() for g in self.include)).match(name.lower()):
            return False
        if not self.exclude:
            return True
        ex = _globs(tuple(self.exclude))
        return not (ex.match(name) or ex.match(path))


class RegexMatcher(Strict):
    """A regular expression that adds its weight to a doctype's score when found."""

    pattern: str = Field(
        examples=[r"\bIBAN\b"], description="Python regular expression, searched in the whole text (multi-line)"
    )
    weight: float = Field(1.0, examples=[0.5], description="added when the pattern is found")
    ignore_case: bool = Field(True, examples=[False], description="case-insensitive search")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            re.compile(v)
        except re.error as e:
            raise ValueError(f"invalid regular expression: {e}") from e
        return v


class PagesRange(Strict):
    """A page range, `{min: 1, max: 2}`; either end may be left out."""

    min: int | None = Field(None, ge=0, examples=[1], description="fewest pages (inclusive)")
    max: int | None = Field(None, ge=0, examples=[2], description="most pages (inclusive)")

    def contains(self, n: int) -> bool:
        return (self.min is None or n >= self.min) and (self.max is None or n <= self.max)


class FeatureMatchers(Strict):
    """Structural matchers of a doctype: weights added when the document has a feature."""

    has_table: float = Field(0.0, examples=[0.5], description="weight added when the text contains a table")
    has_math: float = Field(0.0, examples=[2.0], description="weight added when the text contains LaTeX math")
    pages: PagesRange | None = Field(
        None, examples=[{"min": 6}], description="page range `{min, max}` (either may be left out)"
    )
    pages_weight: float = Field(0.0, examples=[1.0], description="weight added when the page count is in `pages`")


class DoctypeCfg(Strict):
    """A document type (`doctypes` maps a name to one): matchers score the text; the highest score
    at or above its threshold wins, else the document is `other`."""

    threshold: float = Field(
        3.0, gt=0, examples=[4.0],
        description="score the doctype needs; the highest score at or above its threshold wins, else `other`",
    )
    keywords: dict[Lang, dict[str, float]] = Field(
        default_factory=dict, examples=[{"de": {"Rechnung": 3, "Rechnungsnummer": 1.5}, "en": {"invoice": 3}}],
        description="`{language: {word or phrase: weight}}`; the detected language's keywords count (English's too "
        "where at least ~5 % of the words are English function words; all languages' when the language is unknown or "
        "the doctype has none for it); each keyword counts once; Latin: whole words, case- and accent-insensitive; "
        "CJK: substring, spaces ignored",
    )
    regex: list[RegexMatcher] = Field(
        default_factory=list, examples=[[{"pattern": r"\bIBAN\b", "weight": 0.5}]],
        description="list of regex matchers; each counts once",
    )
    features: FeatureMatchers = Field(default_factory=FeatureMatchers, description="structural matchers")
    filename: dict[str, float] = Field(
        default_factory=dict, examples=[{"*rechnung*": 2}], description="`{glob on the file name: weight}`, case-insensitive"
    )


def _one_or_list(v: Any) -> Any:
    return [v] if isinstance(v, str) else v


def _or_one(schema: JsonDict) -> None:
    """The JSON Schema of a ``match`` condition takes one value too, as ``_one_or_list`` does."""
    branches = schema.get("anyOf")
    if isinstance(branches, list):
        for b in list(branches):
            if isinstance(b, dict) and b.get("type") == "array":
                branches.insert(branches.index(b), b["items"])


class RouteMatch(Strict):
    """A route's conditions: all must hold; none at all = a catch-all. Each may be one value or a list."""

    inbox: list[str] | None = Field(None, examples=[["scans"]], json_schema_extra=_or_one, description="inbox name(s)")
    subdir: list[str] | None = Field(
        None, examples=[["acme", "acme/*"]], json_schema_extra=_or_one,
        description="glob(s) on the inbox subfolder the file came from (`a/b` for `<inbox>/a/b/x.pdf`, `\"\"` at "
        "the inbox's root), case-insensitive; `*` also matches `/`",
    )
    filename: list[str] | None = Field(
        None, examples=[["*rechnung*", "*invoice*"]], json_schema_extra=_or_one, description="glob(s) on the file name, case-insensitive"
    )
    language: list[LangOrUnknown] | None = Field(
        None, examples=[["de", "en"]], json_schema_extra=_or_one, description="ISO 639-1 code(s) among the 11, or `unknown`"
    )
    doctype: list[str] | None = Field(
        None, examples=[["invoice", "receipt"]], json_schema_extra=_or_one, description="doctype name(s), or `other`"
    )
    pages: PagesRange | None = Field(None, examples=[{"max": 2}], description="page range `{min, max}`")
    has_table: bool | None = Field(None, examples=[True], description="`true`/`false`: the text contains a table")
    has_math: bool | None = Field(None, examples=[True], description="`true`/`false`: the text contains LaTeX math")
    review: bool | None = Field(
        None, examples=[True],
        description="`true`/`false`: the document needs review (a page flagged `low_confidence`, or another "
        "stage's reason before routing: the sidecar's `review_reasons`)",
    )

    _norm = field_validator("inbox", "subdir", "filename", "language", "doctype", mode="before")(_one_or_list)

    def is_catch_all(self) -> bool:
        return all(getattr(self, f) is None for f in type(self).model_fields)


def _check_template(v: str, allowed: frozenset[str] = TEMPLATE_FIELDS) -> str:
    try:
        names = {f for _, f, _, _ in string.Formatter().parse(v) if f is not None}
    except ValueError as e:
        raise ValueError(f"bad template: {e}") from e
    unknown = names - allowed
    if unknown:
        raise ValueError(
            f"unknown placeholder(s) {sorted(unknown)}; allowed: {', '.join('{' + f + '}' for f in sorted(allowed))}"
        )
    return v


class OnDoneCfg(Strict):
    """Hooks run when a document of the route is done (or linked as a duplicate), after its outputs
    are written: a command, a webhook, or both. Deliveries are journaled and retried; a failed one
    never fails the document (docs/hooks.md)."""

    # daemon/service/hooks.py runs them; daemon/journal/deliveries.py journals them
    exec: list[str] | None = Field(
        None, min_length=1, examples=[["/usr/local/bin/import-document", "--quiet"]],
        description="command to run, as an argv list (no shell); the sidecar's path is added as its last argument "
        "and its JSON is on stdin; a minimal environment (docs/hooks.md); exit code 0 = delivered",
    )
    webhook: str | None = Field(
        None, examples=["https://dms.example/api/ocr-done"],
        description="URL the sidecar JSON is POSTed to, with the header `Idempotency-Key: <document id>`; "
        "a 2xx answer = delivered",
    )
    timeout: float = Field(
        60.0, gt=0, le=3600, examples=[10],
        description="seconds one try may take: the command is killed (with its process group) after it, "
        "the webhook's connection or any wait for its answer ends at it",
    )
    attempts: int = Field(
        8, ge=1, le=100, examples=[3],
        description="tries of one delivery before it is recorded failed; a webhook's 4xx answer (other than 408, "
        "409, 425, 429) fails it at once",
    )
    backoff: float = Field(
        10.0, ge=0, le=86400, examples=[30],
        description="seconds before the second try; doubles on each try after it, up to `backoff_max`",
    )
    backoff_max: float = Field(
        600.0, ge=0, le=86400, examples=[3600], description="longest wait between two tries (seconds)"
    )

    @field_validator("webhook")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        if v is not None:
            from urllib.parse import urlsplit

            try:
                u = urlsplit(v)
                u.port  # noqa: B018 - raises ValueError on a bad port
            except ValueError as e:
                raise ValueError(f"{v!r} is not a URL ({e})") from e
            if u.scheme not in ("http", "https") or not u.hostname:
                raise ValueError(f"{v!r} is not an http:// or https:// URL with a host")
        return v

    @field_validator("exec")
    @classmethod
    def _argv(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and (not v[0] or any("\0" in a for a in v)):
            raise ValueError("the command (first item) must not be empty, nor may any argument hold a NUL")
        return v

    @model_validator(mode="after")
    def _something(self) -> OnDoneCfg:
        if self.exec is None and self.webhook is None:
            raise ValueError("on_done needs `exec`, `webhook` or both")
        return self


#: Placeholders of ``inboxes[].batch_archive``: what is known before a file is read.
BATCH_TEMPLATE_FIELDS = frozenset({"inbox", "subdir", "stem", "yyyy", "mm", "dd"})


class RouteCfg(Strict):
    """A route: where a matching document's outputs go and what happens to its source. The
    first route whose `match` holds takes the document."""

    name: str = Field(
        examples=["invoices"], description="route name (required, unique); shown in sidecars and `route --explain`"
    )
    match: RouteMatch = Field(default_factory=RouteMatch, description="conditions; all must hold; none = catch-all")
    formats: list[Format] = Field(
        default_factory=lambda: ["txt", "md", "json"], min_length=1, examples=[["txt", "md", "json", "pdf"]],
        description=f"outputs: {', '.join(f'`{f}`' for f in FORMATS)}",
    )
    destination: str = Field(
        "beside", examples=["/srv/ocr/archive/{doctype}/{doc_yyyy}"],
        description="`beside` (the source's folder) or a folder template with `{inbox} {subdir} {language} {doctype} "
        "{yyyy} {mm} {dd} {stem}` (`{subdir}`: the inbox subfolder the file came from, `a/b`, empty at the inbox's "
        "root; `{yyyy}`… is the processing date) and `{doc_yyyy} {doc_mm} {doc_date}` (the date printed "
        "on the document: the first date after a label such as `Datum:`/`Invoice date`/`日付`, else the first date in "
        "the text, in the 11 languages' formats; `undated` when there is none; the sidecar's `doc_date`)",
    )
    source: Literal["keep", "archive", "delete"] = Field(
        "keep", examples=["archive"],
        description="`keep`, `archive` (move to `archive_to`) or `delete` the source after the outputs are written",
    )
    archive_to: str | None = Field(
        None, examples=["/srv/ocr/archive/{doctype}/{doc_yyyy}/originals"],
        description="folder template for `source: archive` (same placeholders)",
    )
    min_margin: float = Field(
        1.5, ge=0, examples=[2.0],
        description="a route that matches on `doctype` and archives or deletes the source does so only when the "
        "classification is confident: the doctype's score at least this much above its threshold (for `other`: the "
        "best score this much below its threshold); an unsure one keeps the source where it is and the sidecar "
        "says `review: true` (`review_reasons`, `classification`). 1.5: the misfiled documents of issue 32 were "
        "0.5-1.0 over, and 191 of 198 held-out documents are 1.5 or more over (bench/RESULTS.md, Filing)",
    )
    csv_bom: bool = Field(
        False, examples=[True],
        description="start CSV files with a UTF-8 byte order mark, so Excel reads accents and CJK right",
    )
    pdfa: bool = Field(
        False, examples=[True], description="make the searchable PDF (`pdf` format) a PDF/A-2b through Ghostscript"
    )
    on_done: OnDoneCfg | None = Field(
        None, examples=[{"webhook": "https://dms.example/api/ocr-done", "attempts": 5}],
        description="hooks run once the document is done: `exec` (a command) and/or `webhook` (a POST), both given "
        "the sidecar; needs `json` in `formats` (docs/hooks.md)",
    )

    @field_validator("destination", "archive_to")
    @classmethod
    def _tmpl(cls, v: str | None) -> str | None:
        return None if v is None else _check_template(v)

    @model_validator(mode="after")
    def _archive_needs_folder(self) -> RouteCfg:
        if self.source == "archive" and not self.archive_to:
            raise ValueError("source: archive needs archive_to (a folder template)")
        if self.on_done is not None and "json" not in self.formats:
            raise ValueError("on_done needs `json` in formats: the hooks are given the sidecar")
        return self


DEFAULT_ROUTE = RouteCfg(name="default")


class QualityCfg(Strict):
    """The quality check of every page and output (docs/outputs.md, "Review"): a page whose
    confidence is under `min_confidence` is flagged `low_confidence`, and the document gets
    `review: true` (routes can match on it: `match.review`)."""

    min_confidence: float = Field(
        MIN_CONFIDENCE, ge=0, le=100, examples=[60],
        description="a page read with a confidence (0-100: the engine's length-weighted word confidence times the "
        "share of word-like tokens) under this is flagged `low_confidence`, as is a page one of whose signals trips "
        "(too many unsure words, too few dictionary words, text in none of the languages); 0 = never. The default is "
        "measured: bench/bench_flag.py, bench/RESULTS.md \"Flag signals\"",
    )
    check_outputs: bool = Field(
        True, examples=[False],
        description="check each output against the recognised words before it is written (the searchable PDF's "
        "text layer, tables, txt); a failed check is recorded on its page and sets `review`",
    )


class Config(Strict):
    """ocr-daemon's rules.yaml: watched folders, the OCR engine, document types and routes."""

    daemon: DaemonCfg = Field(default_factory=DaemonCfg, description="the daemon itself")
    engine: EngineCfg = Field(default_factory=EngineCfg, description="the OCR engine")
    inboxes: list[InboxCfg] = Field(min_length=1, description="the watched folders (required, at least one)")
    doctypes: dict[str, DoctypeCfg] = Field(
        default_factory=dict,
        description="document types by name; left out: the shipped six (invoice, receipt, contract, bank_statement, "
        "scientific_paper, letter); `{}`: none",
    )
    quality: QualityCfg = Field(default_factory=QualityCfg, description="the quality check of pages and outputs")
    routes: list[RouteCfg] = Field(
        default_factory=list,
        description="routes, first match wins; when the last is not a catch-all, a built-in one writes "
        "`txt`, `md`, `json` beside the source and keeps it",
    )

    # Checks across sections (unique names, references) are daemon.config.validate's, not a
    # model validator's: pydantic runs a model validator only when every field is valid.

    # Set by load_config; not part of the YAML (nor of its JSON Schema).
    source_path: SkipJsonSchema[Path | None] = Field(default=None, exclude=True)

    def route_list(self) -> list[RouteCfg]:
        """Routes in order, with the built-in default appended when no route catches all."""
        if self.routes and self.routes[-1].match.is_catch_all():
            return list(self.routes)
        return [*self.routes, DEFAULT_ROUTE]

    def inbox(self, name: str) -> InboxCfg | None:
        return next((i for i in self.inboxes if i.name == name), None)


def template_root(t: str) -> Path:
    """The fixed folder prefix of a template (the part before the first placeholder)."""
    fixed = t.split("{", 1)[0]
    return Path(fixed) if fixed.endswith("/") or "{" not in t else Path(fixed).parent
