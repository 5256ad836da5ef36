"""The ``daemon:`` section of ``rules.yaml``: the daemon's own settings (folders, concurrency,
retries, logging, the journal and its backups, retention, the HTTP endpoint).

Contract:
- ``DaemonCfg`` forbids unknown keys (``extra="forbid"``, from ``Strict``); every key has a
  ``description`` and ``examples``, read by :mod:`daemon.config.reference` for the generated
  reference (docs/configuration.md, docs/rules.schema.json).
- ``http`` is the endpoint's model, :mod:`daemon.config.http_schema`.
- :class:`daemon.config.schema.Config` holds it as ``daemon``; ``from daemon.config import
  DaemonCfg`` is the public name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from daemon.config.base import Strict
from daemon.config.http_schema import HttpCfg


class DaemonCfg(Strict):
    """The daemon itself: folders, concurrency, retries, logging, the HTTP endpoint."""

    state_dir: Path = Field(
        Path("/var/lib/ocr-daemon"), examples=["state", "/srv/ocr-state"],
        description="folder of the journal (SQLite), the raw engine outputs and engine state",
    )
    failed_dir: Path = Field(
        Path("/srv/ocr/failed"), examples=["/srv/scans/failed"],
        description="documents that cannot be processed are moved here with `<name>.error.txt`",
    )
    workers: int = Field(
        0, ge=0, le=1024, examples=[8],
        description="documents processed at once; 0 = enough to keep the engine full (half the engine's page capacity, at least 4)",
    )
    render_workers: int = Field(
        0, ge=0, le=256, examples=[6],
        description="render processes (pages; classifying and rendering finished documents); 0 = half the CPU cores",
    )
    render_nice: int = Field(
        0, ge=0, le=19, examples=[10], description="CPU priority of render processes below the daemon's (`nice` steps)"
    )
    pages_in_flight_per_document: int = Field(
        64, ge=1, examples=[16], description="pages of one document rendered/OCRed at once"
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", examples=["DEBUG"], description="`DEBUG`, `INFO`, `WARNING` or `ERROR`"
    )
    rescan_interval: float = Field(
        60.0, gt=0, examples=[300], description="seconds between safety rescans of every inbox"
    )
    max_attempts: int = Field(
        3, ge=1, examples=[5],
        description="tries of a document before it goes to the failed folder with its reason; see `retry_backoff`",
    )
    retry_backoff: float = Field(
        10.0, ge=0, examples=[30], description="seconds before the first retry; doubles on each retry"
    )
    retry_backoff_max: float = Field(600.0, ge=0, examples=[3600], description="longest wait between retries (seconds)")
    duplicates: Literal["link", "process"] = Field(
        "link", examples=["process"],
        description="same content under a new name: `link` to the earlier result, or `process` again",
    )
    drain_timeout: float = Field(
        60.0, ge=0, examples=[120], description="seconds SIGTERM waits for in-flight documents"
    )
    http: HttpCfg | None = Field(
        default_factory=HttpCfg, examples=[None], description="the HTTP endpoint (health, metrics, status page); `null` = off"
    )
    # 1 h: after a restore at most an hour of documents is re-added from their sidecars (the
    # restore does that itself); 3 kept, each checked before the oldest goes, so a journal
    # damaged unnoticed for up to 2 h still has a good copy (docs/reliability.md)
    journal_backup_interval: float = Field(
        3600.0, ge=0, examples=[900, 0],
        description="seconds between online backups of the journal (into state_dir/backups); 0 = no backups",
    )
    journal_backup_keep: int = Field(
        3, ge=1, le=1000, examples=[7], description="journal backups kept (the oldest is removed first)"
    )
    # Retention (issue 34 item 4): raw/<id>/ is 7.9 KB and two inodes per document (8 GB and 2 M
    # inodes at a million); 90 days keeps the engine's raw text for a `convert` of anything recent.
    keep_raw_days: float = Field(
        90.0, ge=0, examples=[30, 0],
        description="days the engine's raw output of a finished document is kept in state_dir/raw (pruned "
        "every `maintenance_interval`); 0 = kept for ever",
    )
    keep_journal_days: float = Field(
        0.0, ge=0, examples=[365],
        description="days after which a finished document's journal row is compacted (its timings, planned "
        "names and error dropped; path, size, mtime, sha256 and outputs kept, so it is still known and still "
        "found as a duplicate); 0 = never",
    )
    maintenance_interval: float = Field(
        86400.0, ge=0, examples=[3600, 0],
        description="seconds between retention runs (raw/ pruned, rows compacted, the SQLite journal vacuumed "
        "when a fifth of it is free pages, the state folder's size recorded for `status`); 0 = never",
    )
    journal_url: str | None = Field(
        None, examples=["postgresql://ocr@db.example/ocr", "postgresql:///ocr?host=/run/postgresql"],
        description="the journal: `null` = SQLite in `state_dir` (one daemon host); a `postgresql://` URL = one "
        "journal shared by several daemon hosts on one inbox (docs/scaling.md; needs `pip install ocr-daemon[postgres]`)",
    )
    # 30 s: renewed every lease/3 (10 s), so a daemon misses two renewals (a long pause, a flaky
    # link) before another takes its documents, and one killed is taken over within ~30-40 s.
    journal_lease: float = Field(
        30.0, ge=1, le=3600, examples=[60],
        description="seconds a daemon holds a document of a shared (`journal_url`) journal without renewing its "
        "lease; a daemon silent longer loses it to another, which resumes from the journal's finished pages",
    )
    # false only to measure what the per-page commits cost (bench/bench_journal_pages.py)
    page_records: bool = Field(
        True, examples=[False],
        description="commit each finished page to the journal: a document resumes from its done pages after a crash, "
        "kill or restart; page progress in `status`",
    )
