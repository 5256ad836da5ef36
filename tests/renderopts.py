"""Render options for tests, built as the daemon builds them: from the config's ``engine``
section (``daemon.config.options.render_options``; the default config unless ``engine`` is given), with the
fields a test varies replaced (``autorotate=False``, ``dpi=300`` ...)."""

from __future__ import annotations

import dataclasses
from typing import Any

from daemon.config import EngineCfg
from daemon.config.options import render_options
from daemon.models import RenderOptions


def render_opts(engine_name: str = "", engine: EngineCfg | None = None, **changes: Any) -> RenderOptions:
    """The options the daemon renders with for ``engine_name`` ("": a VLM-like engine at
    ``engine.render_longest_edge``; "tesseract": at its dpi, reading first), then ``changes``."""
    opts = render_options(engine or EngineCfg(), engine_name, math_to_engine=False)
    return dataclasses.replace(opts, **changes)
