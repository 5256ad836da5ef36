"""Route matching: which route a classified document takes, and where its outputs go.

Contract:
- ``match_route(route, ...)`` checks one route's ``match:`` conditions in a fixed order (inbox,
  subdir, filename, language, doctype, pages, has_table, has_math, review) and returns a ``RouteExplain`` whose
  ``reason`` names the first condition that failed ("" when it matched). A condition that is not
  set always passes; a route with no conditions matches everything.
- ``choose_route(cfg, ...)`` walks ``cfg.route_list()`` (the configured routes plus the built-in
  default when the last route is not a catch-all); the first match wins. It returns the
  ``RouteDecision`` with the destination and archive folders expanded, and one ``RouteExplain`` per
  route (all of them, also those after the winner, so ``route --explain`` can show them).
- ``subdir``: the inbox subfolder a file came from (``a/b`` for ``<inbox>/a/b/x.pdf``, ``""`` at
  the inbox's root or for a file outside every inbox), as paperless-ngx uses consume subfolders;
  ``choose_route`` works it out from the inbox's path. ``match.subdir`` globs it
  (case-insensitive, like filenames); ``{subdir}`` in a template keeps its folder levels, each
  sanitised like any other value (``""`` at the root: ``/out/{subdir}/x`` is then ``/out/x``).
- ``expand_template(template, fields)`` (:mod:`daemon.config.templates`, shared with the batch
  splitter) fills ``{inbox} {subdir} {language} {doctype} {yyyy} {mm} {dd} {stem}`` (processing
  date) and ``{doc_yyyy} {doc_mm} {doc_date}`` (the date printed on the document,
  ``Classification.doc_date``; ``undated`` when none was found), every value sanitised so that
  a file name or an inbox name can never steer outputs outside the template's folder.
- Filename globs match the file *name* (not the folder), case-insensitively.
- Confident filing (issue 32): ``confidence(cls, min_margin)`` says how far the doctype's score is
  above its threshold (``other``: how far the best score is below its own). A route that matches
  on ``doctype`` and would ``archive`` or ``delete`` the source acts on it only when that margin
  is at least the route's ``min_margin``; otherwise ``choose_route`` keeps the source where it is
  (the outputs still go to the route's destination) and puts the reason in
  ``RouteDecision.review_reasons``, which the sidecar writes as ``review_reasons`` with
  ``review: true``. A route that does not look at the doctype is not concerned. The sidecar's
  ``classification`` is ``RouteDecision.classification``.
- Pure functions: no file system access.
"""

from __future__ import annotations

import fnmatch
import logging
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from daemon.config import DEFAULT_ROUTE, Config, RouteCfg
from daemon.config.templates import expand_template, subdir_of
from daemon.models import Classification, RouteDecision

OTHER = "other"  # the doctype of a document no doctype claimed (daemon.understand.classify.OTHER)

log = logging.getLogger(__name__)


@dataclass
class RouteExplain:
    """Whether one route matched a document and, if not, why not (first failing condition)."""

    name: str
    matched: bool
    reason: str


def _fmt_list(values: list[str]) -> str:
    return "[" + ", ".join(values) + "]"


def match_route(
    route: RouteCfg, *, path: Path, inbox: str, cls: Classification, pages: int, subdir: str = "",
    review: bool = False,
) -> RouteExplain:
    """Check ``route.match`` against one document; see the module docstring."""
    m = route.match

    def no(reason: str) -> RouteExplain:
        return RouteExplain(route.name, False, reason)

    if m.inbox is not None and inbox not in m.inbox:
        return no(f"inbox {inbox!r} not in {_fmt_list(m.inbox)}")
    if m.subdir is not None and not any(fnmatch.fnmatchcase(subdir.lower(), g.lower()) for g in m.subdir):
        return no(f"subdir {subdir!r} matches none of {_fmt_list([repr(g) for g in m.subdir])}")
    if m.filename is not None:
        name = path.name.lower()
        if not any(fnmatch.fnmatchcase(name, g.lower()) for g in m.filename):
            return no(f"filename {path.name!r} matches none of {_fmt_list(m.filename)}")
    if m.language is not None and cls.language not in m.language:
        return no(f"language {cls.language!r} not in {_fmt_list(list(m.language))}")
    if m.doctype is not None and cls.doctype not in m.doctype:
        return no(f"doctype {cls.doctype!r} not in {_fmt_list(m.doctype)}")
    if m.pages is not None and not m.pages.contains(pages):
        lo = "" if m.pages.min is None else f"min {m.pages.min}"
        hi = "" if m.pages.max is None else f"max {m.pages.max}"
        return no(f"pages {pages} outside ({', '.join(x for x in (lo, hi) if x)})")
    if m.has_table is not None and cls.has_table != m.has_table:
        return no(f"has_table is {str(cls.has_table).lower()}, route wants {str(m.has_table).lower()}")
    if m.has_math is not None and cls.has_math != m.has_math:
        return no(f"has_math is {str(cls.has_math).lower()}, route wants {str(m.has_math).lower()}")
    if m.review is not None and review != m.review:
        return no(f"review is {str(review).lower()}, route wants {str(m.review).lower()}")
    return RouteExplain(route.name, True, "")


