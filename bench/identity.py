"""Are the outputs the same? The check behind issue 36's "behaviour unchanged" (a refactor must
give byte-identical outputs on the gate corpus and on bench/realdocs).

Runs ``ocr-daemon once --jsonl`` of a checkout (Tesseract, one route asking for every format:
txt md json csv xlsx tex pdf) over

- ``gate``: the CI gate's corpus (tests/gatecorpus.py, 66 generated documents, same bytes for the
  same seed), and/or
- ``realdocs``: every document of bench/realdocs/sources.yaml from its cache (bench/realdocs/fetch.py),

and writes a manifest: the sha256 of every output file, of every raw engine output kept in the
state folder (``raw/<id>/*.raw.md``) and of each document's ``once`` record. Two manifests are
compared with ``--compare A B`` (exit 1 and the differing files listed when they differ).

What is normalised, and why (found by running the same commit twice on the same inputs: only
these differ): the JSON sidecar's and the record's wall-clock figures (``seconds``, ``timings``,
``processed_at``) and the run's own folder in paths (and which of the ``--jobs`` runs read the document). Everything else -- PDF, XLSX, TeX, CSV,
Markdown, text -- is hashed byte for byte (the PDF and XLSX writers are deterministic: no
creation date, no random /ID; a second run of fcc3c19's successor 153d1a8 gave identical bytes).

Usage::

    python bench/identity.py --repo . --sets gate,realdocs --jobs 2 --out manifest.json
    python bench/identity.py --compare before.json after.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
VOLATILE = {"seconds", "processed_at", "timings"}
FORMATS = ["txt", "md", "json", "csv", "xlsx", "tex", "pdf"]


def _normalise(obj: Any, root: str) -> Any:
    if isinstance(obj, dict):
        return {k: ("<volatile>" if k in VOLATILE else _normalise(v, root)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_normalise(v, root) for v in obj]
    if isinstance(obj, str):
        # the documents are split over ``--jobs`` runs: which run read one is not an output
        return re.sub(r"/run\d+/", "/run/", obj.replace(root, "<run>"))
    return obj


def _digest(path: Path, root: str) -> str:
    data = path.read_bytes()
    if path.suffix == ".json":
        data = json.dumps(_normalise(json.loads(data), root), ensure_ascii=False).encode()  # key order kept: it is part of the bytes
    return hashlib.sha256(data).hexdigest()


def _gate_inputs(repo: Path, inbox: Path) -> list[Path]:
    sys.path.insert(0, str(repo / "tests"))
    import gatecorpus  # noqa: PLC0415 - the checkout's own tests folder

    return [inbox / d.name for d in gatecorpus.build(inbox)]


def _realdocs_inputs(cache: Path, inbox: Path) -> list[Path]:
    docs = yaml.safe_load((HERE / "realdocs" / "sources.yaml").read_text(encoding="utf-8"))
    docs = docs["documents"] if isinstance(docs, dict) else docs
    out = []
    for d in docs:
        src = cache / d["file"]
        if not src.exists():
            raise SystemExit(f"{src} missing: run bench/realdocs/fetch.py first")
        dst = inbox / d["file"]
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        out.append(dst)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    repo = args.repo.resolve()
    py = repo / ".venv" / "bin" / "python"
    tmp = Path(tempfile.mkdtemp(prefix="identity-"))
    manifest: dict[str, Any] = {"files": {}, "records": {}}
    try:
        jobs: list[subprocess.Popen[str]] = []
        for s in args.sets.split(","):
            inbox = tmp / s / "inbox"
            inbox.mkdir(parents=True)
            files = _gate_inputs(repo, inbox) if s == "gate" else _realdocs_inputs(args.cache, inbox)
            for j in range(args.jobs):
                part = files[j :: args.jobs]
                if not part:
                    continue
                run_dir = tmp / s / f"run{j}"
                run_dir.mkdir()
                rules = {
                    "daemon": {"state_dir": "state", "failed_dir": "failed", "workers": 1, "render_workers": 1, "http": None},
                    "engine": {"kind": "tesseract", "tesseract": {"threads": 1}},
                    "inboxes": [{"path": str(inbox)}],
                    "routes": [{"name": "all", "destination": "out", "formats": FORMATS}],
                }
                (run_dir / "rules.yaml").write_text(yaml.safe_dump(rules), encoding="utf-8")
                env = dict(os.environ, OMP_THREAD_LIMIT="1", PYTHONUNBUFFERED="1")
                log = (run_dir / "once.jsonl").open("w")
                jobs.append(subprocess.Popen(
                    [str(py), "-m", "daemon", "once", "--jsonl", *map(str, part), "--config", str(run_dir / "rules.yaml")],
                    cwd=repo, env=env, stdout=log, stderr=(run_dir / "stderr.log").open("w"), text=True))
        for p in jobs:
            p.wait(timeout=args.timeout)
        root = str(tmp)
        for run_dir in sorted(tmp.glob("*/run*")):
            s = run_dir.parent.name
            for line in (run_dir / "once.jsonl").read_text(encoding="utf-8").splitlines():
                rec = _normalise(json.loads(line), root)
                rec.pop("id", None)  # the journal's row id depends on how documents were split over jobs
                manifest["records"][f"{s}/{Path(rec['source']).name}"] = rec
            for f in sorted((run_dir / "out").rglob("*")) + sorted((run_dir / "state" / "raw").rglob("*.raw.md")):
                if f.is_file():
                    key = f"{s}/{f.relative_to(run_dir / 'out')}" if "out" in f.parts else f"{s}/raw/{f.name}"
                    manifest["files"][key] = _digest(f, root)
        manifest["documents"] = len(manifest["records"])
        manifest["done"] = sum(r["state"] == "done" for r in manifest["records"].values())
        return manifest
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print(f"kept {tmp}", file=sys.stderr)


def compare(a: Path, b: Path) -> int:
    ma, mb = (json.loads(p.read_text(encoding="utf-8")) for p in (a, b))
    for m in (ma, mb):  # manifests written before the run folder was normalised
        m["records"] = {k: _normalise(v, "<run>") for k, v in m["records"].items()}
    bad = []
    sets = {k.split("/")[0] for k in ma["records"]} & {k.split("/")[0] for k in mb["records"]}
    for part in ("files", "records"):
        for k in sorted(k for k in set(ma[part]) | set(mb[part]) if k.split("/")[0] in sets):
            if ma[part].get(k) != mb[part].get(k):
                bad.append(f"{part}: {k}: {'missing' if k not in ma[part] else ''}{'' if k in mb[part] else 'missing'}")
    print(f"sets compared: {sorted(sets)}")
    print(f"{a}: {len(ma['files'])} files, {ma['documents']} documents ({ma['done']} done)")
    print(f"{b}: {len(mb['files'])} files, {mb['documents']} documents ({mb['done']} done)")
    print("identical" if not bad else f"{len(bad)} differ:\n  " + "\n  ".join(bad))
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, default=Path.cwd())
    ap.add_argument("--sets", default="gate,realdocs")
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "ocr-daemon" / "realdocs")
    ap.add_argument("--jobs", type=int, default=2, help="once processes per set (documents split over them)")
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    args = ap.parse_args()
    if args.compare:
        return compare(*args.compare)
    m = run(args)
    commit = subprocess.run(["git", "-C", str(args.repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    m["commit"] = commit
    out = args.out or Path(f"identity-{commit}.json")
    out.write_text(json.dumps(m, indent=1, sort_keys=True), encoding="utf-8")
    print(f"{out}: {len(m['files'])} files, {m['documents']} documents, {m['done']} done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
