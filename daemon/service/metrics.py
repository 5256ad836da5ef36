"""Process-wide metrics and live progress: what /metrics, /status and the page report.

Contract:
- ``METRICS`` is the one ``Metrics`` of the process. Its prometheus_client ``CollectorRegistry``
  is its own (not the library's global one), so importing this module registers nothing
  elsewhere. Counters and histograms count from the process's start, as Prometheus expects (a
  restart resets them; ``rate()`` copes).
- The pipeline and the service report through the module functions below (``observe_stage``,
  ``document_started``, ``page_rendered``, ``page_recognized``, ``page_from_text_layer``, ``document_finished``,
  ``stage_degraded`` (an optional stage that failed, by stage), ``document_retried``,
  ``page_flagged`` / ``output_check_failed`` / ``document_review`` (the quality check),
  ``hook_delivery`` (one try of an ``on_done`` hook, by kind and outcome)): each is a
  one-line hook, thread-safe, cheap (a lock and a few additions) and never raises.
- Values only known at scrape time (documents by state from the journal, queue depth, hook
  deliveries pending, engine restarts, GPU memory, every daemon of a shared journal:
  ``ocr_daemon_fleet_daemon_*{host,pid}``) are read from the running service by ``ServiceCollector`` when
  ``/metrics`` is asked for; nothing polls in the background.
- ``live_progress()`` is the one place that says how far each document in flight is. It is built
  on the page counts these hooks see; once the journal records finished pages (issue 17, page-
  level progress and resume), point it at that API instead and the rest stays as it is.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    gc_collector,
    platform_collector,
    process_collector,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from daemon.engines import nvml_memory
from daemon.journal.deliveries import pending_count
from daemon.models import DocState
from daemon.stages import OPTIONAL

# No ``*_created`` series (a gauge of each counter's creation time per label set): they double
# the output and say only when the process started, which process_start_time_seconds says once.
disable_created_metrics()

#: Stages with a latency histogram (seconds): the wait for a file to settle, one page's render
#: in a worker, one page in the engine, and everything after OCR (classify, route, write, move).
STAGES = ("stability_wait", "render", "engine", "finish")
#: One set of buckets for all stages (10 ms .. 10 min): a page renders in ~0.1-1 s, is read in
#: ~0.1 s (GPU, batched) to ~10 s (Tesseract on a slow CPU); stability waits are seconds.
BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 60.0, 120.0, 300.0, 600.0)
#: How far back the page-rate history goes (seconds), and its bucket width.
HISTORY_SECONDS = 15 * 60
HISTORY_STEP = 60

#: Failure reasons grouped into a few classes for the ``reason`` label (the full reason is in
#: the journal, ``<name>.error.txt`` and /status). First match wins; the order matters.
REASON_CLASSES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(rx, re.IGNORECASE))
    for name, rx in (
        ("encrypted", r"encrypted|password"),
        ("too_many_pages", r"too many pages"),
        ("too_large", r"too large|decompression bomb|needed more than"),
        ("timeout", r"took longer than"),
        ("crash", r"crash"),
        ("refused_link", r"link|special file|not a regular file|outside the inbox"),
        ("disappeared", r"disappeared|file not found"),
        ("wrong_type", r"^not (a|an) |: the file is "),
        ("corrupt", r"corrupt|truncated|no pixels|no pages|unreadable|empty|no area|not a readable"),
        ("engine", r"OCR engine|OCR server|tesseract failed"),
        ("internal", r"internal error"),
    )
)


def reason_class(reason: str) -> str:
    """The ``reason`` label of a failure message (``other`` when no class fits)."""
    for name, rx in REASON_CLASSES:
        if rx.search(reason):
            return name
    return "other"


@dataclass
class DocProgress:
    """One document in flight, as /status and the page show it."""

    id: int
    name: str
    inbox: str
    pages_total: int | None  # None while the file is being opened (page count unknown)
    pages_done: int
    pages_in_engine: int
    seconds: float  # since its pages started
    pages_per_second: float
    eta_seconds: float | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Doc:
    name: str
    inbox: str
    total: int
    started: float  # monotonic
    done: int = 0
    in_engine: int = 0


class Metrics:
    """See the module docstring."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        process_collector.ProcessCollector(registry=r)
        platform_collector.PlatformCollector(registry=r)
        gc_collector.GCCollector(registry=r)
        self.pages = Counter("ocr_daemon_pages", "Pages OCRed (text back from the engine)", registry=r)
        self.layer_pages = Counter(
            "ocr_daemon_text_layer_pages", "Pages read from a PDF's own text layer (no OCR)", registry=r
        )
        self.finished = Counter(
            "ocr_daemon_documents_finished", "Documents that left processing, by outcome", ["outcome"], registry=r
        )
        self.failures = Counter(
            "ocr_daemon_failures", "Documents failed (moved to the failed folder), by reason class", ["reason"], registry=r
        )
        self.degraded = Counter(
            "ocr_daemon_degraded", "Optional stages that failed on a page or document, which went on without them",
            ["stage"], registry=r,
        )
        self.flagged = Counter(
            "ocr_daemon_pages_flagged", "Pages flagged by the quality check (low_confidence), by flag", ["flag"],
            registry=r,
        )
        self.checks_failed = Counter(
            "ocr_daemon_output_checks_failed", "Output checks that failed on a page (pdf_text, table_words, page_words, txt_text)",
            ["check"], registry=r,
        )
        self.review = Counter(
            "ocr_daemon_documents_review", "Documents finished with review: true (sidecar review_reasons)", registry=r
        )
        self.retries = Counter(
            "ocr_daemon_retries", "Failed tries of a document (each counts towards daemon.max_attempts)", registry=r
        )
        self.hooks = Counter(
            "ocr_daemon_hook_deliveries", "Tries of on_done hooks, by kind (exec, webhook) and outcome (delivered; "
            "retry: failed, tried again later; failed: failed for good)", ["kind", "outcome"], registry=r,
        )
        self.stage = Histogram(
            "ocr_daemon_stage_seconds", "Latency of a pipeline stage (per page for render and engine)", ["stage"],
            buckets=BUCKETS, registry=r,
        )
        self.pages_per_second = Gauge(
            "ocr_daemon_pages_per_second", "Pages OCRed per second over the last minute", registry=r
        )
        self.pages_per_second.set_function(lambda: self.rate(60.0))
        self.in_flight = Gauge("ocr_daemon_pages_in_flight", "Pages handed to the engine and not back yet", registry=r)
        self.in_flight.set_function(self._in_engine)
        self.service = ServiceCollector(None)  # the endpoint binds the running service to it
        r.register(self.service)
        for s in STAGES:  # every stage shows up (with zero counts) before its first observation
            self.stage.labels(stage=s)
        for o in ("done", "duplicate", "superseded", "failed", "retry"):
            self.finished.labels(outcome=o)
        for kind in ("exec", "webhook"):
            for o in ("delivered", "retry", "failed"):
                self.hooks.labels(kind=kind, outcome=o)
        self.flagged.labels(flag="low_confidence")
        for c in ("pdf_text", "table_words", "page_words", "txt_text"):
            self.checks_failed.labels(check=c)

        for st in sorted(OPTIONAL):  # every optional stage shows up with 0 before its first failure
            self.degraded.labels(stage=st.value)
        self.started = time.time()
        self.pages_count = 0  # pages OCRed since start (the counter's value, readable without internals)
        self.layer_pages_count = 0  # pages read from a text layer since start
        self._lock = threading.Lock()
        self._docs: dict[int, _Doc] = {}
        self._recent: deque[float] = deque()  # wall time of each page OCRed in the last HISTORY_SECONDS

    # -- hooks -----------------------------------------------------------------------------

    def observe_stage(self, stage: str, seconds: float) -> None:
        with contextlib.suppress(Exception):
            self.stage.labels(stage=stage).observe(max(0.0, seconds))

    def document_started(self, doc_id: int, name: str, inbox: str, pages: int) -> None:
        with self._lock:
            self._docs[doc_id] = _Doc(name, inbox, pages, time.monotonic())

    def page_rendered(self, doc_id: int, started: float | None) -> None:
        """A page came back from its render worker and goes to the engine now."""
        if started is not None:
            self.observe_stage("render", time.monotonic() - started)
        with self._lock:
            d = self._docs.get(doc_id)
            if d is not None:
                d.in_engine += 1

    def page_recognized(self, doc_id: int, engine_seconds: float) -> None:
        self.pages.inc()
        self.observe_stage("engine", engine_seconds)
        now = time.time()
        with self._lock:
            self.pages_count += 1
            self._recent.append(now)
            while self._recent and self._recent[0] < now - HISTORY_SECONDS:
                self._recent.popleft()
            d = self._docs.get(doc_id)
            if d is not None:
                d.done += 1
                d.in_engine = max(0, d.in_engine - 1)

    def page_from_text_layer(self, doc_id: int) -> None:
        """A page was read from the PDF's own text layer (not OCRed)."""
        with contextlib.suppress(Exception):
            self.layer_pages.inc()
        with self._lock:
            self.layer_pages_count += 1

    def stage_degraded(self, stage: str) -> None:
        """An optional stage failed on a page (or a document) that went on without it."""
        with contextlib.suppress(Exception):
            self.degraded.labels(stage=stage).inc()

    def page_flagged(self, flag: str) -> None:
        """A finished page was flagged by the quality check (``low_confidence``)."""
        with contextlib.suppress(Exception):
            self.flagged.labels(flag=flag).inc()

    def output_check_failed(self, check: str) -> None:
        """An output check failed on a page (daemon.quality.checks)."""
        with contextlib.suppress(Exception):
            self.checks_failed.labels(check=check).inc()

    def document_review(self) -> None:
        """A document finished with ``review: true``."""
        with contextlib.suppress(Exception):
            self.review.inc()

    def document_retried(self) -> None:
        """A try of a document failed; it is retried later or, past its attempts, failed."""
        with contextlib.suppress(Exception):
            self.retries.inc()

    def hook_delivery(self, kind: str, outcome: str) -> None:
        """One try of an ``on_done`` hook ended: ``delivered``, ``retry`` or ``failed``."""
        with contextlib.suppress(Exception):
            self.hooks.labels(kind=kind, outcome=outcome).inc()

    def document_finished(self, doc_id: int, outcome: str, reason: str = "") -> None:
        with self._lock:
            self._docs.pop(doc_id, None)
        with contextlib.suppress(Exception):
            self.finished.labels(outcome=outcome).inc()
            if outcome == "failed":
                self.failures.labels(reason=reason_class(reason)).inc()

    # -- reading ---------------------------------------------------------------------------

    def _in_engine(self) -> float:
        with self._lock:
            return float(sum(d.in_engine for d in self._docs.values()))

    def rate(self, window: float) -> float:
        """Pages per second over the last ``window`` seconds (or since the start, if shorter)."""
        window = min(window, max(1.0, time.time() - self.started))
        cutoff = time.time() - window
        with self._lock:
            n = sum(1 for t in self._recent if t >= cutoff)
        return n / window

    def history(self, step: int = HISTORY_STEP, span: int = HISTORY_SECONDS) -> list[dict[str, float]]:
        """Pages per second in each ``step``-second slot of the last ``span`` seconds, oldest
        first; ``start`` is the slot's start (Unix time). The running slot is the last."""
        now = time.time()
        end = (now // step + 1) * step
        slots = [0] * (span // step)
        with self._lock:
            for t in self._recent:
                i = len(slots) - 1 - int((end - t) // step)
                if 0 <= i < len(slots):
                    slots[i] += 1
        first = end - step * len(slots)
        out = []
        for i, n in enumerate(slots):
            start = first + i * step
            # the time the daemon really ran in this slot (it started, or the slot is running)
            width = min(start + step, now) - max(start, self.started)
            out.append({"start": start, "pages": float(n), "pages_per_second": n / width if width > 0 else 0.0})
        return out

    def progress(self) -> dict[int, DocProgress]:
        now = time.monotonic()
        out = {}
        with self._lock:
            for doc_id, d in self._docs.items():
                secs = now - d.started
                rate = d.done / secs if d.done and secs > 0 else 0.0
                eta = (d.total - d.done) / rate if rate > 0 else None
                out[doc_id] = DocProgress(doc_id, d.name, d.inbox, d.total, d.done, d.in_engine, secs, rate, eta)
        return out


def live_progress(svc: Any) -> list[DocProgress]:
    """Documents in flight in ``svc`` (a ``Service``) with their progress, oldest first.

    The one function /status and the page take progress from (see the module docstring). A
    document a worker has claimed but whose pages are not counted yet (its file is being opened)
    is listed with ``pages_total`` None.
    """
    tracked = METRICS.progress()
    # the journal's page records count pages an interrupted attempt finished too (resume)
    recorded = {p.doc_id: p for p in svc.journal.progress()}
    busy = svc.workers.busy_documents()
    out = []
    for doc_id, since in sorted(busy.items(), key=lambda kv: kv[1]):
        p = tracked.get(doc_id)
        jp = recorded.get(doc_id)
        if jp is not None and (p is None or jp.pages_done > p.pages_done):
            p = DocProgress(doc_id, jp.path.name, jp.inbox, jp.pages_total, jp.pages_done, p.pages_in_engine if p else 0,
                            time.monotonic() - since, jp.pages_per_s, jp.eta_s)
        if p is None:
            row = svc.journal.get(doc_id)
            p = DocProgress(doc_id, row.path.name if row else f"doc-{doc_id}", row.inbox if row else "", None, 0, 0,
                            time.monotonic() - since, 0.0, None)
        out.append(p)
    return out


def _disk(cfg: Any) -> Iterator[Metric]:
    """Free and total bytes of the filesystem of each folder the daemon writes (docs/monitoring:
    the disk-low alert): ``state``, ``failed`` and ``inbox:NAME``."""
    import os

    free = GaugeMetricFamily("ocr_daemon_disk_free_bytes", "Bytes free (for the daemon's user) on the filesystem "
                             "of a folder the daemon writes", labels=["folder"])
    size = GaugeMetricFamily("ocr_daemon_disk_size_bytes", "Size of the filesystem of a folder the daemon writes",
                             labels=["folder"])
    folders = {"state": cfg.daemon.state_dir, "failed": cfg.daemon.failed_dir,
               **{f"inbox:{ib.name}": ib.path for ib in cfg.inboxes}}
    for name, path in folders.items():
        try:
            st = os.statvfs(path)
        except OSError:
            continue  # not there (yet): nothing to say
        free.add_metric([name], st.f_bavail * st.f_frsize)
        size.add_metric([name], st.f_blocks * st.f_frsize)
    yield free
    yield size


def ready_problems(svc: Any) -> list[str]:
    """Why ``svc`` (a ``Service``) is not ready to take work; [] when it is. Ready = journal
    recovered and writable, engine started and usable, inboxes watched, and not stopping (drain)."""
    problems = []
    if svc.stopping():
        problems.append("stopping: draining in-flight documents, taking no new files")
    elif svc.pipeline is None:
        problems.append("starting: journal recovery and engine start not finished")
    elif svc.intake.watcher is None or not svc.scheduler.running:
        problems.append("starting: inboxes not watched yet")
    if svc.pipeline is not None and not svc.engine.healthy():
        problems.append(f"the {svc.engine.name} engine is not usable now (restarting)")
    state = getattr(svc, "state_problems", None)  # the journal: unwritable (disk full) or damaged
    if callable(state):
        problems.extend(state())
    return problems


def gpu_memory(engine: Any) -> list[tuple[str, int, int]]:
    """(gpu index, used bytes, total bytes) per GPU, where the engine runs on one and NVML (the
    driver's library, shipped with vLLM as ``pynvml``) can say; [] otherwise. An engine may report
    it itself through a ``gpu_memory()`` method returning the same."""
    own = getattr(engine, "gpu_memory", None)
    if callable(own):
        with contextlib.suppress(Exception):
            return list(own())
        return []
    if not str(getattr(engine, "name", "")).startswith("vllm"):
        return []

    return nvml_memory()


class ServiceCollector(Collector):
    """Values read from the running service at scrape time (see the module docstring)."""

    def __init__(self, svc: Any) -> None:
        self.svc = svc  # a Service, or None: nothing to report

    def describe(self) -> Iterable[Metric]:
        return []  # names vary with the service (GPU memory only where known): not checked up front

    def collect(self) -> Iterable[Metric]:
        return list(self._collect())

    def _collect(self) -> Iterator[Metric]:
        svc = self.svc
        if svc is None:
            return
        docs = GaugeMetricFamily("ocr_daemon_documents", "Documents in the journal, by state", labels=["state"])
        try:
            counts = svc.journal.counts()
        except Exception:  # a busy or broken journal must not break the scrape
            counts = {}
        for s in DocState:
            docs.add_metric([s.value], counts.get(s.value, 0))
        yield docs
        try:
            retrying = len(svc.journal.retrying())
        except Exception:
            retrying = 0
        yield GaugeMetricFamily("ocr_daemon_documents_retrying",
                                "Documents waiting for another try after a failed one (status: retrying)", value=retrying)
        try:
            waiting = len(svc.journal.waiting_for_space())
        except Exception:
            waiting = 0
        yield GaugeMetricFamily("ocr_daemon_documents_waiting_for_space",
                                "Documents waiting for a full or read-only destination (not counted as tries)",
                                value=waiting)
        try:
            pending = pending_count(svc.journal)
        except Exception:
            pending = 0
        yield GaugeMetricFamily("ocr_daemon_hook_deliveries_pending",
                                "on_done hook deliveries of done documents not made yet (status: hooks)", value=pending)
        yield GaugeMetricFamily("ocr_daemon_queue_depth", "Documents queued and waiting for a worker", value=counts.get("queued", 0))
        yield GaugeMetricFamily("ocr_daemon_settling_files", "Files seen in an inbox, waiting to be unchanged long enough",
                                value=svc.intake.tracker.pending())
        yield GaugeMetricFamily("ocr_daemon_documents_in_progress", "Documents being processed now",
                                value=len(svc.workers.busy_documents()))
        yield GaugeMetricFamily("ocr_daemon_ready", "1 when /healthz/ready answers 200", value=0 if ready_problems(svc) else 1)
        yield GaugeMetricFamily("ocr_daemon_engine_up", "1 while the OCR engine is started and usable",
                                value=1 if svc.pipeline is not None and svc.engine.healthy() else 0)
        yield from _disk(svc.cfg)
        health = getattr(svc, "journal_health", None)
        if health is not None:
            yield GaugeMetricFamily(
                "ocr_daemon_journal_writable",
                "1 while the journal can be written; 0 while it cannot (state folder full, I/O error, damaged): "
                "no document is started then, /healthz/ready says why",
                value=1 if health.writable else 0,
            )
        stats = getattr(svc.engine, "stats", None)
        restarts = float(stats.get("restarts", 0)) if isinstance(stats, dict) else 0.0
        yield CounterMetricFamily("ocr_daemon_engine_restarts", "Restarts of the OCR engine since the daemon started",
                                  value=restarts)
        yield from _fleet(svc.journal)
        mem = gpu_memory(svc.engine)
        if mem:
            g = GaugeMetricFamily("ocr_daemon_gpu_memory_bytes", "GPU memory in use and in total", labels=["gpu", "kind"])
            for idx, used, total in mem:
                g.add_metric([idx, "used"], used)
                g.add_metric([idx, "total"], total)
            yield g


def _fleet(journal: Any) -> Iterator[Metric]:
    """Per-daemon series of a shared journal (``PostgresJournal.daemons``), labelled ``host``,
    ``pid``: every daemon of the journal, so one scrape of any daemon shows the whole fleet.
    Nothing for the SQLite journal (it has one daemon: the rest of /metrics is it)."""
    daemons = getattr(journal, "daemons", None)
    if daemons is None:
        return
    try:
        rows = daemons()
    except Exception:  # the server away: the scrape goes on without the fleet
        return
    labels = ["host", "pid"]
    age = GaugeMetricFamily("ocr_daemon_fleet_daemon_heartbeat_age_seconds",
                            "Seconds since each daemon of the shared journal last renewed its leases", labels=labels)
    rate = GaugeMetricFamily("ocr_daemon_fleet_daemon_pages_per_second",
                             "Pages per second of each daemon of the shared journal (last minute, its last heartbeat)",
                             labels=labels)
    alive = GaugeMetricFamily("ocr_daemon_fleet_daemon_alive",
                              "1 while a daemon of the shared journal heartbeats within its lease; 0 stale or stopped",
                              labels=labels)
    held = GaugeMetricFamily("ocr_daemon_fleet_daemon_documents_held",
                             "Documents each daemon of the shared journal holds (processing under its lease)", labels=labels)
    for d in rows:
        key = [str(d["host"]), str(d["pid"])]
        age.add_metric(key, d["heartbeat_age_seconds"])
        rate.add_metric(key, d["pages_per_s"])
        alive.add_metric(key, 1 if d["alive"] else 0)
        held.add_metric(key, len(d["holding"]))
    yield from (age, rate, alive, held)


METRICS = Metrics()


# Module-level hooks: one line at each call site (``metrics.observe_stage("render", s)``).
observe_stage = METRICS.observe_stage
document_started = METRICS.document_started
page_rendered = METRICS.page_rendered
page_recognized = METRICS.page_recognized
page_from_text_layer = METRICS.page_from_text_layer
document_finished = METRICS.document_finished
stage_degraded = METRICS.stage_degraded
document_retried = METRICS.document_retried
hook_delivery = METRICS.hook_delivery
page_flagged = METRICS.page_flagged
output_check_failed = METRICS.output_check_failed
document_review = METRICS.document_review
