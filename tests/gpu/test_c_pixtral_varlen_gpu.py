"""The varlen Pixtral attention computes what vLLM's masked attention computes, on the GPU.

``varlen_attention_forward`` replaces vLLM 0.26's dense block-diagonal mask with one flash-attention
varlen call (or per-image SDPA). Both are checked against vLLM's own ``PixtralHFAttention.forward``
given the dense mask, on three images of different sizes (one of them page-sized: 110 x 84 patches).
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.gpu

SIZES = [110 * 84, 60 * 40, 23 * 31]  # patches per image: a 1540 x 1176 page, and two smaller ones
HEADS, HEAD_DIM = 16, 64


class _Proj:
    """Stands in for vLLM's parallel linear layers: ``(x @ w, None)``."""

    def __init__(self, w: Any) -> None:
        self.w = w

    def __call__(self, x: Any) -> tuple[Any, None]:
        return x @ self.w, None


class _Attn:
    """The attributes ``PixtralHFAttention.forward`` reads, with random weights."""

    def __init__(self, torch: Any) -> None:
        g = torch.Generator(device="cuda").manual_seed(0)
        hidden = HEADS * HEAD_DIM
        scale = hidden**-0.5
        self.qkv_proj = _Proj(torch.randn(hidden, 3 * hidden, generator=g, device="cuda", dtype=torch.bfloat16) * scale)
        self.o_proj = _Proj(torch.randn(hidden, hidden, generator=g, device="cuda", dtype=torch.bfloat16) * scale)
        self.n_heads, self.head_dim = HEADS, HEAD_DIM


def _inputs(torch: Any) -> tuple[Any, Any, Any]:
    g = torch.Generator(device="cuda").manual_seed(1)
    n = sum(SIZES)
    x = torch.randn(1, n, HEADS * HEAD_DIM, generator=g, device="cuda", dtype=torch.bfloat16)
    theta = torch.rand(n, HEAD_DIM // 2, generator=g, device="cuda") * 6.28
    angles = torch.cat([theta, theta], dim=-1)
    pe = (angles.cos().to(torch.bfloat16), angles.sin().to(torch.bfloat16))
    # the dense block-diagonal mask vLLM builds (transformers' generate_block_attention_mask)
    mask = torch.full((n, n), torch.finfo(torch.bfloat16).min, device="cuda", dtype=torch.bfloat16)
    start = 0
    for s in SIZES:
        mask[start : start + s, start : start + s] = 0
        start += s
    return x, pe, mask[None, None]


@pytest.mark.parametrize("kernel", ["flash", "sdpa"])
def test_varlen_attention_matches_vllm_masked_attention(kernel: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch
    from vllm.model_executor.models import pixtral as vp

    from daemon.engines import pixtral_patch as ve

    attn = _Attn(torch)
    x, pe, mask = _inputs(torch)
    if kernel == "sdpa":
        monkeypatch.setattr(ve, "_flash_varlen", lambda: None)  # as on a GPU without the kernel
    else:
        fa = ve._flash_varlen()
        assert fa is not None, "no flash-attention varlen kernel on this GPU"
        major = torch.cuda.get_device_capability()[0]
        assert fa[1] == (3 if major == 9 else fa[1]), f"Hopper should get FA3, got {fa[1]}"
    with torch.inference_mode():
        want, _ = vp.PixtralHFAttention.forward(attn, x, mask, pe)  # vLLM's code with the dense mask
        got, _ = ve.varlen_attention_forward(attn, x, ve.VarlenImages(SIZES, x.device), pe)
    assert got.shape == want.shape
    rel = ((got.float() - want.float()).norm() / want.float().norm()).item()
    assert rel < 2e-2, f"{kernel}: relative error {rel:.4f}"
    # and a wrong boundary must be caught: the same call with the images merged differs
    with torch.inference_mode():
        merged, _ = ve.varlen_attention_forward(attn, x, ve.VarlenImages([sum(SIZES)], x.device), pe)
    assert ((merged.float() - want.float()).norm() / want.float().norm()).item() > 0.1
