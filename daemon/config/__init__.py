"""``rules.yaml``: typed configuration models, loading and validation.

Contract:
- ``load_config(path)`` returns a validated ``Config`` or raises ``ConfigError`` listing *every*
  problem at once, each as ``FILE:LINE key.path: message`` (borgmatic style).
- YAML is read with ``yaml.safe_load`` semantics only (no Python tags), with limits on file size
  and on alias expansion so a hostile file cannot exhaust memory.
- Every model forbids unknown keys (``extra="forbid"``), so typos are errors, not silent defaults.
- Relative paths (state_dir, failed_dir, inbox paths, destination/archive templates) are resolved
  against the folder holding the config file.
- ``check_config(path)`` = load + the warnings that are not errors (destinations that would loop
  back into a watched inbox, no catch-all route).
"""

from __future__ import annotations

import fnmatch
import re
import string
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from daemon.errors import ConfigError

DEFAULT_CONFIG_PATH = Path("/etc/ocr-daemon/rules.yaml")

#: The 11 languages LightOnOCR-2-1B supports, ISO 639-1.
LANGUAGES: tuple[str, ...] = ("zh", "en", "ja", "fr", "de", "es", "it", "nl", "pt", "sv", "da")
Lang = Literal["zh", "en", "ja", "fr", "de", "es", "it", "nl", "pt", "sv", "da"]
LangOrUnknown = Literal["zh", "en", "ja", "fr", "de", "es", "it", "nl", "pt", "sv", "da", "unknown"]

#: Output formats a route may ask for.
Format = Literal["txt", "md", "json", "tex", "csv", "xlsx"]
FORMATS: tuple[str, ...] = ("txt", "md", "json", "tex", "csv", "xlsx")

#: Placeholders allowed in destination / archive templates.
TEMPLATE_FIELDS = frozenset({"inbox", "language", "doctype", "yyyy", "mm", "dd", "stem", "doc_yyyy", "doc_mm", "doc_date"})

