"""The daemon's HTML pages: the status page, the upload form and an upload's page, with the
pages-per-second SVG chart. Rendered on the server from the dicts ``daemon.http`` serves
as JSON too; no JavaScript (the pages reload themselves) and no template engine.

Contract:
- ``page_html(status, upload=...)``, ``upload_form_html(inboxes, max_mb=..., token=...)`` and
  ``upload_page_html(state)`` return a whole HTML document as a string. An upload's outputs are
  links to ``state["downloads"]`` (same order as ``outputs``) when the state has them; its text
  preview wraps (long lines and names never widen the page). Pure apart from
  ``upload_page_html`` reading the start of a finished upload's text output (``PREVIEW_CHARS``;
  not through a symbolic link).
- Every value from a document, a file name, the config or the journal goes through ``_e``
  (``html.escape`` with quotes): the pages show OCR text and names the daemon does not control.
- The pages need only ``style-src 'unsafe-inline'`` under the Content-Security-Policy the endpoint
  sends with them (no script, no external resource; forms post only to ``/upload``).
"""

from __future__ import annotations

import contextlib
import html
import os
import stat
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from daemon.config import InboxCfg
from daemon.models import DocState
from daemon.names import display

#: Characters of the text output shown on an upload's page.
PREVIEW_CHARS = 20_000

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:70em}
h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.1em;margin:1.4em 0 .4em}
table{border-collapse:collapse}td,th{padding:.25em .8em .25em 0;text-align:left;vertical-align:top}
th{font-weight:600;border-bottom:1px solid #ccc}.num{text-align:right;font-variant-numeric:tabular-nums}
.ok{color:#176117;font-weight:600}.bad{color:#a11;font-weight:600}.dim{color:#777}.stale{color:#a11}
progress{width:16em;height:1em}.reason{color:#a11}
pre{background:#f6f6f6;padding:.8em;overflow:auto;max-height:40em;white-space:pre-wrap;overflow-wrap:anywhere}
#outputs li,h1{overflow-wrap:anywhere}
"""


def _e(v: Any) -> str:
    return html.escape(str(v), quote=True)


def _duration(s: float | None) -> str:
    if s is None:
        return "—"
    s = int(s)
    return f"{s // 3600}h {s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m {s % 60:02d}s" if s >= 60 else f"{s}s"


def _doc(title: str, body: str, refresh: int | None) -> str:
    meta = f'<meta http-equiv="refresh" content="{refresh}">' if refresh else ""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">{meta}<title>{_e(title)}</title>'
            f'<meta name="viewport" content="width=device-width"><style>{_CSS}</style></head><body>{body}</body></html>')


def _rate_chart(history: list[dict[str, float]]) -> str:
    """Pages/s per minute as an inline SVG bar chart."""
    w, h, gap = 24, 60, 4
    top = max((b["pages_per_second"] for b in history), default=0.0) or 1.0
    bars = []
    for i, b in enumerate(history):
        bh = round(h * b["pages_per_second"] / top, 1)
        when = datetime.fromtimestamp(b["start"]).strftime("%H:%M")
        bars.append(f'<rect x="{i * (w + gap)}" y="{h - bh}" width="{w}" height="{bh}" fill="#3b73b9">'
                    f'<title>{when}: {b["pages_per_second"]:.2f} pages/s ({int(b["pages"])} pages)</title></rect>')
    width = len(history) * (w + gap)
    first = datetime.fromtimestamp(history[0]["start"]).strftime("%H:%M") if history else ""
    return (f'<svg role="img" aria-label="pages per second per minute" width="{width}" height="{h + 16}" '
            f'xmlns="http://www.w3.org/2000/svg"><line x1="0" y1="{h}" x2="{width}" y2="{h}" stroke="#999"/>'
            f'{"".join(bars)}<text x="0" y="{h + 13}" font-size="11" fill="#555">{first}</text>'
            f'<text x="{width}" y="{h + 13}" font-size="11" fill="#555" text-anchor="end">now · max {top:.2f} pages/s</text></svg>')


def _progress_cell(d: dict[str, Any]) -> str:
    total, done = d["pages_total"], d["pages_done"]
    if total is None:
        return '<progress></progress> <span class="dim">opening the file…</span>'
    pct = 100 * done / total if total else 0
    return (f'<progress max="{total}" value="{done}">{pct:.0f} %</progress> '
            f'<span class="progress-text">{done} / {total} pages ({pct:.0f} %)</span>')


def _attempts(r: dict[str, Any]) -> str:
    """``retrying: attempt 2 of 3, next try in 40s`` for a document waiting for another try."""
    of = f" of {r['max_attempts']}" if r.get("max_attempts") else ""
    wait = max(0.0, float(r["next_try"]) - time.time())
    when = f"next try in {_duration(wait)}" if wait > 0 else "being tried again"
    return f"retrying: attempt {r['attempts']}{of} failed, {when}"


def page_html(st: dict[str, Any], *, upload: bool) -> str:
    """The status page of ``ReadRoutes.status()``; ``upload``: link the upload form."""
    live = st["live"]
    ready = ('<span class="ok">ready</span>' if live["ready"]
             else f'<span class="bad">not ready</span> <span class="dim">{_e("; ".join(live["not_ready"]))}</span>')
    counts = st["counts"]

    rows = "".join(f'<tr><td>{s.value}</td><td class="num">{counts.get(s.value, 0)}</td></tr>' for s in DocState)
    docs = live["documents"]
    if docs:
        prog = "".join(
            f'<tr class="doc"><td class="name">{_e(d["name"])}</td><td>{_e(d["inbox"])}</td><td>{_progress_cell(d)}</td>'
            f'<td class="num">{d["pages_per_second"]:.2f}</td><td class="num">{_duration(d["eta_seconds"])}</td></tr>'
            for d in docs
        )
        progress = ('<table id="in-progress"><tr><th>document</th><th>inbox</th><th>progress</th><th>pages/s</th>'
                    f'<th>ETA</th></tr>{prog}</table>')
    else:
        progress = '<p class="dim" id="in-progress">nothing in progress</p>'
    fails = st["recent_failures"]
    retrying = st.get("retrying", [])
    waiting = st.get("waiting_for_space", [])
    if fails or retrying or waiting:
        # Documents waiting for another try are failures too until they pass: listed first, with
        # their attempt count and next try (a document retried without end is what this shows)
        rrows = "".join(
            f'<tr class="retrying"><td>{_e(Path(r["path"]).name)}</td><td class="reason">{_e(r["error"])}</td>'
            f'<td>{_e(_attempts(r))}</td></tr>' for r in retrying
        )
        wrows = "".join(  # a full or read-only destination: waits, never counted as a try
            f'<tr class="waiting"><td>{_e(Path(r["path"]).name)}</td><td class="reason">{_e(r["error"])}</td>'
            f'<td>waiting for space (not counted)</td></tr>' for r in waiting
        )
        frows = "".join(
            f'<tr class="failed"><td>{_e(Path(f["path"]).name)}</td><td class="reason">{_e(f["error"])}</td>'
            f'<td class="dim">failed{_e(", now at " + f["final_path"] if f["final_path"] else "")}</td></tr>'
            for f in fails
        )
        failures = (f'<table id="failures"><tr><th>file</th><th>reason</th><th>state</th></tr>{wrows}{rrows}{frows}</table>')
    else:
        failures = '<p class="dim" id="failures">no failures</p>'
    done = st.get("recent_done") or []
    if done:  # "where did my file go?": route, outputs' folder, where the original is now
        drows = "".join(
            f'<tr class="done"><td class="name">{_e(Path(d["path"]).name)}</td><td>{_e(d["route"] or "")}</td>'
            f'<td class="outputs">{_e(d["outputs_folder"] or "")}</td><td class="source">{_e(_source_now(d))}</td></tr>'
            for d in done
        )
        recent = ('<table id="recent-done"><tr><th>file</th><th>route</th><th>outputs in</th><th>original</th></tr>'
                  f'{drows}</table>')
    else:
        recent = '<p class="dim" id="recent-done">nothing finished yet</p>'
    up = '<p><a href="/upload">Try a file…</a></p>' if upload else ""
    hooks = _hooks_section(st.get("hooks") or {})
    fleet = _fleet_section(st) if "daemons" in st else ""  # a shared journal only (docs/scaling.md)
    body = f"""
<h1>ocr-daemon</h1>
<p>{ready} · engine <b>{_e(live["engine"])}</b> · up {_duration(live["uptime_seconds"])} ·
<b>{live["pages_per_second"]:.2f}</b> pages/s (last minute), {live["pages_per_second_5min"]:.2f} (5 min) ·
<span id="pages-since-start">{live["pages_since_start"]} pages since start
({live.get("text_layer_pages_since_start", 0)} read from text layers)</span></p>
{up}
<h2>Queue</h2>
<p id="queue"><b>{live["queue"]}</b> queued · <b>{live["processing"]}</b> processing · <b>{live["settling"]}</b> settling (waiting to be unchanged)</p>
<table id="counts"><tr><th>journal state</th><th class="num">documents</th></tr>{rows}</table>
<h2>In progress</h2>
{progress}
{fleet}
<h2>Pages per second, last {len(live["history"])} minutes</h2>
{_rate_chart(live["history"])}
<h2>Recently done</h2>
{recent}
<h2>Failures and retries</h2>
{failures}
{hooks}
<p class="dim">Reloads every 5 s · <a href="/status">/status</a> (JSON) · <a href="/metrics">/metrics</a> · <a href="/healthz/ready">/healthz/ready</a></p>
"""
    return _doc("ocr-daemon", body, refresh=5)


def _source_now(d: dict[str, Any]) -> str:
    now = d["source_now"]
    if now is None:
        return "deleted"
    return "kept" if now == d["path"] else f"moved to {now}"


def _fleet_section(st: dict[str, Any]) -> str:
    """A shared journal's daemons (``PostgresJournal.daemons``: host, pid, last heartbeat, pages/s,
    alive/stale/stopped) and every document in progress in the journal with the daemon holding it."""
    rows = "".join(
        f'<tr class="daemon {_e(d["state"])}"><td>{_e(d["host"])}</td><td class="num">{_e(d["pid"])}</td>'
        f'<td class="dim">{_e(d["state_dir"])}</td><td>{_e(d["state"])}</td>'
        f'<td class="num">{_duration(d["heartbeat_age_seconds"])} ago</td><td class="num">{d["pages_per_s"]:.2f}</td>'
        f'<td class="num">{_e(d["pages_done"])}</td><td>{_e(", ".join(f"doc-{i}" for i in d["holding"]) or "—")}</td></tr>'
        for d in st["daemons"]
    )
    docs = "".join(
        f'<tr class="held"><td>doc-{_e(p["id"])}</td><td class="name">{_e(Path(p["path"]).name)}</td>'
        f'<td class="num">{_e(p["pages_done"])} / {_e("?" if p["pages_total"] is None else p["pages_total"])}</td>'
        f'<td class="holder">{_e(p.get("held_by") or "—")}</td></tr>'
        for p in st.get("in_progress", [])
    )
    held = (f'<table id="held"><tr><th>document</th><th>file</th><th>pages</th><th>held by (host:pid)</th></tr>{docs}</table>'
            if docs else '<p class="dim" id="held">nothing in progress in the journal</p>')
    return ('<h2>Daemons of the shared journal</h2><table id="daemons"><tr><th>host</th><th>pid</th><th>state folder</th>'
            '<th>state</th><th>last heartbeat</th><th>pages/s</th><th>pages done</th><th>holding</th></tr>'
            f'{rows}</table>{held}')


def _hooks_section(h: dict[str, Any]) -> str:
    """The on_done hooks' deliveries (``deliveries.summary``): counts, then pending and failed ones;
    nothing when no route ever had hooks."""
    if not (h.get("pending") or h.get("failed") or h.get("delivered")):
        return ""
    rows = "".join(
        f'<tr class="hook-{_e(d["state"])}"><td>doc-{_e(d["document_id"])}</td><td>{_e(d["kind"])} {_e(d["target"])}</td>'
        f'<td>{_e(d["state"])}, {_e(d["attempts"])} of {_e(d["max_attempts"])} tries</td>'
        f'<td class="reason">{_e(d["error"] or "")}</td></tr>'
        for d in [*h["pending_deliveries"], *h["failed_deliveries"]]
    )
    table = f'<table id="hooks"><tr><th>document</th><th>hook</th><th>state</th><th>last error</th></tr>{rows}</table>'
    return (f'<h2>Hooks</h2><p id="hook-counts"><b>{h["pending"]}</b> pending · <b>{h["failed"]}</b> failed · '
            f'<b>{h["delivered"]}</b> delivered</p>{table if rows else ""}')


def upload_form_html(inboxes: Sequence[InboxCfg], *, max_mb: int, token: str) -> str:
    """The upload form: an inbox to choose, the file, the per-process ``token``."""
    opts = "".join(f'<option value="{_e(ib.name)}">{_e(ib.name)} ({_e(display(ib.path))})</option>' for ib in inboxes)
    body = f"""
<h1>Try a file</h1>
<p>The file is dropped into the inbox you choose and goes the normal way: it waits until it is
complete, is journaled, OCRed and routed by <code>rules.yaml</code>. Largest file: {max_mb} MiB.</p>
<form method="post" action="/upload" enctype="multipart/form-data">
<input type="hidden" name="token" value="{_e(token)}">
<p><label>Inbox <select name="inbox">{opts}</select></label></p>
<p><input type="file" name="file" required></p>
<p><button type="submit">Upload</button></p>
</form>
<p><a href="/">Back to the status page</a></p>
"""
    return _doc("ocr-daemon: try a file", body, refresh=None)


def _read_start(path: str) -> str:
    """The first ``PREVIEW_CHARS`` characters of a text output: read without following a symbolic
    link (an output swapped for a link to a secret is not shown) and without reading all of it."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise OSError(0, "not a regular file")
        data = f.read(PREVIEW_CHARS * 4)  # UTF-8: at most 4 bytes a character
    return data.decode("utf-8", errors="replace")[:PREVIEW_CHARS]


def upload_page_html(state: dict[str, Any]) -> str:
    """An upload's page of ``UploadRoutes.state()``: reloads every 2 s until it is finished."""
    s = state["state"]
    finished = s in ("done", "duplicate", "failed", "superseded")
    lines = [f'<h1>{_e(state["name"])}</h1>', f'<p>inbox <b>{_e(state["inbox"])}</b> · state <b id="state">{_e(s)}</b></p>']
    if s == "settling":
        lines.append('<p class="dim">waiting until the file is unchanged (stability delay), then it is journaled</p>')
    if "progress" in state:
        lines.append(f"<p>{_progress_cell(state['progress'])}</p>")
    if state.get("error") and s in ("failed", "queued"):
        lines.append(f'<p class="reason">{_e(state["error"])}</p>')
    if s == "duplicate":
        lines.append(f'<p>the same content as doc-{_e(state["duplicate_of"])}: not OCRed again; its sidecar links to the earlier outputs</p>')
    if s == "done":
        lines.append(f'<p>language <b>{_e(state["language"])}</b> · type <b>{_e(state["doctype"])}</b> · '
                     f'route <b>{_e(state["route"])}</b> · {_e(state["pages"])} page(s)</p>')
    if s in ("done", "duplicate"):
        outs = state.get("outputs") or []
        links = state.get("downloads") or []
        items = [f'<li><a href="{_e(links[i])}" download>{_e(Path(o).name)}</a> <span class="dim">{_e(o)}</span></li>'
                 if i < len(links) else f"<li>{_e(o)}</li>" for i, o in enumerate(outs)]
        lines.append("<h2>Outputs</h2><ul id=\"outputs\">" + "".join(items) + "</ul>")
        text = next((o for o in outs if o.endswith(".txt")), None) or next((o for o in outs if o.endswith(".md")), None)
        if text:
            with contextlib.suppress(OSError):
                preview = _read_start(text)
                lines.append(f"<h2>{_e(Path(text).name)}</h2><pre>{_e(preview)}</pre>")
    lines.append('<p><a href="/">Status page</a> · <a href="/upload">another file</a></p>')
    return _doc(f"ocr-daemon: {state['name']}", "\n".join(lines), refresh=None if finished else 2)
