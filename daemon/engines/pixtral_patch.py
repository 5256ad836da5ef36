"""Patch of vLLM 0.26's Pixtral vision encoder (LightOnOCR-2-1B's): attention without a dense mask.

vLLM encodes all images of an encoder step as one sequence with a dense block-diagonal mask:
memory and time quadratic in the images per step, and SDPA cannot use a flash kernel with a mask.
Block-diagonal attention over the concatenation equals full attention over each image separately,
so the patch computes the same function (``tests/gpu/test_c_pixtral_varlen_gpu.py`` compares it
with vLLM's masked attention).

Contract:
- ``patch_pixtral_attention(mode)`` patches the classes of ``vllm.model_executor.models.pixtral``
  (and HF's ``generate_block_attention_mask``) in this process; idempotent; returns the mode
  applied, or None when nothing was patched (``off``, or vLLM's code differs). Modes
  (``PIXTRAL_MODES``): ``varlen``, ``per_image``, ``off``.
- ``resolve_mode(configured)``: ``$OCR_DAEMON_PIXTRAL_PATCH`` when set (``0`` = off, ``1`` =
  varlen; the bench and device scripts use it), else the configured mode
  (``engine.vllm.pixtral_patch``).
- ``applied_mode()``: what this process patched (None: nothing).
- The engine core is a child process that vLLM forks after the patch, so it inherits the patched
  classes; it must be forked, not spawned, for that (vLLM spawns when CUDA is already initialised
  in the parent).
- Proof that it ran there: after ``set_marker(path)``, the first patched encoder call of each
  process appends one JSON line ``{"pid", "mode", "kernel"}`` to ``path`` (kernel: ``fa2``/``fa3``
  = flash attention's varlen kernel, ``sdpa``); ``read_marks(path)`` reads them back as
  ``EncoderMark`` rows. A process that never ran a patched encoder step writes nothing (vLLM's own
  encoder ran, or none). The tests and bench rows use it (``engine.debug.pixtral_marker``).
"""

from __future__ import annotations

import functools
import itertools
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

_PATCHED: str | None = None
PIXTRAL_MODES = ("varlen", "per_image", "off")
ENV = "OCR_DAEMON_PIXTRAL_PATCH"


def resolve_mode(configured: str = "varlen") -> str:
    """The mode to apply: ``$OCR_DAEMON_PIXTRAL_PATCH`` when set, else ``configured``."""
    return normalise_mode(os.environ.get(ENV) or configured)


def normalise_mode(mode: str) -> str:
    """``0``/``1`` -> ``off``/``varlen``; an unknown mode is logged and ``varlen`` used."""
    mode = {"0": "off", "1": "varlen"}.get(mode, mode)
    if mode not in PIXTRAL_MODES:
        log.warning("Pixtral patch mode %r unknown (want one of %s); using varlen", mode, PIXTRAL_MODES)
        mode = "varlen"
    return mode


def applied_mode() -> str | None:
    """The mode this process patched vLLM's Pixtral encoder with (None: not patched)."""
    return _PATCHED


# ----------------------------------------------------------------------------- marker

_MARKER: str | None = None  # file the first patched encoder call of each process appends to
_MARKED_PID = 0  # the process that wrote its line (a forked child inherits the parent's value)


@dataclass(frozen=True)
class EncoderMark:
    """One process that ran the patched encoder: its pid, the mode, the attention kernel."""

    pid: int
    mode: str
    kernel: str


def set_marker(path: str | os.PathLike[str] | None) -> None:
    """Have each process that runs the patched encoder say so in ``path`` (None: nobody)."""
    global _MARKER, _MARKED_PID
    _MARKER = os.fspath(path) if path is not None else None
    _MARKED_PID = 0


def mark(mode: str, kernel: str) -> None:
    """Append this process's line to the marker file, once per process (cheap after that)."""
    global _MARKED_PID
    pid = os.getpid()
    if _MARKER is None or pid == _MARKED_PID:
        return
    _MARKED_PID = pid
    try:
        with open(_MARKER, "a", encoding="utf-8") as f:  # one short write: lines of processes do not mix
            f.write(json.dumps({"pid": pid, "mode": mode, "kernel": kernel}) + "\n")
    except OSError as e:  # a diagnostic: never let it stop the encoder
        log.warning("Pixtral patch marker %s: %s", _MARKER, e)