INPUT_SUFFIXES = (".pdf", ".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".bmp")

MAX_CONFIG_BYTES = 1 << 20  # 1 MiB: a rules file is a few KiB; more is a mistake or an attack
MAX_EXPANDED_NODES = 200_000  # alias-bomb guard: nodes after expanding every alias


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


class DaemonCfg(Strict):
    state_dir: Path = Path("/var/lib/ocr-daemon")
    failed_dir: Path = Path("/srv/ocr/failed")
    workers: int = Field(
        0, ge=0, le=1024, description="documents processed at once; 0 = enough to keep the engine full"
    )
    render_workers: int = Field(0, ge=0, le=256, description="render processes (pages; classifying and rendering finished documents); 0 = half the CPU cores")
    render_nice: int = Field(
        0, ge=0, le=19, description="CPU priority of render processes below the daemon's (`nice` steps)"
    )
    pages_in_flight_per_document: int = Field(64, ge=1, description="pages of one document rendered/OCRed at once")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    rescan_interval: float = Field(60.0, gt=0, description="seconds between safety rescans")
    max_attempts: int = Field(
        3, ge=1, description="tries of a file that crashes its render worker (or hits an internal error) before it is failed"
    )
    retry_backoff: float = Field(10.0, ge=0, description="seconds before the first retry; doubles")
    retry_backoff_max: float = Field(600.0, ge=0, description="longest wait between retries")
    duplicates: Literal["link", "process"] = "link"
    drain_timeout: float = Field(60.0, ge=0, description="seconds SIGTERM waits for in-flight work")


class SamplingCfg(Strict):
    temperature: float = Field(0.2, ge=0, le=2)
    top_p: float = Field(0.9, gt=0, le=1)
    max_tokens: int = Field(4096, ge=16, le=32768)


class TesseractCfg(Strict):
    languages: list[Lang] = Field(default_factory=lambda: list(LANGUAGES), min_length=1)  # type: ignore[arg-type]
    threads: int = Field(0, ge=0, description="pages OCRed at once; 0 = number of CPU cores")
    render_dpi: int | None = Field(300, ge=72, le=600, description="resolution pages are rendered at for Tesseract")


class VllmCfg(Strict):
    gpu_memory_utilization: float = Field(0.85, gt=0, le=1)
    kv_cache_memory_bytes: int | None = Field(None, ge=1 << 28)
    max_num_seqs: int = Field(256, ge=1)
    max_num_batched_tokens: int = Field(16384, ge=512)
    max_model_len: int = Field(8192, ge=1024)
    dtype: Literal["auto", "bfloat16", "float16"] = "bfloat16"
    kv_cache_dtype: Literal["auto", "fp8"] = "auto"
    # vLLM's choice when "auto" (FlashAttention 3 on Hopper); a tuning knob measured by bench/bench_attention.py
    attention_backend: Literal["auto", "FLASH_ATTN", "TRITON_ATTN"] = "auto"
    # None: vLLM's (16), or 64 with an fp8 KV cache (vllm_engine.FP8_BLOCK_SIZE)
    block_size: Literal[16, 32, 64, 128] | None = None
    profile: Literal["default", "16gb"] = "default"
    load_format: Literal["auto", "dummy", "safetensors"] = "auto"
    max_pages_in_flight: int = Field(512, ge=1)
    repetition_retries: int = Field(2, ge=0)
    enforce_eager: bool = False
    hang_timeout: float = Field(300.0, gt=0, description="seconds without progress = engine hung")


class OpenAICfg(Strict):
    base_urls: list[str] = Field(default_factory=list)
    model: str | None = None
    api_key: str | None = None
    concurrency: int = Field(32, ge=1)
    timeout: float = Field(600.0, gt=0)
    retries: int = Field(3, ge=0)


class EngineCfg(Strict):
    kind: Literal["auto", "vllm", "tesseract", "openai"] = "auto"
    model: str = "lightonai/LightOnOCR-2-1B"
    render_longest_edge: int = Field(1540, ge=256, le=10000)
    max_pages: int = Field(500, ge=1)
    max_image_pixels: int = Field(100_000_000, ge=1_000_000)
    render_timeout: float = Field(120.0, gt=0, description="seconds one page may take to render")
    render_memory_mb: int = Field(4096, ge=256, description="address-space limit of each render worker")
    autorotate: bool = True
    crop_borders: bool = True
    sampling: SamplingCfg = Field(default_factory=SamplingCfg)
    tesseract: TesseractCfg = Field(default_factory=TesseractCfg)
    vllm: VllmCfg = Field(default_factory=VllmCfg)
    openai: OpenAICfg = Field(default_factory=OpenAICfg)


class InboxCfg(Strict):
    path: Path
    name: str = ""  # defaults to the folder's name
    recursive: bool = False
    include: list[str] = Field(default_factory=lambda: ["*" + s for s in INPUT_SUFFIXES])
    exclude: list[str] = Field(default_factory=list)
    watch: Literal["auto", "inotify", "poll"] = "auto"
    stability_delay: float = Field(2.0, ge=0, description="seconds size+mtime must stay unchanged")
    invalid_grace: float = Field(
        30.0, ge=0, description="seconds an unchanged file that does not open waits before it is failed"
    )
    schedule: str | None = Field(None, description="cron expression; process only at these times")
    languages: list[Lang] | None = None  # hint for engines that need one (Tesseract)

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
        """True if ``path`` (inside this inbox) passes the include/exclude globs."""
        name = path.name
        if not any(fnmatch.fnmatch(name.lower(), g.lower()) for g in self.include):
            return False
        return not any(fnmatch.fnmatch(name, g) or fnmatch.fnmatch(str(path), g) for g in self.exclude)


class RegexMatcher(Strict):
    pattern: str
    weight: float = 1.0
    ignore_case: bool = True

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            re.compile(v)
        except re.error as e:
            raise ValueError(f"invalid regular expression: {e}") from e
        return v


class PagesRange(Strict):
    min: int | None = Field(None, ge=0)
    max: int | None = Field(None, ge=0)

    def contains(self, n: int) -> bool:
        return (self.min is None or n >= self.min) and (self.max is None or n <= self.max)


class FeatureMatchers(Strict):
    has_table: float = 0.0  # weight added when the document contains a table
    has_math: float = 0.0
    pages: PagesRange | None = None
    pages_weight: float = 0.0


class DoctypeCfg(Strict):
    threshold: float = Field(3.0, gt=0)
    keywords: dict[Lang, dict[str, float]] = Field(default_factory=dict)
    regex: list[RegexMatcher] = Field(default_factory=list)
    features: FeatureMatchers = Field(default_factory=FeatureMatchers)
    filename: dict[str, float] = Field(default_factory=dict)  # glob -> weight


def _one_or_list(v: Any) -> Any:
    return [v] if isinstance(v, str) else v


class RouteMatch(Strict):
    inbox: list[str] | None = None
    filename: list[str] | None = None
    language: list[LangOrUnknown] | None = None
    doctype: list[str] | None = None
    pages: PagesRange | None = None
    has_table: bool | None = None
    has_math: bool | None = None

    _norm = field_validator("inbox", "filename", "language", "doctype", mode="before")(_one_or_list)

    def is_catch_all(self) -> bool:
        return all(getattr(self, f) is None for f in type(self).model_fields)


def _check_template(v: str) -> str:
    try:
        names = {f for _, f, _, _ in string.Formatter().parse(v) if f is not None}
    except ValueError as e:
        raise ValueError(f"bad template: {e}") from e
    unknown = names - TEMPLATE_FIELDS
    if unknown:
        raise ValueError(
            f"unknown placeholder(s) {sorted(unknown)}; allowed: {', '.join('{' + f + '}' for f in sorted(TEMPLATE_FIELDS))}"
        )
    return v


class RouteCfg(Strict):
    name: str
    match: RouteMatch = Field(default_factory=RouteMatch)
    formats: list[Format] = Field(default_factory=lambda: ["txt", "md", "json"], min_length=1)  # type: ignore[arg-type]
    destination: str = "beside"  # "beside" the source, or a folder template
    source: Literal["keep", "archive", "delete"] = "keep"
    archive_to: str | None = None
    csv_bom: bool = Field(False, description="start CSV files with a UTF-8 byte order mark, for Excel")

    @field_validator("destination", "archive_to")
    @classmethod
    def _tmpl(cls, v: str | None) -> str | None:
        return None if v is None else _check_template(v)

    @model_validator(mode="after")
    def _archive_needs_folder(self) -> RouteCfg:
        if self.source == "archive" and not self.archive_to:
            raise ValueError("source: archive needs archive_to (a folder template)")
        return self


DEFAULT_ROUTE = RouteCfg(name="default")


class Config(Strict):
    daemon: DaemonCfg = Field(default_factory=DaemonCfg)
    engine: EngineCfg = Field(default_factory=EngineCfg)
    inboxes: list[InboxCfg] = Field(min_length=1)
    doctypes: dict[str, DoctypeCfg] = Field(default_factory=dict)
    routes: list[RouteCfg] = Field(default_factory=list)

    # Set by load_config; not part of the YAML.
    source_path: Path | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _cross_refs(self) -> Config:
        names = [i.name for i in self.inboxes]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"inbox names must be unique; repeated: {sorted(dup)} (set name: on each)")
        rnames = [r.name for r in self.routes]
        rdup = {n for n in rnames if rnames.count(n) > 1}
        if rdup:
            raise ValueError(f"route names must be unique; repeated: {sorted(rdup)}")
        if "other" in self.doctypes:
            raise ValueError("doctype 'other' is the built-in fallback and cannot be defined")
        return self

    def route_list(self) -> list[RouteCfg]:
        """Routes in order, with the built-in default appended when no route catches all."""
        if self.routes and self.routes[-1].match.is_catch_all():
            return list(self.routes)
        return [*self.routes, DEFAULT_ROUTE]

    def inbox(self, name: str) -> InboxCfg | None:
        return next((i for i in self.inboxes if i.name == name), None)


