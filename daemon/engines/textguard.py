"""Pure helpers shared by the VLM engines (vLLM in-process and OpenAI-compatible servers).

Contract:
- ``find_repetition(text)`` returns the index at which a degenerate loop starts (the text from
  there on is the same line or the same character n-gram repeated), or ``None``. Loops shorter
  than ``min_span`` characters or with fewer than ``min_repeats`` copies are not loops: tables and
  dotted leaders repeat a little, a stuck decoder repeats until ``max_tokens``.
- ``trim_repetition(text, start)`` keeps one copy of the looping unit.
- ``split_bands(image, n, overlap)`` cuts a page into ``n`` horizontal bands that overlap by
  ``overlap`` of the page height, so that a line cut at one band edge is whole in the other.
- ``join_bands(texts)`` concatenates band texts, dropping the lines that the overlap made appear
  at the end of one band and again at the start of the next (line-level, whitespace-insensitive).
- ``pad_to_multiple(image, m)`` pads the right/bottom edge with white up to a multiple of ``m`` px,
  so the vision processor needs no resampling (Pixtral works on 28 px cells: 14 px patches merged 2x2).
"""

from __future__ import annotations

from PIL import Image


def find_repetition(text: str, min_repeats: int = 4, min_span: int = 200, max_period: int = 400) -> int | None:
    """Start index of a loop at the end of ``text`` (see module contract), else ``None``."""
    n = len(text)
    if n < min_span:
        return None
    best: int | None = None
    # Character level: find the shortest period p such that text[i] == text[i - p] for a long tail.
    for p in range(1, min(max_period, n // min_repeats) + 1):
        i = n - 1
        while i - p >= 0 and text[i] == text[i - p]:
            i -= 1
        run = (n - 1 - i) + p  # length of the periodic tail, including the first copy
        if run >= min_span and run >= min_repeats * p:
            start = n - run
            # The run may begin with the tail of the line before the loop (".\n" matching the
            # unit's end): start the loop at a line start when the unit spans one.
            nl = text.find("\n", start, start + p)
            if nl != -1 and nl + 1 < n:
                start = nl + 1
            if best is None or start < best:
                best = start
            break  # the shortest period explains the tail; longer ones are multiples of it
    if best is not None:
        return best
    # Line level: the same line (after stripping) repeated at the end, with varying whitespace/numbers
    # of spaces that break exact periodicity.
    lines = text.rstrip().split("\n")
    last = lines[-1].strip()
    if not last:
        return None
    k = len(lines) - 1
    while k > 0 and lines[k - 1].strip() == last:
        k -= 1
    count = len(lines) - k
    span = sum(len(x) + 1 for x in lines[k:])
    if count >= max(min_repeats, 8) and span >= min_span:
        return sum(len(x) + 1 for x in lines[:k])
    return None


def trim_repetition(text: str, start: int, keep: int = 1) -> str:
    """Cut a loop found by ``find_repetition`` down to ``keep`` copies of its unit."""
    tail = text[start:]
    for p in range(1, len(tail) // 2 + 1):
        if tail[p:] == tail[:-p]:
            return text[: start + p * keep].rstrip()
    lines = tail.split("\n")
    return (text[:start] + "\n".join(lines[:keep])).rstrip()


def split_bands(image: Image.Image, n: int = 2, overlap: float = 0.08) -> list[Image.Image]:
    """Cut ``image`` into ``n`` overlapping horizontal bands, top to bottom."""
    if n <= 1:
        return [image]
    w, h = image.size
    ov = max(16, int(h * overlap))
    step = h / n
    bands = []
    for i in range(n):
        top = max(0, int(i * step) - (ov if i > 0 else 0))
        bottom = min(h, int((i + 1) * step) + (ov if i < n - 1 else 0))
        bands.append(image.crop((0, top, w, bottom)))
    return bands


def _norm(line: str) -> str:
    return " ".join(line.split())


def join_bands(texts: list[str], max_overlap_lines: int = 40) -> str:
    """Join band texts top to bottom without repeating the lines the overlap duplicated."""
    out: list[str] = []
    for t in texts:
        lines = t.strip("\n").split("\n")
        if not out:
            out = lines
            continue
        prev = [_norm(x) for x in out if x.strip()]
        cur_idx = [i for i, x in enumerate(lines) if x.strip()]
        cur = [_norm(lines[i]) for i in cur_idx]
        drop = 0
        for k in range(min(len(prev), len(cur), max_overlap_lines), 0, -1):
            if prev[-k:] == cur[:k]:
                drop = k
                break
        if drop:
            lines = lines[cur_idx[drop - 1] + 1 :]
        out.extend(lines)
    return "\n".join(out).strip("\n")


def pad_to_multiple(image: Image.Image, m: int = 28) -> Image.Image:
    """Pad right/bottom with white up to multiples of ``m`` px (no resampling of the content)."""
    w, h = image.size
    W, H = -(-w // m) * m, -(-h // m) * m
    if (w, h) == (W, H):
        return image
    canvas = Image.new("RGB", (W, H), (255, 255, 255))
    canvas.paste(image.convert("RGB"), (0, 0))
    return canvas
