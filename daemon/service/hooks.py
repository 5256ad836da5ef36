"""Hooks when a document is done (``routes[].on_done``): journaled, retried, never failing it.

Contract:
- ``record()`` is the pipeline's one call: it journals the document's deliveries (the route's
  hooks with their settings, the sidecar's path and bytes) BEFORE the document is recorded done
  (``daemon.journal.deliveries`` says why that loses none). A route without ``on_done`` costs a
  read, no write.
- ``Dispatcher`` delivers them on ``HOOK_THREADS`` daemon threads of the daemon: started by the
  service (resuming what a stop or crash left pending), woken when a document is done, and
  polling every ``POLL`` seconds for rows another process (``ocr-daemon once``) left. With a
  shared journal each delivery is claimed first (``deliveries.claim_due``): one daemon makes it,
  and another takes it over when the claimant's lease runs out. Each try's
  outcome is committed: delivered, failed (tries used up, or a webhook's permanent 4xx) or pending
  with the next try after an exponential backoff (``on_done.backoff`` doubling up to
  ``backoff_max``). ``run_now()``/``run_for_once()`` are ``ocr-daemon once``'s: the given
  documents' deliveries, in this thread, for at most ``wait`` seconds; ``status_lines()`` is
  ``ocr-daemon status``'s "hooks" section.
- ``exec``: the argv as given plus the sidecar's path, no shell; the sidecar's bytes on stdin;
  ``EXEC_ENV`` plus ``OCR_DAEMON_DOCUMENT_ID``/``OCR_DAEMON_SIDECAR``/``OCR_DAEMON_ATTEMPT``
  and nothing of the daemon's environment; working folder ``/``; its own process group, killed
  whole at the timeout; output (stdout and stderr, last ``OUTPUT_TAIL`` bytes) in the log when a
  try fails. Exit code 0 = delivered.
- ``webhook``: ``POST`` of the sidecar's bytes (``Content-Type: application/json``) with
  ``Idempotency-Key: <document id>`` -- the key is the body's ``document_id`` too -- by the
  standard library's ``urllib.request`` (no dependency for one POST; it brings proxies from the
  environment and TLS with the system's CAs); redirects are not followed (a POST of a document
  goes only where it was configured to). 2xx = delivered; 408/409/425/429 and 5xx, connection
  errors and timeouts are retried; any other answer fails the delivery at once.
- A failed hook never fails its document (the sidecar is written before the hook runs): it shows
  in the log, ``ocr-daemon status`` ("hooks"), ``/status`` (``hooks``) and ``/metrics``.
- Stop: tries still running ``STOP_GRACE`` seconds into a stop are cut off (an ``exec`` hook's
  process group is killed) and stay pending: the next start repeats them with the same key.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from daemon import __version__
from daemon.config import Config
from daemon.config.schema import RouteCfg
from daemon.errors import TransientError
from daemon.journal import deliveries
from daemon.journal.deliveries import Delivery, HookSpec, target_text
from daemon.journal.store import Journal
from daemon.models import format_duration
from daemon.names import for_log
from daemon.service import metrics
from daemon.stages import describe

log = logging.getLogger(__name__)

#: Deliveries made at once. Each try mostly waits (on a receiver, or on a command that may take
#: up to its timeout); 4 let one slow or unreachable receiver hold a thread while the others go
#: on, without starting more hook processes at once than a small server's cores.
HOOK_THREADS = 4
#: Seconds a stop waits for tries in progress before cutting them off (they are repeated at the
#: next start): a local receiver answers in milliseconds (docs/hooks.md has the measurement).
STOP_GRACE = 5.0
#: Seconds between looks at the journal when nothing wakes the dispatcher (rows another process,
#: ``ocr-daemon once``, planned; a wake-up missed).
POLL = 30.0
#: Bytes of a failed hook's output (or a webhook's answer) kept for the log and the error.
OUTPUT_TAIL = 2000
#: The environment of an ``exec`` hook (plus the three ``OCR_DAEMON_*`` variables): systemd's
#: default PATH, and UTF-8 for tools that read the JSON; nothing of the daemon's own.
EXEC_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
#: Webhook answers (besides 5xx) that a later try may get past: timeout, conflict (a request with
#: the same key still running), too early, too many requests.
RETRY_STATUS = frozenset({408, 409, 425, 429})


def specs_of(route: RouteCfg) -> list[HookSpec]:
    """The hooks of ``route`` as they are journaled (settings fixed at that moment)."""
    h = route.on_done
    if h is None:
        return []
    spec: list[HookSpec] = []
    if h.exec is not None:
        spec.append(HookSpec("exec", tuple(h.exec), h.timeout, h.attempts, h.backoff, h.backoff_max))
    if h.webhook is not None:
        spec.append(HookSpec("webhook", h.webhook, h.timeout, h.attempts, h.backoff, h.backoff_max))
    return spec


def record(journal: Journal, cfg: Config, doc_id: int, route: str, outputs: Sequence[Path]) -> int:
    """Journal the deliveries of a document whose outputs are written and which is about to be
    recorded done; how many. A repeat (crash, requeue) replaces the earlier ones."""
    rc = next((r for r in cfg.route_list() if r.name == route), None)
    hooks = specs_of(rc) if rc is not None else []
    if not hooks:
        if deliveries.of_document(journal, doc_id):  # a requeued document whose route has no hooks now
            deliveries.plan(journal, doc_id, route, [], Path(), b"")
        return 0
    sidecar = next((p for p in outputs if p.suffix == ".json"), None)
    if sidecar is None:  # the config requires json with on_done: only a bug gets here
        log.error("doc-%d: route %r has on_done hooks but wrote no sidecar: none run", doc_id, route)
        return 0
    try:
        payload = sidecar.read_bytes()
    except OSError as e:  # just written: a disk or permission problem, tried again with the document
        raise TransientError(f"cannot read the sidecar {for_log(sidecar.name)} for the on_done hooks: {e.strerror}") from e
    deliveries.plan(journal, doc_id, route, hooks, sidecar, payload)
    return len(hooks)


@dataclass(frozen=True)
class Result:
    """One try: delivered, or why not and whether another try could help."""

    ok: bool
    error: str = ""
    permanent: bool = False


class Dispatcher:
    """Delivers the journal's pending deliveries (see the module contract)."""

    def __init__(self, journal: Journal, threads: int = HOOK_THREADS) -> None:
        self.journal = journal
        self.threads = threads
        self._cv = threading.Condition()
        self._stop = threading.Event()
        self._in_flight: set[int] = set()
        self._procs: set[subprocess.Popen[bytes]] = set()
        self._procs_lock = threading.Lock()
        self._workers: list[threading.Thread] = []
        self._down = False  # the journal failed a read: its outage was logged (once)
        self._down_lock = threading.Lock()

    # -- the daemon's threads --------------------------------------------------------------

    def start(self) -> None:
        n = deliveries.pending_count(self.journal)
        if n:
            log.info("hooks: %d delivery(ies) pending from before this start; delivering them", n)
        for i in range(self.threads):
            t = threading.Thread(target=self._loop, name=f"hooks-{i}", daemon=True)
            t.start()
            self._workers.append(t)

    def wake(self) -> None:
        """A document was done: look for due deliveries now."""
        with self._cv:
            self._cv.notify()

    def stop(self, grace: float = STOP_GRACE) -> None:
        self._stop.set()
        with self._cv:
            self._cv.notify_all()
        deadline = time.monotonic() + grace
        for t in self._workers:
            t.join(timeout=max(0.0, deadline - time.monotonic()))
        with self._procs_lock:
            procs = list(self._procs)
        for p in procs:  # their tries are cut off and stay pending (repeated at the next start)
            _kill_group(p)
        for t in self._workers:
            t.join(timeout=2.0)
        left = sum(t.is_alive() for t in self._workers)
        if left:
            log.warning("hooks: %d delivery(ies) still running at the stop; they are repeated at the next start", left)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                with self._cv:
                    d, wait = self._claim()
                    self._journal_back()
                    if d is None:
                        self._cv.wait(timeout=wait)
                        continue
                    self._cv.notify()  # another thread may take the next due one
                try:
                    self.deliver(d)
                finally:
                    with self._cv:
                        self._in_flight.discard(d.id)
            except sqlite3.Error as e:  # the journal is away (an outage): one line for it, no traceback a try
                self._journal_away(e)
                self._stop.wait(STOP_GRACE)
            except Exception:  # a bug: never end the thread
                log.exception("hooks: dispatcher error; trying again in %.0fs", STOP_GRACE)
                self._stop.wait(STOP_GRACE)
        self.journal.close()  # this thread's connection

    def _journal_away(self, e: BaseException) -> None:
        """One log line per journal outage, whichever thread sees it first (issue 33: 40
        tracebacks in one outage, with no hook configured)."""
        with self._down_lock:
            first, self._down = not self._down, True
        if first:
            log.warning("hooks: cannot read the journal (%s); deliveries wait until it is back", e)

    def _journal_back(self) -> None:
        with self._down_lock:
            was, self._down = self._down, False
        if was:
            log.info("hooks: the journal is back; deliveries go on")

    def _claim(self) -> tuple[Delivery | None, float]:
        """(the next due delivery, marked in flight; 0) or (None, seconds until one may be due)."""
        now = time.time()
        got = deliveries.claim_due(self.journal, now, exclude=sorted(self._in_flight))  # one daemon each (shared)
        if got is not None:
            self._in_flight.add(got.id)
            return got, 0.0
        t = deliveries.next_try(self.journal, exclude=sorted(self._in_flight))
        return None, POLL if t is None else min(POLL, max(0.05, t - now))

    # -- one try -------------------------------------------------------------------------------

    def deliver(self, d: Delivery) -> str:
        """Make one try of ``d`` and commit its outcome: ``delivered``, ``retry``, ``failed``, or
        ``cut off`` (a stop interrupted it: left pending)."""
        what = f"{d.tag}: on_done {d.kind} {target_text(d.spec)}"
        if d.attempts >= d.spec.attempts:  # every try was cut off by a crash of the daemon
            res = Result(False, f"{d.error or 'its tries were cut off'}; the last of the {d.attempts} tries was cut off "
                                "by a crash of the daemon", permanent=True)
            attempt = d.attempts
            took = 0.0
        else:
            attempt = d.attempts + 1
            deliveries.started(self.journal, d.id, attempt)  # counted even if a crash cuts it off
            t0 = time.monotonic()
            try:
                res = self._exec(d, attempt) if d.kind == "exec" else _webhook(d, attempt)
            except Exception as e:  # a bug here must not lose the delivery or end the thread
                log.exception("%s: on_done %s: unexpected error", d.tag, d.kind)
                res = Result(False, f"internal error: {describe(e)}")
            took = time.monotonic() - t0
            if not res.ok and self._stop.is_set():  # not the hook's fault: this try does not count
                deliveries.started(self.journal, d.id, d.attempts)
                log.info("%s: try %d cut off by the stop; repeated at the next start", what, attempt)
                return "cut off"
        if res.ok:
            deliveries.delivered(self.journal, d.id, attempt)
            outcome = "delivered"
            log.info("%s delivered (try %d, %.2fs)", what, attempt, took)
        elif res.permanent or attempt >= d.spec.attempts:
            deliveries.failed(self.journal, d.id, attempt, res.error)
            outcome = "failed"
            why = "not retried" if res.permanent and attempt < d.spec.attempts else f"after {_tries(attempt)}"
            log.error("%s failed (%s; the document is done): %s", what, why, for_log(res.error))
        else:
            delay = d.spec.delay(attempt)
            deliveries.retry_later(self.journal, d.id, attempt, res.error, time.time() + delay)
            outcome = "retry"
            log.warning("%s: try %d of %d failed, next in %gs: %s", what, attempt, d.spec.attempts, round(delay, 1),
                        for_log(res.error))
        metrics.hook_delivery(d.kind, outcome)
        return outcome

    def _exec(self, d: Delivery, attempt: int) -> Result:
        assert isinstance(d.spec.target, tuple)
        argv = [*d.spec.target, os.fsdecode(d.sidecar)]
        env = {**EXEC_ENV, "OCR_DAEMON_DOCUMENT_ID": d.key, "OCR_DAEMON_SIDECAR": os.fsdecode(d.sidecar),
               "OCR_DAEMON_ATTEMPT": str(attempt)}
        with tempfile.TemporaryFile() as out:  # a file, not a pipe: a chatty hook cannot fill memory
            try:
                proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT, env=env,
                                        cwd="/", start_new_session=True)
            except (OSError, ValueError) as e:
                return Result(False, f"cannot run {argv[0]}: {getattr(e, 'strerror', None) or e}")
            with self._procs_lock:
                self._procs.add(proc)
            try:
                proc.communicate(d.payload, timeout=d.spec.timeout)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                return Result(False, f"timed out after {d.spec.timeout:g}s (killed){_tail(out)}")
            finally:
                with self._procs_lock:
                    self._procs.discard(proc)
            rc = proc.returncode
            if rc == 0:
                return Result(True)
            how = f"killed by {_signal_name(-rc)}" if rc < 0 else f"exit code {rc}"
            return Result(False, how + _tail(out))

    # -- ocr-daemon once -------------------------------------------------------------------------

    def run_now(self, doc_ids: Sequence[int], wait: float) -> dict[str, list[Delivery]]:
        """Deliver the deliveries of ``doc_ids`` in this thread, with their retries, for at most
        ``wait`` seconds (a try started in time runs to its own timeout); their rows by state."""
        deadline = time.monotonic() + wait
        while True:
            now = time.time()
            got = deliveries.claim_due(self.journal, now, doc_ids=doc_ids)
            if got is not None and time.monotonic() < deadline:
                self.deliver(got)
                continue
            t = deliveries.next_try(self.journal, doc_ids=doc_ids)
            if got is not None or t is None or time.monotonic() + (t - now) >= deadline:
                break
            time.sleep(max(0.0, t - now))
        by_state: dict[str, list[Delivery]] = {}
        for doc_id in doc_ids:
            for d in deliveries.of_document(self.journal, doc_id):
                by_state.setdefault(d.state, []).append(d)
        return by_state


