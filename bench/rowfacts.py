"""What a bench_gpu.py row really ran with, recorded beside its figures (CPU-side; unit-tested).

A row's figures mean something only with the settings in force, not the ones asked for:

- ``git_commit()``: the code measured. ``$OCR_BENCH_COMMIT`` (device_session.sh sets it; the device
  copy of the tree has no ``.git``), else ``git rev-parse HEAD`` (``-dirty`` with uncommitted
  changes to tracked files), else the file ``.bench-commit`` at the repository root, else
  ``unknown``.
- ``engine_log_facts(text)``: what vLLM's engine core chose and logged (attention backend, flash
  attention version, the encoder's attention) and the daemon's ``vLLM settings in force`` line
  (``daemon.engines.vllm_engine.settings_in_force``); the last of each (after a restart, the
  engine that ran last).
- ``own_log_text()``: this process's stdout when it is a file: device_session.sh's ``step`` sends a
  row's output there, the engine core's log lines included.
- ``patch_applied(marker)``: the Pixtral encoder that really ran, from the row's marker file
  (``daemon.engines.pixtral_patch.mark``): ``varlen/fa3``, ``per_image/sdpa``, or ``stock`` when no
  patched encoder ran (vLLM's own; also ``vllm serve``).
- ``daemon_facts(cfg, cpu_count)``: the daemon row's page guards, autorotate, workers (the
  effective numbers for ``0`` = auto), stability delay and sampling, from the config it loaded.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

_ATTN_RE = re.compile(r"Using (\S+) attention backend out of potential backends")
_FA_RE = re.compile(r"Using FlashAttention version (\d+)")
_ENCODER_RE = re.compile(r"Using (\S+) for MMEncoderAttention")
_IN_FORCE_RE = re.compile(r"vLLM settings in force: (\{.*\})")


def git_commit(root: Path = ROOT) -> str:
    env = os.environ.get("OCR_BENCH_COMMIT", "").strip()
    if env:
        return env
    try:
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
        if sha:
            return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    f = root / ".bench-commit"
    if f.is_file():
        return f.read_text(encoding="utf-8").strip() or "unknown"
    return "unknown"


def engine_log_facts(text: str) -> dict[str, Any]:
    """The engine's choices as logged (keys only for what the log says)."""
    out: dict[str, Any] = {}
    for key, rx in (("attention_backend", _ATTN_RE), ("flash_attn_version", _FA_RE), ("encoder_attention", _ENCODER_RE)):
        found = rx.findall(text)
        if found:
            out[key] = found[-1]
    if "flash_attn_version" in out:
        out["flash_attn_version"] = int(out["flash_attn_version"])
    settings = _IN_FORCE_RE.findall(text)
    if settings:
        with contextlib.suppress(ValueError):  # a line cut short: leave it out
            out["in_force"] = json.loads(settings[-1])
    return out


def own_log_text() -> str:
    try:
        p = Path(os.readlink("/proc/self/fd/1"))
    except OSError:
        return ""
    try:
        return p.read_text(encoding="utf-8", errors="replace") if p.is_file() else ""
    except OSError:
        return ""


def patch_applied(marker: Path) -> str:
    from daemon.engines.pixtral_patch import applied_summary, read_marks

    return applied_summary(read_marks(marker))


def daemon_facts(cfg: Any, cpu_count: int | None = None) -> dict[str, Any]:
    """``cfg``: the daemon row's loaded ``Config``. Workers as the daemon computes them for 0."""
    d, e = cfg.daemon, cfg.engine
    cpus = cpu_count or os.cpu_count() or 2
    return {
        "page_guards": e.debug.page_guards,
        "ignore_eos": e.debug.ignore_eos,
        "autorotate": e.autorotate,
        "crop_borders": e.crop_borders,
        "text_layer": e.text_layer,  # auto reads born-digital PDF pages without the engine
        # service.worker_count and the pipeline's render pool, for 0 (= auto)
        "workers": d.workers or max(4, e.vllm.max_pages_in_flight // 2),
        "render_workers": d.render_workers or max(1, cpus // 2),
        "stability_delay_s": cfg.inboxes[0].stability_delay,
        "sampling": {"temperature": e.sampling.temperature, "top_p": e.sampling.top_p, "max_tokens": e.sampling.max_tokens,
                     "ignore_eos": e.debug.ignore_eos},
    }


#: Keys of a row that are settings or provenance, not figures (left out of the report's notes).
SETTING_KEYS = frozenset({
    "row", "pages", "date", "run", "commit", "machine", "mbt", "seqs", "out_tokens", "profile", "patch", "patch_asked",
    "kv", "attn", "block", "render_nice", "in_force", "engine_log", "sampling", "daemon", "page_guards", "client", "vllm_args",
})


def settings_text(r: dict[str, Any]) -> str:
    """One report cell: the settings a row ran with (in force where recorded, else as asked)."""
    f = r.get("in_force") or {}
    log = r.get("engine_log") or {}
    patch = r.get("patch", "?")
    if r.get("patch_asked") and not str(patch).startswith(str(r["patch_asked"])) and not (patch == "stock" and r["patch_asked"] == "off"):
        patch = f"{patch} (asked {r['patch_asked']})"
    attn = log.get("attention_backend") or f.get("attention_backend") or r.get("attn", "auto")
    if "flash_attn_version" in log:
        attn = f"{attn}/FA{log['flash_attn_version']}"
    parts = [
        f"mbt={f.get('max_num_batched_tokens', r.get('mbt'))}", f"seqs={f.get('max_num_seqs', r.get('seqs'))}",
        f"kv={f.get('kv_cache_dtype', r.get('kv', 'auto'))}", f"block={f.get('block_size', r.get('block', 'default'))}",
        f"attn={attn}", f"encoder={patch}", f"profile={r.get('profile', 'default')}",
    ]
    s = r.get("sampling") or {}
    if s:
        parts.append(f"T={s.get('temperature')} top_p={s.get('top_p')} max_tokens={s.get('max_tokens')}"
                     + (" ignore_eos" if s.get("ignore_eos") else ""))
    d = r.get("daemon") or {}
    if d:
        parts.append(f"guards={'on' if d.get('page_guards') else 'off'} autorotate={'on' if d.get('autorotate') else 'off'} "
                     f"text_layer={d.get('text_layer', '?')} workers={d.get('workers')} render_workers={d.get('render_workers')}")
    if r.get("render_nice", "auto") != "auto":
        parts.append(f"render_nice={r['render_nice']}")
    if r.get("client"):
        parts.append(f"client: {r['client']}")
    commit = str(r.get("commit", "?"))
    parts.append(f"commit={commit[:10]}{'-dirty' if commit.endswith('-dirty') else ''}")
    return " ".join(parts)
