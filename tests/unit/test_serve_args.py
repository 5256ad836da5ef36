"""daemon.engines.serve: the ``vllm serve`` command with the daemon's engine settings (the served
engine itself runs on the GPU machine: tests/gpu/test_f, bench rows serve_*)."""

from __future__ import annotations

import importlib
import json
import shlex
import tomllib
from pathlib import Path

import pytest
import yaml

from daemon.config import EngineCfg
from daemon.engines.serve import main, serve_args
from daemon.engines.vllm_engine import engine_args

REPO = Path(__file__).resolve().parents[2]

#: vLLM 0.26.0's ``EngineArgs.add_cli_args`` flags these arguments may use (vllm/engine/arg_utils.py)
VLLM_026_FLAGS = {
    "--host", "--port", "--served-model-name", "--dtype", "--max-model-len", "--max-num-seqs",
    "--max-num-batched-tokens", "--gpu-memory-utilization", "--enforce-eager", "--no-enforce-eager",
    "--load-format", "--kv-cache-dtype", "--limit-mm-per-prompt", "--mm-processor-cache-gb",
    "--enable-prefix-caching", "--no-enable-prefix-caching", "--scheduling-policy", "--renderer-num-workers",
    "--attention-backend", "--block-size", "--kv-cache-memory-bytes", "--data-parallel-size",
    "--data-parallel-backend",
}


def flags(args: list[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    i = 1  # args[0]: the model
    while i < len(args):
        if i + 1 < len(args) and not args[i + 1].startswith("--"):
            out[args[i]] = args[i + 1]
            i += 2
        else:
            out[args[i]] = None
            i += 1
    return out


def test_the_daemons_fp8_settings_as_serve_flags() -> None:
    cfg = EngineCfg(kind="vllm", model="/srv/models/LightOnOCR-2-1B", vllm={"kv_cache_dtype": "fp8", "data_parallel_size": 1})
    args = serve_args(cfg, "0.0.0.0", 8001)
    f = flags(args)
    assert args[0] == "/srv/models/LightOnOCR-2-1B"
    assert set(f) <= VLLM_026_FLAGS, set(f) - VLLM_026_FLAGS
    assert (f["--host"], f["--port"]) == ("0.0.0.0", "8001")
    assert (f["--kv-cache-dtype"], f["--block-size"]) == ("fp8", "64")
    assert (f["--max-num-batched-tokens"], f["--max-num-seqs"]) == ("16384", "256")
    assert json.loads(f["--limit-mm-per-prompt"] or "") == {"image": 1}
    assert "--no-enable-prefix-caching" in f and f["--mm-processor-cache-gb"] == "0"
    assert f["--scheduling-policy"] == "priority"
    assert "--data-parallel-size" not in f
    # every engine argument of the in-process engine is said (model positional; log switches left to vLLM)
    said = {k.removeprefix("--").removeprefix("no-").replace("-", "_") for k in f}
    assert set(engine_args(cfg)) - said <= {"model", "disable_log_stats", "enable_log_requests"}


def test_several_gpus_and_the_16gb_profile() -> None:
    f = flags(serve_args(EngineCfg(kind="vllm", vllm={"profile": "16gb", "data_parallel_size": 2})))
    assert (f["--data-parallel-size"], f["--data-parallel-backend"]) == ("2", "mp")
    assert f["--kv-cache-memory-bytes"] == str(6 << 30)
    # the fraction is only vLLM's start-up check of free memory (vllm_engine.startup_utilization)
    assert 0 < float(f["--gpu-memory-utilization"] or "") < 0.92
    assert set(f) <= VLLM_026_FLAGS


def test_print_gives_a_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conf = tmp_path / "rules.yaml"
    conf.write_text(yaml.safe_dump({
        "engine": {"kind": "openai", "model": "/m", "vllm": {"data_parallel_size": 1}},
        "inboxes": [{"path": str(tmp_path / "in")}],
        "routes": [{"name": "all", "destination": str(tmp_path / "out")}],
    }))
    assert main(["--config", str(conf), "--port", "8123", "--print", "--", "--max-log-len", "10"]) == 0
    line = capsys.readouterr().out.strip()
    words = shlex.split(line)
    assert words[:3] == ["vllm", "serve", "/m"] and words[-2:] == ["--max-log-len", "10"]
    assert flags(words[2:])["--port"] == "8123"


def test_plugin_entry_point_is_declared_and_importable() -> None:
    eps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]["vllm.general_plugins"]
    mod, func = eps["ocr_daemon_pixtral"].split(":")
    assert callable(getattr(importlib.import_module(mod), func))