def run_for_once(journal: Journal, doc_ids: Sequence[int], wait: float) -> list[str]:
    """``ocr-daemon once``: run the on_done hooks of the documents it finished (bounded by
    ``wait`` seconds; 0 = journal them only) and say what did not get delivered. ``once``'s
    default wait, 60 s, holds the first try and the retries of the default backoff (10 s, 20 s)
    when a receiver is briefly away; what is still pending is delivered by the daemon's next start."""
    if not doc_ids or not any(deliveries.of_document(journal, i) for i in doc_ids):
        return []
    if wait <= 0:
        return ["on_done hooks journaled, not run (--hooks-wait 0): the daemon delivers them at its next start"]
    by_state = Dispatcher(journal).run_now(doc_ids, wait)
    lines = [
        f"doc-{d.doc_id}: on_done {d.kind} {target_text(d.spec)} failed after {_tries(d.attempts)}: {d.error}"
        for d in by_state.get("failed", [])
    ]
    pending = by_state.get("pending", [])
    if pending:
        lines.append(f"{len(pending)} on_done delivery(ies) still pending after {wait:g}s: the daemon delivers them "
                     "at its next start (ocr-daemon status shows them)")
    return lines


def status_lines(h: dict[str, Any]) -> list[str]:
    """``ocr-daemon status``'s "hooks" section from ``deliveries.summary`` (nothing when no route
    ever had hooks)."""
    if not (h["pending"] or h["failed"] or h["delivered"]):
        return []
    lines = [f"hooks: {h['pending']} pending, {h['failed']} failed, {h['delivered']} delivered"]
    now = time.time()
    for d in h["pending_deliveries"]:
        wait = d["next_try"] - now
        when = f"next try in {format_duration(wait)}" if wait > 0 else "being tried now"
        last = f", try {d['attempts']} of {d['max_attempts']} failed: {d['error']}" if d["attempts"] else ""
        lines.append(f"  pending doc-{d['document_id']} {d['kind']} {d['target']}: {when}{last}")
    for d in h["failed_deliveries"]:
        lines.append(f"  failed  doc-{d['document_id']} {d['kind']} {d['target']} after {_tries(d['attempts'])}: "
                     f"{d['error']}")
    return lines


