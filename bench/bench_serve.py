"""Row ``serve`` of bench/bench_gpu.py: one ``vllm serve`` with the daemon's engine settings, driven
(1) by a plain concurrent client posting all pages at once and (2) by the daemon (engine.kind openai).

    python bench/bench_gpu.py serve --dir W --results R --kv-dtype fp8 [--pixtral-patch off|varlen]
        [--pages N] [--also-pages M] [--client-only]

The server is ``python -m daemon.engines.serve`` (daemon/engines/serve.py): vLLM's own OpenAI
server with ``engine_args`` of the row's config (fp8 KV, block 64, max_num_batched_tokens 16384,
max_num_seqs 256 with ``--kv-dtype fp8``) and the Pixtral encoder of ``--pixtral-patch``
(``off`` = vLLM's as shipped: the ``serve`` row; ``varlen``: the ``serve_patched`` row of
bench/device_session.sh). Two rows are recorded, each with bench_gpu's facts (commit, run, the
encoder the engine core really ran from its marker, sampling) plus the server's command line
(``serve_args``):

- ``serve_client``: every page posted at once by 256 client threads (base64 PNG, one user message,
  the model card's sampling, ``ignore_eos``): what users of ``vllm serve`` do. Besides pages/s it
  records where the time went, from the server's Prometheus ``/metrics`` before and after the
  pass (mean per request: time to first token, queue, prefill, decode, and their sums) and the
  client's own PNG+base64 encoding time; that splits the gap to the in-process engine into input
  processing in the API server (in TTFT, before the queue), the encoder (prefill), and HTTP.
- ``serve_client_M`` (``--also-pages M``): the same client on the first M pages only, on the same
  server right after (for a ratio with a row that ran M pages);
- ``serve_daemon`` (left out with ``--client-only``): bench_gpu's daemon row (same PDFs, workers, forced output) with
  ``engine.kind: openai`` pointed at the server (``concurrency`` = ``--in-flight``).
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures as cf
import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent

#: histogram sums of vLLM 0.26's /metrics (vllm/v1/metrics/loggers.py) that split a request's time
METRICS = ("time_to_first_token_seconds", "request_queue_time_seconds", "request_prefill_time_seconds",
           "request_decode_time_seconds", "request_inference_time_seconds")


def metric_sums(text: str) -> dict[str, float]:
    """``{name_sum: total, name_count: total}`` over all label sets, for ``METRICS`` (pure)."""
    out: dict[str, float] = {}
    for name in METRICS:
        for suffix in ("_sum", "_count"):
            key = f"vllm:{name}{suffix}"
            vals = re.findall(rf"^{re.escape(key)}(?:\{{[^}}]*\}})? ([0-9.eE+-]+)$", text, re.M)
            out[name + suffix] = sum(float(v) for v in vals)
    return out


def split_of(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """Mean seconds per request of each METRICS histogram between two scrapes (pure)."""
    out: dict[str, float] = {}
    for name in METRICS:
        n = after[name + "_count"] - before[name + "_count"]
        if n > 0:
            out[name.replace("_seconds", "_mean_s")] = round((after[name + "_sum"] - before[name + "_sum"]) / n, 3)
    out["requests"] = after["request_queue_time_seconds_count"] - before["request_queue_time_seconds_count"]
    return out


def serve_config(args: argparse.Namespace, path: Path) -> Path:
    """The launcher's rules.yaml: the engine section of the bench rows (bench_gpu.cfg_for)."""
    from bench_gpu import cfg_for

    eng = cfg_for(args).model_dump(mode="json")
    path.write_text(yaml.safe_dump({"engine": eng, "inboxes": [{"path": str(path.parent / "unused-inbox")}],
                                    "routes": [{"name": "all", "destination": str(path.parent / "unused-out")}]}))
    return path


def _get(url: str, timeout: float = 5) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return str(r.read().decode())


