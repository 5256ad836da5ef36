"""``engine.kind: openai`` against a fleet of two real ``vllm serve`` processes on the one GPU.

Each server is ``python -m daemon.engines.serve`` (vLLM's OpenAI server with the daemon's engine
settings, the model card's flags docs/engines.md names and the Pixtral patch) on the dummy-weight model folder, each with the
GPU tests' fixed KV budget (``gpushare.gpu_slice``), started one after the other (the second loads
the compiled graphs the first wrote to vLLM's cache instead of writing the same files at the same
time). The daemon (``ocr-daemon run --engine openai``) gets both URLs. Checked: every page of every
document back in its place (sidecar sha256, page indices, texts), load spread (chat requests per
server counted from each server's access log), one server SIGKILLed mid-run (with its engine core)
loses no page, and once restarted it is probed back and takes pages again.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from gpu.gpushare import gpu_slice  # tests/ is on sys.path (tests/conftest.py)
from gpu.test_b_daemon_gpu import make_pdf

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parents[2]
PORTS = (8811, 8812)
CHAT = '"POST /v1/chat/completions'


def env() -> dict[str, str]:
    return dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")


class Server:
    """``python -m daemon.engines.serve`` on one port, in its own process group (the engine core too)."""

    def __init__(self, conf: Path, port: int, log: Path) -> None:
        self.port, self.log = port, log
        self.fh = open(log, "a")  # noqa: SIM115 - closed in kill()
        self.mark = log.stat().st_size
        self.proc = subprocess.Popen([sys.executable, "-m", "daemon.engines.serve", "--config", str(conf), "--port", str(port)],
                                     cwd=str(ROOT), env=env(), stdout=self.fh, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_healthy(self, timeout: float = 480) -> None:
        end = time.time() + timeout
        while time.time() < end:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2)
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise AssertionError(f"vllm serve :{self.port} exited {self.proc.returncode}:\n{self.text()[-4000:]}") from None
                time.sleep(1)
        raise AssertionError(f"vllm serve :{self.port} not healthy in time:\n{self.text()[-4000:]}")

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def chats(self, since: int = 0) -> int:
        return self.text()[since:].count(CHAT)

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)
        self.fh.close()


def write_configs(tmp: Path, model: Path) -> tuple[Path, Path]:
    serve = {"engine": {"kind": "vllm", "model": str(model), "debug": {"pixtral_marker": str(tmp / "pixtral.jsonl")},
                        "vllm": {"load_format": "dummy", **gpu_slice(), "max_num_seqs": 32,
                                 "data_parallel_size": 1}},
             "inboxes": [{"path": str(tmp / "unused")}], "routes": [{"name": "all", "destination": str(tmp / "unused")}]}
    daemon = {
        "daemon": {"state_dir": str(tmp / "state"), "failed_dir": str(tmp / "failed"), "workers": 6,
                   "render_workers": 2, "rescan_interval": 5, "log_level": "INFO", "http": None},
        # text_layer ocr: the test PDFs are born-digital; under the default auto the daemon would
        # read them from their text layer and send the servers nothing (as test_b found, e0ec28e)
        "engine": {"kind": "openai", "model": str(model), "sampling": {"max_tokens": 32}, "text_layer": "ocr",
                   "openai": {"base_urls": [f"http://127.0.0.1:{p}/v1" for p in PORTS], "concurrency": 32,
                              "retries": 4, "timeout": 300, "down_backoff": 1.0, "down_backoff_max": 8.0}},
        "inboxes": [{"path": str(tmp / "inbox"), "stability_delay": 0.5}],
        "routes": [{"name": "all", "formats": ["txt", "md", "json"], "destination": str(tmp / "out")}],
    }
    for d in ("inbox", "out", "state", "failed", "stage"):
        (tmp / d).mkdir(exist_ok=True)
    (tmp / "serve.yaml").write_text(yaml.safe_dump(serve))
    (tmp / "rules.yaml").write_text(yaml.safe_dump(daemon))
    return tmp / "serve.yaml", tmp / "rules.yaml"


def sidecars(out: Path) -> set[str]:
    return {p.stem for p in out.glob("*.json")}


def wait_for(pred, timeout: float, what: str, log: Path) -> None:  # type: ignore[no-untyped-def]
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return
        time.sleep(0.5)
    raise AssertionError(f"timeout waiting for {what}\n{log.read_text(errors='replace')[-4000:]}")


def drop(tmp: Path, docs: dict[str, int]) -> None:
    for stem, n in docs.items():
        make_pdf(tmp / "stage" / f"{stem}.pdf", n, stem)
    for stem in docs:
        os.rename(tmp / "stage" / f"{stem}.pdf", tmp / "inbox" / f"{stem}.pdf")


def check_document(tmp: Path, stem: str, pages: int) -> None:
    car = json.loads((tmp / "out" / f"{stem}.json").read_text())
    src = tmp / "inbox" / f"{stem}.pdf"
    assert car["sha256"] == hashlib.sha256(src.read_bytes()).hexdigest(), stem
    assert str(car["engine"]).startswith("openai:"), car["engine"]
    assert [p["index"] for p in car["pages"]] == list(range(pages)), (stem, car["pages"])
    assert len(car["page_texts"]) == pages and all(t.strip() for t in car["page_texts"]), stem


def test_daemon_on_two_vllm_servers_one_killed_and_back(tmp_path: Path, dummy_model: Path) -> None:
    serve_conf, conf = write_configs(tmp_path, dummy_model)
    logs = [tmp_path / f"serve-{p}.log" for p in PORTS]
    for lg in logs:
        lg.touch()
    servers: list[Server] = []
    daemon_log = tmp_path / "daemon.log"
    dfh = open(daemon_log, "a")  # noqa: SIM115 - closed below
    daemon = None
    try:
        for p, lg in zip(PORTS, logs, strict=True):  # one after the other (see the docstring)
            servers.append(Server(serve_conf, p, lg))
            servers[-1].wait_healthy()
        a, b = servers
        daemon = subprocess.Popen([sys.executable, "-m", "daemon", "run", "--config", str(conf), "--engine", "openai"],
                                  cwd=str(ROOT), env=env(), stdout=dfh, stderr=subprocess.STDOUT, start_new_session=True)
        wait_for(lambda: "initial scan" in daemon_log.read_text(errors="replace"), 120, "daemon ready", daemon_log)

        first = {f"first{i}": 4 for i in range(6)}
        drop(tmp_path, first)
        wait_for(lambda: sidecars(tmp_path / "out") >= set(first), 600, "first batch", daemon_log)
        spread = (a.chats(), b.chats())
        assert min(spread) >= 0.25 * sum(spread), f"load not spread: {spread} chat requests"

        second = {f"second{i}": 6 for i in range(12)}
        drop(tmp_path, second)
        wait_for(lambda: bool(sidecars(tmp_path / "out") & set(second)), 600, "first output of batch 2", daemon_log)
        b_before = b.chats()
        b.kill()  # SIGKILL: the API server and its engine core, requests in flight
        done_at_kill = sidecars(tmp_path / "out") & set(second)
        assert len(done_at_kill) < len(second), "batch 2 finished before the kill: nothing tested"
        wait_for(lambda: sidecars(tmp_path / "out") >= set(second), 900, "batch 2 after the kill", daemon_log)

        b2 = Server(serve_conf, PORTS[1], logs[1])
        servers.append(b2)
        b2.wait_healthy()
        wait_for(lambda: "answers again: back in use" in daemon_log.read_text(errors="replace"), 120,
                 "the restarted server probed back", daemon_log)
        third = {f"third{i}": 4 for i in range(6)}
        drop(tmp_path, third)
        wait_for(lambda: sidecars(tmp_path / "out") >= set(third), 600, "batch 3", daemon_log)
        b_after = b2.chats(b2.mark)
        assert b_after > 0, "the restarted server got no page"

        for docs in (first, second, third):
            for stem, n in docs.items():
                check_document(tmp_path, stem, n)
        assert not any((tmp_path / "failed").iterdir())
        print(f"\nchat requests: first batch A/B {spread}; B had {b_before} before its kill, "
              f"{len(done_at_kill)}/12 batch-2 documents out at the kill; restarted B took {b_after}; A {a.chats()} in all")
    finally:
        if daemon is not None and daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            try:
                rc = daemon.wait(120)
            except subprocess.TimeoutExpired:
                os.killpg(daemon.pid, signal.SIGKILL)
                rc = -9
        else:
            rc = daemon.returncode if daemon is not None else 0
        dfh.close()
        for s in servers:
            s.kill()
    assert rc == 0, daemon_log.read_text(errors="replace")[-3000:]