# ----------------------------------------------------------------------------- loading


def _node_lines(node: yaml.Node, path: tuple[Any, ...], out: dict[tuple[Any, ...], int]) -> None:
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


def _fmt_loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _line_for(loc: tuple[Any, ...], lines: dict[tuple[Any, ...], int]) -> int:
    for n in range(len(loc), -1, -1):
        if loc[:n] in lines:
            return lines[loc[:n]]
    return 1


def _clean_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    # pydantic puts validator/union branch names into loc ("literal['a']", "function-after[...]").
    return tuple(p for p in loc if isinstance(p, int) or not any(c in str(p) for c in "[]('"))


def _message(err: Any) -> str:
    msg = str(err["msg"])
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    if err["type"] == "extra_forbidden":
        msg = "unknown key (typo?)"
    if err["type"] == "literal_error" or err["type"] == "enum":
        return f"{err.get('input')!r} {msg[0].lower()}{msg[1:]}"
    return msg


def parse_config_text(text: str, filename: str = "rules.yaml", base_dir: Path | None = None) -> Config:
    """Parse and validate config text. Raises ``ConfigError`` with every problem found."""
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
    lines: dict[tuple[Any, ...], int] = {}
    _node_lines(node, (), lines)
    try:
        cfg = Config.model_validate(data)
    except ValidationError as e:
        problems = []
        for err in e.errors():
            loc = _clean_loc(tuple(err["loc"]))
            problems.append(f"{filename}:{_line_for(loc, lines)} {_fmt_loc(loc)}: {_message(err)}")
        raise ConfigError(problems) from None
    problems = _crossref_problems(cfg, lines, filename)
    if problems:
        raise ConfigError(problems)
    if base_dir is not None:
        _resolve_paths(cfg, base_dir)
    return cfg