def read_marks(path: str | os.PathLike[str]) -> list[EncoderMark]:
    """The marker file's rows (none when it does not exist); unreadable lines are skipped."""
    p = Path(path)
    if not p.exists():
        return []
    out = []
    for line in p.read_text(encoding="utf-8").splitlines():
        try:
            d = json.loads(line)
            out.append(EncoderMark(int(d["pid"]), str(d["mode"]), str(d["kernel"])))
        except (ValueError, KeyError, TypeError):
            continue
    return out


def applied_summary(marks: list[EncoderMark]) -> str:
    """``varlen/fa3``-style summary of what ran (``stock`` when no patched encoder ran)."""
    return ",".join(sorted({f"{m.mode}/{m.kernel}" for m in marks})) or "stock"


def _kernel() -> str:
    fa = _flash_varlen()
    return f"fa{fa[1]}" if fa is not None else "sdpa"


# ----------------------------------------------------------------------------- patch


class VarlenImages:
    """Stands in for Pixtral's dense block-diagonal mask: where each image starts and ends.

    ``cu_seqlens`` (int32, on the encoder's device) holds the cumulative patch counts, as flash
    attention's varlen kernels take them; ``sizes`` and ``max_seqlen`` stay on the host so the
    attention needs no device-to-host sync.
    """

    def __init__(self, sizes: list[int], device: Any) -> None:
        import torch

        self.sizes = list(sizes)
        self.max_seqlen = max(self.sizes)
        self.cu_seqlens = torch.tensor(list(itertools.accumulate(self.sizes, initial=0)), dtype=torch.int32, device=device)


@functools.cache  # looked up once per process, on the first encoder step (CUDA is up by then)
def _flash_varlen() -> tuple[Callable[..., Any], int | None] | None:
    """vLLM's bundled flash-attention varlen function and version (FA3 on Hopper), or None."""
    try:
        from vllm.v1.attention.backends.fa_utils import flash_attn_varlen_func, get_flash_attn_version

        version = get_flash_attn_version(head_size=64)
        from vllm.vllm_flash_attn import is_fa_version_supported

        if version is None or not is_fa_version_supported(version):
            return None
        return flash_attn_varlen_func, version
    except Exception as e:  # no CUDA flash-attention build on this GPU / platform
        log.info("Pixtral encoder: no varlen flash attention (%s); per-image SDPA", e)
        return None


def varlen_attention_forward(self: Any, hidden_states: Any, attention_mask: Any, position_embeddings: Any) -> Any:
    """``PixtralHFAttention.forward`` for a :class:`VarlenImages` "mask".

    Same computation as vLLM's forward (qkv projection, 2-D rotary, attention, output projection)
    but the attention runs once over all images with flash attention's varlen kernel
    (``cu_seqlens`` marks the images), or, where that kernel is missing, as one unmasked SDPA call
    per image. Only the attention is split: the projections and the MLP still see every image of
    the encoder step as one big batch.
    """
    import torch
    from vllm.model_executor.models import pixtral as vp

    batch, patches, _ = hidden_states.size()  # batch is 1: the images are concatenated
    qkv, _ = self.qkv_proj(hidden_states)
    q, k, v = qkv.chunk(3, dim=-1)
    q = q.view(batch, patches, self.n_heads, self.head_dim).transpose(1, 2)
    k = k.view(batch, patches, self.n_heads, self.head_dim).transpose(1, 2)
    cos, sin = position_embeddings
    q, k = vp.apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=0)
    fa = _flash_varlen()
    if fa is not None:
        fn, version = fa
        shape = (patches, self.n_heads, self.head_dim)
        out = fn(
            q.transpose(1, 2).reshape(shape),
            k.transpose(1, 2).reshape(shape),
            v.reshape(shape),
            max_seqlen_q=attention_mask.max_seqlen,
            cu_seqlens_q=attention_mask.cu_seqlens,
            max_seqlen_k=attention_mask.max_seqlen,
            cu_seqlens_k=attention_mask.cu_seqlens,
            causal=False,
            fa_version=version,
        )
    else:
        v = v.view(batch, patches, self.n_heads, self.head_dim).transpose(1, 2)
        parts = []
        for qi, ki, vi in zip(*(t.split(attention_mask.sizes, dim=2) for t in (q, k, v)), strict=True):
            parts.append(torch.nn.functional.scaled_dot_product_attention(qi, ki, vi))
        out = torch.cat(parts, dim=2).transpose(1, 2)
    out = out.reshape(batch, patches, self.n_heads * self.head_dim)
    attn_output, _ = self.o_proj(out)
    return attn_output, None


