#!/usr/bin/env bash
# The project's test command (README "Run the tests"): installs what the tests need -- Debian
# packages included -- into this machine and a venv at .venv, then runs the linters and pytest.
# Usage: bash tests/run.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  # OCR: Tesseract + the 11 languages + orientation/script detection
  tesseract-ocr tesseract-ocr-osd tesseract-ocr-eng tesseract-ocr-chi-sim tesseract-ocr-chi-tra
  tesseract-ocr-jpn tesseract-ocr-fra tesseract-ocr-deu tesseract-ocr-spa tesseract-ocr-ita
  tesseract-ocr-nld tesseract-ocr-por tesseract-ocr-swe tesseract-ocr-dan
  # vertical (tategaki) Japanese and Chinese: the _vert models (daemon.engines.tessplan.VERT_MODELS)
  tesseract-ocr-jpn-vert tesseract-ocr-chi-sim-vert tesseract-ocr-chi-tra-vert
  # systemd-python builds against libsystemd; systemd-analyze checks the unit
  libsystemd-dev pkg-config systemd
  # tests/e2e/test_install.py runs install.sh --no-apt: a venv from Debian's python3, in which pip
  # builds systemd-python (headers + compiler); libseccomp2 for the unit's sandbox emulation
  python3-venv python3-dev gcc libseccomp2
  # fonts the tests use to draw multi-language documents (CJK included)
  fonts-noto-cjk fonts-dejavu-core
  # the tex writer's tests compile every .tex with xelatex (xeCJK for CJK, multirow/longtable;
  # texlive-xetex pulls in texlive-latex-extra and fonts-lmodern)
  # (xeCJK needs ctexhook.sty, which Debian ships in texlive-lang-chinese)
  texlive-xetex texlive-lang-cjk texlive-lang-chinese
  # tests/e2e/test_http.py renders the status page in a real headless browser
  chromium
  # the pdf output: pdftotext/pdfinfo check the text layer, Ghostscript makes PDF/A, a headless
  # Chromium opens the PDF in pdf.js (Debian libjs-pdf; tests/e2e/test_pdf_viewer.py)
  poppler-utils ghostscript libjs-pdf
  # the shared journal's tests start a real PostgreSQL server (tests/pgserver.py)
  postgresql
  # promtool checks and unit-tests the shipped alert rules (tests/unit/test_monitoring.py)
  prometheus
)
missing=()
for p in "${APT_PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "tests/run.sh: installing Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then "$PY" -m venv .venv; fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[test]'

.venv/bin/ruff check daemon tests bench
.venv/bin/mypy daemon
# OMP_THREAD_LIMIT=1: Debian's Tesseract is ~8x slower on 2 cores with OpenMP threads on.
OMP_THREAD_LIMIT=1 .venv/bin/python -m pytest "$@"