#: Template value of ``{doc_yyyy}``, ``{doc_mm}``, ``{doc_date}`` when no date was found.
UNDATED = "undated"


def template_fields(*, path: Path, inbox: str, cls: Classification, when: datetime, subdir: str = "") -> dict[str, str]:
    """The values a template may use for this document."""
    return {
        "inbox": inbox,
        "subdir": subdir,
        "language": cls.language,
        "doctype": cls.doctype,
        "yyyy": f"{when.year:04d}",
        "mm": f"{when.month:02d}",
        "dd": f"{when.day:02d}",
        "stem": path.stem,
        # The date printed on the document (an invoice from 2024 goes under 2024 whenever it is
        # filed); "undated" when none was found.
        "doc_yyyy": cls.doc_date[:4] if cls.doc_date else UNDATED,
        "doc_mm": cls.doc_date[5:7] if cls.doc_date else UNDATED,
        "doc_date": cls.doc_date or UNDATED,
    }


def confidence(cls: Classification, min_margin: float) -> dict[str, Any]:
    """The sidecar's ``classification``: ``{doctype, score, threshold, margin, min_margin,
    confident}`` (see the module docstring). ``score``/``threshold`` are the chosen doctype's, or
    for ``other`` the doctype that came closest to its threshold. Without scores (no doctypes
    configured, a duplicate that took its earlier document's doctype) nothing was weighed:
    ``margin`` None and confident."""
    scores, thresholds = cls.doctype_scores, cls.doctype_thresholds
    out: dict[str, Any] = {"doctype": cls.doctype, "score": None, "threshold": None, "margin": None,
                           "min_margin": min_margin, "confident": True}
    if cls.doctype in scores and cls.doctype in thresholds:
        score, thr = scores[cls.doctype], thresholds[cls.doctype]
        margin = score - thr
    elif cls.doctype == OTHER and scores and thresholds:
        near = max((n for n in scores if n in thresholds), key=lambda n: scores[n] - thresholds[n], default=None)
        if near is None:
            return out
        score, thr = scores[near], thresholds[near]
        margin = thr - score
    else:
        return out
    out.update(score=round(score, 2), threshold=thr, margin=round(margin, 2), confident=margin >= min_margin - 1e-9)
    return out


def choose_route(
    cfg: Config, *, path: Path, inbox: str, cls: Classification, pages: int, when: datetime, review: bool = False,
) -> tuple[RouteDecision, list[RouteExplain]]:
    """First matching route of ``cfg.route_list()`` and the explain rows of every route
    (``review``: the document needs review, daemon.quality.review)."""
    rows: list[RouteExplain] = []
    chosen: RouteCfg | None = None
    ib = cfg.inbox(inbox)
    subdir = subdir_of(path, ib.path if ib is not None else None)
    for r in cfg.route_list():
        row = match_route(r, path=path, inbox=inbox, cls=cls, pages=pages, subdir=subdir, review=review)
        rows.append(row)
        if row.matched and chosen is None:
            chosen = r
    if chosen is None:  # only possible if route_list() ever stops ending with a catch-all
        chosen = DEFAULT_ROUTE
    fields = template_fields(path=path, inbox=inbox, cls=cls, when=when, subdir=subdir)
    dest = path.parent if chosen.destination == "beside" else expand_template(chosen.destination, fields)
    source = chosen.source
    conf = confidence(cls, chosen.min_margin)
    reasons: list[str] = []
    if source != "keep" and chosen.match.doctype is not None and not conf["confident"]:
        # An unsure doctype must not move or delete the original (issue 32: a quarterly report
        # 0.5 over the bank-statement threshold was archived as a statement): keep it, ask for review.
        reasons.append(
            f"classification unsure: {cls.doctype} margin {conf['margin']:g} < {chosen.min_margin:g}; "
            f"route {chosen.name!r} would {source} the source, kept in place"
        )
        log.info("%s: %s", path.name, reasons[-1])
        source = "keep"
    archive_dir = None
    if source == "archive" and chosen.archive_to:
        archive_dir = path.parent if chosen.archive_to == "beside" else expand_template(chosen.archive_to, fields)
    decision = RouteDecision(
        name=chosen.name,
        formats=list(chosen.formats),
        destination=dest,
        source_action=source,
        archive_dir=archive_dir,
        csv_bom=chosen.csv_bom,
        classification=conf,
        review_reasons=reasons,
    )
    log.debug("route for %s: %s -> %s", path.name, chosen.name, dest)
    return decision, rows
