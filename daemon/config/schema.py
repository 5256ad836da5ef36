"""The typed models of ``rules.yaml`` (pydantic) and the names they are built from.

Contract:
- Every model forbids unknown keys (``extra="forbid"``), so typos are errors, not silent defaults.
- A model checks what one section can check alone (ranges, regexes, cron expressions, template
  placeholders); checks across sections (unique inbox/route names, a route's doctype or inbox
  must exist) are in :mod:`daemon.config.validate`, which runs them even when a model check
  failed, so every error is reported at once.
- The languages are written once (``Lang``); ``LANGUAGES`` and ``LangOrUnknown`` derive from it.
- The output formats come from the writers' registry (``daemon.writers.WRITERS``).
- Nothing here reads files: loading is :mod:`daemon.config.load`.
"""

from __future__ import annotations

import fnmatch
import re
import string
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from daemon.writers import FORMATS as WRITER_FORMATS

DEFAULT_CONFIG_PATH = Path("/etc/ocr-daemon/rules.yaml")

#: The 11 languages LightOnOCR-2-1B supports, ISO 639-1: written here once; the tuple and the
#: "or unknown" type are derived from it (a Literal nested in a Literal is flattened).
Lang = Literal["zh", "en", "ja", "fr", "de", "es", "it", "nl", "pt", "sv", "da"]
LANGUAGES: tuple[str, ...] = get_args(Lang)
LangOrUnknown = Literal[Lang, "unknown"]

#: Output formats a route may ask for: the keys of the writers' registry (daemon.writers.WRITERS),
#: so a new writer is a new format here without a second list. Pydantic checks the values against
#: the Literal built at run time; mypy cannot see a Literal built from data, so to it a format is
#: a ``str``.
FORMATS: tuple[str, ...] = WRITER_FORMATS
if TYPE_CHECKING:
    Format = str
else:
    Format = Literal[FORMATS]

#: Placeholders allowed in destination / archive templates.
TEMPLATE_FIELDS = frozenset({"inbox", "language", "doctype", "yyyy", "mm", "dd", "stem", "doc_yyyy", "doc_mm", "doc_date"})