def patch_pixtral_attention(mode: str | None = None) -> str | None:
    """Replace the dense block-diagonal mask of vLLM's Pixtral encoder. Idempotent.

    vLLM 0.26 encodes all images of an encoder step as one sequence with a dense block-diagonal
    mask: memory and time quadratic in the images per step, and SDPA cannot use a flash kernel
    with a mask. Block-diagonal attention over the concatenation equals full attention over each
    image separately, so both modes compute the same function:

    - ``varlen`` (default): one flash-attention varlen call over all images of the step
      (vLLM's bundled FA3 on Hopper, FA2 on Ampere/Ada; per-image SDPA where neither exists); the
      projections and MLP run over all images at once.
    - ``per_image``: the whole encoder runs image by image without a mask (SDPA's flash kernel).
    - ``off``: vLLM's code as shipped.

    ``mode`` defaults to ``resolve_mode()`` (``$OCR_DAEMON_PIXTRAL_PATCH``, else ``varlen``); a
    mode given is applied as is.
    Returns the mode applied, or None if nothing was patched (off, or vLLM's code differs).
    """
    global _PATCHED
    if _PATCHED:
        return _PATCHED
    mode = normalise_mode(mode) if mode else resolve_mode()
    if mode == "off":
        return None
    try:
        import transformers.models.pixtral.modeling_pixtral as hf_pixtral
        from vllm.model_executor.models import pixtral as vp
    except Exception as e:  # vLLM layout changed: run unpatched
        log.warning("Pixtral attention patch not applied: %s", e)
        return None
    model_cls = getattr(vp, "PixtralHFVisionModel", None)
    attn_cls = getattr(vp, "PixtralHFAttention", None)
    orig_mask = getattr(hf_pixtral, "generate_block_attention_mask", None)
    if model_cls is None or attn_cls is None or orig_mask is None or getattr(vp, "USE_XFORMERS_OPS", False):
        return None

    if mode == "varlen":
        orig_attn = attn_cls.forward

        def varlen_mask(patch_embeds_list: list[int], tensor: Any) -> Any:
            mark("varlen", _kernel())
            return VarlenImages(patch_embeds_list, tensor.device)

        def attn_forward(self: Any, hidden_states: Any, attention_mask: Any, position_embeddings: Any) -> Any:
            if isinstance(attention_mask, VarlenImages):
                return varlen_attention_forward(self, hidden_states, attention_mask, position_embeddings)
            return orig_attn(self, hidden_states, attention_mask, position_embeddings)

        hf_pixtral.generate_block_attention_mask = varlen_mask
        attn_cls.forward = attn_forward
    else:
        orig_forward = model_cls.forward

        def one_block_mask(patch_embeds_list: list[int], tensor: Any) -> Any:
            if len(patch_embeds_list) == 1:
                return None  # one image: full attention, no mask -> flash kernel
            return orig_mask(patch_embeds_list, tensor)

        def forward(self: Any, pixel_values: list[Any], **kwargs: Any) -> Any:
            mark("per_image", "sdpa")
            if len(pixel_values) <= 1:
                return orig_forward(self, pixel_values, **kwargs)
            outs: list[Any] = []
            for pv in pixel_values:
                outs.extend(orig_forward(self, [pv], **kwargs))
            return tuple(outs)

        hf_pixtral.generate_block_attention_mask = one_block_mask
        model_cls.forward = forward
    _PATCHED = mode
    log.info("vLLM Pixtral encoder: %s attention without a dense mask", mode)
    return mode

