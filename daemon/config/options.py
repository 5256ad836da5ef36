"""Stage options built from the config: the one place a stage's options are read out of the
typed config models, so that a stage's record has no defaults of its own that could drift from
the config's (issue 36: ``RenderOptions`` once said 200,000,000 pixels where the schema said
100,000,000).

Contract: ``render_options(engine_cfg, engine_name, math_to_engine) -> RenderOptions``.
"""

from __future__ import annotations

from daemon.config.engine_schema import EngineCfg
from daemon.models import RenderOptions


def render_options(e: EngineCfg, engine_name: str, math_to_engine: bool) -> RenderOptions:
    """The options of the config's ``engine`` section for the engine ``engine_name``
    (Tesseract renders at ``engine.tesseract.render_dpi`` and reads first; a VLM engine,
    ``math_to_engine``, takes the pages whose text layer holds math as glyphs)."""
    return RenderOptions(
        longest_edge=e.render_longest_edge,
        max_pages=e.max_pages,
        max_ocr_pages=e.max_ocr_pages,
        max_image_pixels=e.max_image_pixels,
        autorotate=e.autorotate,
        crop_borders=e.crop_borders,
        deskew=e.deskew,
        text_layer=e.text_layer,
        math_to_engine=math_to_engine,
        dpi=e.tesseract.render_dpi if engine_name == "tesseract" else None,  # per-engine resolution
        read_first=engine_name == "tesseract",
    )