INPUT_SUFFIXES = (".pdf", ".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".bmp")



class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


class HttpCfg(Strict):
    """``daemon.http``: the health/metrics/status endpoint and its pages (daemon/service/http.py, statuspage.py)."""

    listen: str = Field(
        "127.0.0.1:9750", description="`host:port` (`[::1]:9750`; port 0 = any free port) or a Unix socket path (has a `/`)"
    )
    upload: bool = Field(False, description="the page takes a file and drops it into a chosen inbox")
    upload_clients: list[str] = Field(
        default_factory=lambda: ["127.0.0.0/8", "::1"],
        description="client networks (CIDR) allowed to upload; a Unix socket is guarded by its file permissions",
    )
    upload_max_mb: int = Field(100, ge=1, le=4096, description="largest upload (MiB)")

    @field_validator("listen")
    @classmethod
    def _listen(cls, v: str) -> str:
        if "/" in v:
            return v
        host, sep, port = v.rpartition(":")
        if not sep or not host or not port.isdigit() or int(port) > 65535:
            raise ValueError(f"{v!r} is not host:port (e.g. 127.0.0.1:9750, [::1]:9750) or a socket path")
        return v

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
    http: HttpCfg | None = Field(default_factory=HttpCfg, description="health/metrics/status endpoint; null = off")
    # 1 h: after a restore at most an hour of documents is re-added from their sidecars (the
    # restore does that itself); 3 kept, each checked before the oldest goes, so a journal
    # damaged unnoticed for up to 2 h still has a good copy (docs/reliability.md)
    journal_backup_interval: float = Field(
        3600.0, ge=0, description="seconds between online backups of the journal (into state_dir/backups); 0 = no backups"
    )
    journal_backup_keep: int = Field(3, ge=1, le=1000, description="journal backups kept (the oldest is removed first)")
    # false only to measure what the per-page commits cost (bench/bench_journal_pages.py)
    page_records: bool = Field(
        True, description="commit each finished page to the journal: a document resumes from its done pages after a crash, kill or restart; page progress in `status`"
    )


class SamplingCfg(Strict):
    temperature: float = Field(0.2, ge=0, le=2)
    top_p: float = Field(0.9, gt=0, le=1)
    max_tokens: int = Field(4096, ge=16, le=32768)


class TesseractCfg(Strict):
    languages: list[Lang] = Field(default_factory=lambda: list(LANGUAGES), min_length=1)  # type: ignore[arg-type]
    threads: int = Field(0, ge=0, description="pages OCRed at once; 0 = number of CPU cores")
    hang_timeout: float = Field(300.0, gt=0, description="seconds with pages in flight and none finished = engine stalled")
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
    enforce_eager: bool = False
    hang_timeout: float = Field(300.0, gt=0, description="seconds without progress = engine hung")
    # daemon.engines.pixtral_patch; $OCR_DAEMON_PIXTRAL_PATCH, when set, wins
    pixtral_patch: Literal["varlen", "per_image", "off"] = "varlen"
    # vLLM's own data parallelism: one engine core per GPU inside the one AsyncLLM (its load
    # balancer spreads the pages); "auto" = every visible GPU (vllm_engine.visible_gpu_count)
    data_parallel_size: Literal["auto"] | int = Field("auto", description="engine cores (GPUs); auto = all visible")

    @field_validator("data_parallel_size", mode="before")
    @classmethod
    def _dp_size(cls, v: Any) -> Any:
        if v != "auto" and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise ValueError("data_parallel_size must be 'auto' or a whole number >= 1")
        return v


class PageGuardsCfg(Strict):
    """The per-page policy of the VLM engines (vllm, openai): daemon.engines.pagepolicy."""

    repetition_retries: int = Field(2, ge=0)


class EngineDebugCfg(Strict):
    """Benchmark switches (bench/bench_gpu.py), not for production; left out of the README's reference."""

    ignore_eos: bool = False  # every page decodes engine.sampling.max_tokens tokens (vllm, openai)
    page_guards: bool = True  # false: one request per page, its text as is (a forced length always "truncates")
    vllm_args: dict[str, Any] = Field(default_factory=dict)  # merged last into vLLM's engine arguments (logging)
    pixtral_marker: str | None = None  # file the engine core notes the Pixtral patch in (pixtral_patch.set_marker)


class OpenAICfg(Strict):
    base_urls: list[str] = Field(default_factory=list)
    model: str | None = None
    api_key: str | None = None
    concurrency: int = Field(32, ge=1)
    timeout: float = Field(600.0, gt=0)
    retries: int = Field(3, ge=0)
    # a server that failed is left out for down_backoff s (doubling per failure up to
    # down_backoff_max), then probed again with /v1/models; back in use once it answers
    down_backoff: float = Field(1.0, gt=0)
    down_backoff_max: float = Field(30.0, gt=0)


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
    # PDF pages: use a page's own text layer when it is real text (daemon.pages.textlayer)
    text_layer: Literal["auto", "any", "ocr"] = "auto"
    sampling: SamplingCfg = Field(default_factory=SamplingCfg)
    page_guards: PageGuardsCfg = Field(default_factory=PageGuardsCfg)
    tesseract: TesseractCfg = Field(default_factory=TesseractCfg)
    vllm: VllmCfg = Field(default_factory=VllmCfg)
    openai: OpenAICfg = Field(default_factory=OpenAICfg)
    debug: EngineDebugCfg = Field(default_factory=EngineDebugCfg)

    @model_validator(mode="before")
    @classmethod
    def _old_repetition_retries(cls, data: Any) -> Any:
        """``engine.vllm.repetition_retries`` (its place before the page guards applied to every
        VLM engine) still loads, as ``engine.page_guards.repetition_retries`` unless that is set."""
        if isinstance(data, dict) and isinstance(data.get("vllm"), dict) and "repetition_retries" in data["vllm"]:
            vllm = dict(data["vllm"])
            old = vllm.pop("repetition_retries")
            guards = dict(data.get("page_guards") or {})
            guards.setdefault("repetition_retries", old)
            data = {**data, "vllm": vllm, "page_guards": guards}
        return data


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
    formats: list[Format] = Field(default_factory=lambda: ["txt", "md", "json"], min_length=1)
    destination: str = "beside"  # "beside" the source, or a folder template
    source: Literal["keep", "archive", "delete"] = "keep"
    archive_to: str | None = None
    csv_bom: bool = Field(False, description="start CSV files with a UTF-8 byte order mark, for Excel")
    pdfa: bool = Field(False, description="make the searchable PDF (format pdf) a PDF/A-2b, through Ghostscript")

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

    # Checks across sections (unique names, references) are daemon.config.validate's, not a
    # model validator's: pydantic runs a model validator only when every field is valid.

    # Set by load_config; not part of the YAML.
    source_path: Path | None = Field(default=None, exclude=True)

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