def _crossref_problems(cfg: Config, lines: dict[tuple[Any, ...], int], filename: str) -> list[str]:
    """Names that refer to other sections (route -> doctype, route -> inbox) must exist."""
    problems = []
    known = set(cfg.doctypes) | {"other"}
    for i, r in enumerate(cfg.routes):
        for key, values, valid in (("doctype", r.match.doctype, known), ("inbox", r.match.inbox, {b.name for b in cfg.inboxes})):
            for j, v in enumerate(values or []):
                if v not in valid:
                    loc = ("routes", i, "match", key)
                    line = lines.get((*loc, j), _line_for(loc, lines))
                    problems.append(f"{filename}:{line} {_fmt_loc(loc)}: {v!r} is not one of {sorted(valid)}")
    return problems


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


def _resolve(p: Path, base: Path) -> Path:
    p = p.expanduser()
    return p if p.is_absolute() else (base / p)


def _resolve_tmpl(t: str, base: Path) -> str:
    if t == "beside":
        return t
    return t if Path(t).expanduser().is_absolute() else str(base / t)


def _resolve_paths(cfg: Config, base: Path) -> None:
    cfg.daemon.state_dir = _resolve(cfg.daemon.state_dir, base)
    cfg.daemon.failed_dir = _resolve(cfg.daemon.failed_dir, base)
    for ib in cfg.inboxes:
        ib.path = _resolve(ib.path, base)
    for r in cfg.routes:
        r.destination = _resolve_tmpl(r.destination, base)
        if r.archive_to:
            r.archive_to = _resolve_tmpl(r.archive_to, base)


def load_config(path: Path | str) -> Config:
    """Load and validate ``path``. Raises ``ConfigError`` (never returns a half-valid config)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise ConfigError([f"{path}: file is {size} bytes, more than {MAX_CONFIG_BYTES}; refusing to parse it"])
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([f"{path}: no such file"]) from None
    except UnicodeDecodeError as e:
        raise ConfigError([f"{path}: not UTF-8 text ({e.reason} at byte {e.start})"]) from None
    except OSError as e:
        raise ConfigError([f"{path}: cannot read: {e.strerror}"]) from None
    cfg = parse_config_text(text, filename=str(path), base_dir=path.resolve().parent)
    cfg.source_path = path
    return cfg


def template_root(t: str) -> Path:
    """The fixed folder prefix of a template (the part before the first placeholder)."""
    fixed = t.split("{", 1)[0]
    return Path(fixed) if fixed.endswith("/") or "{" not in t else Path(fixed).parent


def config_warnings(cfg: Config) -> list[str]:
    """Problems that do not stop the daemon but that the user should know about."""
    warns: list[str] = []
    src = str(cfg.source_path or "rules.yaml")
    inbox_roots = [(ib, ib.path.resolve()) for ib in cfg.inboxes]

    def inside(folder: Path) -> InboxCfg | None:
        f = folder.resolve()
        for ib, root in inbox_roots:
            if f == root or (ib.recursive and root in f.parents):
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
    if not cfg.routes or not cfg.routes[-1].match.is_catch_all():
        warns.append(f"{src}: routes: no catch-all route at the end; the built-in default (txt, md, json beside the source) applies")
    return warns


def filesystem_problems(cfg: Config) -> list[str]:
    """Folders a source is *moved* to (failed folder, archive_to) must be on the same filesystem
    as the inboxes it comes from: the daemon moves sources by rename only, never by
    copy-then-delete, so a crash can never leave a half copy as the only copy."""
    from daemon.fsio import same_filesystem

    src = str(cfg.source_path or "rules.yaml")
    problems = []
    for ib in cfg.inboxes:
        if not same_filesystem(ib.path, cfg.daemon.failed_dir):
            problems.append(
                f"{src}: daemon.failed_dir: {cfg.daemon.failed_dir} is on another filesystem than inbox "
                f"{ib.name!r} ({ib.path}); sources are moved by rename only, so put them on one filesystem"
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
