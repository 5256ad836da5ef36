"""CPU cost of the orientation stage (``daemon.pages.orient.upright_with_script``), and how often
the reading probe runs, on pages OSD places and on pages it cannot (issue 32).

Pages: the integration tests' dense two-column Danish page turned 0/90/180/270
(tests/integration/test_orientation_probe.py), docgen's upright sample pages in 8 languages, and
any page files given on the command line (e.g. bench/realdocs scans from its cache).

    OMP_THREAD_LIMIT=1 python bench/bench_orient_probe.py [FILE.png|.jpg ...]

Prints per page: the turn applied, OSD's script, whether the probe ran, CPU seconds.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "integration"))

import docgen  # noqa: E402
from test_orientation_probe import DA, two_columns  # noqa: E402

import daemon.pages.orient as orient  # noqa: E402


def main(argv: list[str]) -> int:
    calls: list[int] = []
    real = orient.probe_turn

    def counted(image: Image.Image, script: str = "") -> int | None:
        calls.append(1)
        return real(image, script)

    orient.probe_turn = counted  # type: ignore[assignment]
    pages: list[tuple[str, Image.Image]] = []
    dense = two_columns(DA)
    pages += [(f"two-column da turned {t}", dense.rotate(-t, expand=True)) for t in (0, 90, 180, 270)]
    with tempfile.TemporaryDirectory() as tmp:
        for lang in ("en", "de", "fr", "da", "sv", "it", "zh", "ja"):
            p = docgen.make_image(Path(tmp) / f"{lang}.png", "\n\n".join([docgen.SAMPLES[lang]] * 3))
            pages.append((f"upright {lang}", Image.open(p).convert("RGB")))
    pages += [(Path(a).name, Image.open(a).convert("RGB")) for a in argv]
    totals = {"probe": [0.0, 0], "no probe": [0.0, 0]}
    for name, img in pages:
        n = len(calls)
        t = time.process_time()
        _, turn, script = orient.upright_with_script(img)
        dt = time.process_time() - t
        probed = len(calls) > n
        totals["probe" if probed else "no probe"][0] += dt
        totals["probe" if probed else "no probe"][1] += 1
        print(f"{name:32s} turn {turn:3d} script {script or '-':9s} probe {'yes' if probed else 'no ':3s} {dt:5.2f} s CPU",
              flush=True)
    for k, (secs, n) in totals.items():
        if n:
            print(f"{k}: {n} pages, {secs / n:.2f} s CPU per page")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
