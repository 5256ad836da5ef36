"""The Pixtral encoder modes other than the default, each in a fresh engine process: ``per_image``
(the earlier patch: the encoder image by image) runs in vLLM's engine core and reads every page;
``off`` (vLLM's encoder as shipped, the bench's stock-encoder row) patches nothing and reads every
page. ``varlen`` is checked in test_a (engine core) and test_c (against vLLM's masked attention)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from daemon.engines.pixtral_patch import ENV, read_marks

pytestmark = pytest.mark.gpu
PROBE = Path(__file__).with_name("pixtral_probe.py")


def run_probe(model: Path, mode: str, marker: Path) -> dict:  # type: ignore[type-arg]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop(ENV, None)  # the config's mode, not the device script's fallback
    proc = subprocess.Popen([sys.executable, str(PROBE), str(model), mode, str(marker)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=480)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the probe and its engine core
        out, _ = proc.communicate()
        raise AssertionError(f"probe ({mode}) timed out:\n{out[-4000:]}") from None
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, out[-4000:]
    line = next((x for x in reversed(out.splitlines()) if x.startswith("PROBE ")), None)
    assert line, out[-4000:]
    return json.loads(line[len("PROBE "):])  # type: ignore[no-any-return]


def test_per_image_mode_runs_in_the_engine_core(dummy_model: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker.jsonl"
    got = run_probe(dummy_model, "per_image", marker)
    assert got["applied"] == "per_image"
    assert len(got["texts"]) == 6 and all(t.strip() for t in got["texts"])
    marks = read_marks(marker)
    assert marks, "per_image was applied in the probe but no engine process ran it"
    assert all(m.mode == "per_image" and m.pid != got["pid"] for m in marks), marks


def test_off_mode_runs_vllms_own_encoder(dummy_model: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker.jsonl"
    got = run_probe(dummy_model, "off", marker)
    assert got["applied"] is None
    assert len(got["texts"]) == 6 and all(t.strip() for t in got["texts"])
    assert read_marks(marker) == []  # no patched encoder ran anywhere