def _tries(n: int) -> str:
    return f"{n} tr{'y' if n == 1 else 'ies'}"


def _webhook(d: Delivery, attempt: int) -> Result:
    assert isinstance(d.spec.target, str)
    url, auth = _split_userinfo(d.spec.target)
    headers = {
        "Content-Type": "application/json", "Idempotency-Key": d.key, "User-Agent": f"ocr-daemon/{__version__}",
        "X-OCR-Daemon-Attempt": str(attempt),
    }
    if auth is not None:
        headers["Authorization"] = "Basic " + base64.b64encode(auth.encode("utf-8")).decode("ascii")
    req = urllib.request.Request(url, data=d.payload, headers=headers, method="POST")
    opener = urllib.request.build_opener(_NoRedirect)
    deadline = time.monotonic() + d.spec.timeout
    try:
        with opener.open(req, timeout=d.spec.timeout) as resp:
            while time.monotonic() < deadline and resp.read(65536):  # the answer is not used: drain it, bounded
                pass
            return Result(True)
    except urllib.error.HTTPError as e:
        body = b""
        with contextlib.suppress(Exception):
            body = e.read(OUTPUT_TAIL)
        text = body.decode("utf-8", "replace").strip()
        error = f"HTTP {e.code} {e.reason}" + (f": {text[:200]}" if text else "")
        return Result(False, error, permanent=not (e.code >= 500 or e.code in RETRY_STATUS))
    except urllib.error.URLError as e:
        return Result(False, f"cannot reach the receiver: {e.reason}")
    except TimeoutError:
        return Result(False, f"no answer within {d.spec.timeout:g}s")
    except Exception as e:  # connection reset, answer cut off (http.client), ...
        return Result(False, f"the connection failed: {describe(e)}")


def _split_userinfo(url: str) -> tuple[str, str | None]:
    """The URL without ``user:password@``, and ``user:password`` (for Basic auth) if it had one."""
    u = urlsplit(url)
    if u.username is None:
        return url, None
    host = u.netloc.rsplit("@", 1)[1]
    return urlunsplit((u.scheme, host, u.path, u.query, u.fragment)), f"{unquote(u.username)}:{unquote(u.password or '')}"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the 3xx comes back as an HTTPError: a failed delivery, not followed


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill a hook and whatever it started (its own process group), and reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


def _tail(f: Any) -> str:
    """``: <last bytes of the hook's output>`` (empty when it wrote nothing)."""
    try:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - OUTPUT_TAIL))
        text = f.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""
    return f": {text}" if text else ""


def _signal_name(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"