def row_serve(args: argparse.Namespace) -> None:
    from bench_gpu import TEMPERATURE, TOP_P, GpuMem, _stop, load_pages, record, row_daemon
    from rowfacts import engine_log_facts, patch_applied

    from daemon.config import load_config
    from daemon.engines.serve import serve_args

    res_dir = Path(args.results).parent
    tag = "serve" if args.pixtral_patch == "off" else f"serve_{args.pixtral_patch}"
    conf = serve_config(args, res_dir / f"{tag}-rules.yaml")
    port = args.serve_port
    base = f"http://127.0.0.1:{port}"
    log_path = res_dir / f"{tag}-server.log"
    log = open(log_path, "w")  # noqa: SIM115 - closed in finally
    cmd = [sys.executable, "-m", "daemon.engines.serve", "--config", str(conf), "--port", str(port)]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("OCR_DAEMON_PIXTRAL_PATCH", None)  # the row's --pixtral-patch is in the config
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=str(ROOT), start_new_session=True)
    served = serve_args(load_config(conf).engine, "127.0.0.1", port)
    try:
        t0 = time.time()
        while True:
            try:
                _get(base + "/health", 2)
                break
            except OSError:
                if proc.poll() is not None:
                    raise SystemExit(f"server exited {proc.returncode}; see {log_path}") from None
                time.sleep(1)
        ready_s = round(time.time() - t0, 1)
        pages = load_pages(args)
        model = str(args.model)
        encode_s = 0.0

        def body(im: Any) -> bytes:
            nonlocal encode_s
            t = time.time()
            buf = io.BytesIO()
            im.save(buf, format="PNG", compress_level=3)
            url = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()
            encode_s += time.time() - t
            return json.dumps({"model": model, "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}],
                               "max_tokens": args.out_tokens, "temperature": TEMPERATURE, "top_p": TOP_P, "ignore_eos": True}).encode()

        def post(data: bytes) -> int:
            req = urllib.request.Request(base + "/v1/chat/completions", data=data, headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=1800) as r:
                return int(json.load(r)["usage"]["completion_tokens"])

        post(body(pages[0]))  # the server's first request (its one-time costs) outside the timing
        facts = {"server": {"command": ["vllm", "serve", *served], "ready_s": ready_s, "pixtral_patch_asked": args.pixtral_patch},
                 "engine_log": engine_log_facts(log_path.read_text(errors="replace")),
                 "sampling": {"temperature": TEMPERATURE, "top_p": TOP_P, "max_tokens": args.out_tokens, "ignore_eos": True}}
        def client_pass(row: str, batch: list[Any]) -> None:
            nonlocal encode_s
            encode_s = 0.0
            before = metric_sums(_get(base + "/metrics"))
            with GpuMem() as mem, cf.ThreadPoolExecutor(len(batch)) as pool:
                t1 = time.time()
                # every client thread encodes its own page and posts it: all pages in flight at once
                toks = list(pool.map(lambda im: post(body(im)), batch))
                dt = time.time() - t1
            split = split_of(before, metric_sums(_get(base + "/metrics")))
            record(args, {"row": row, "pages": len(batch), "seconds": round(dt, 2), "pages_per_s": round(len(batch) / dt, 3),
                          "out_tokens_total": sum(toks), "gpu_mem_peak_mib": mem.peak, "client": f"{len(batch)} threads, all pages at once",
                          "client_encode_s_total": round(encode_s, 2), "server_split": split},
                   {**facts, "patch": patch_applied(Path(args.marker))})

        client_pass(f"{tag}_client", pages)
        if args.also_pages and args.also_pages < len(pages):
            # the same server on fewer pages: to set beside a row that ran only that many (the
            # stock encoder's serve row runs 64 pages: it did not finish 256 in 179 s in-process)
            client_pass(f"{tag}_client_{args.also_pages}", pages[: args.also_pages])
        if args.client_only:
            return
        # the daemon against the same server
        args.engine_kind = "openai"
        args.openai_url = base + "/v1"
        args.row_name = f"{tag}_daemon"
        row_daemon(args)
    finally:
        _stop(proc, signal.SIGINT, 60)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # its engine core, in the same session
        log.close()
