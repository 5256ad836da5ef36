"""bench/rowfacts.py and the CPU side of bench/bench_gpu.py: what a GPU bench row records about the
settings really in force (the rows themselves run on the GPU machine only)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))  # bench_gpu imports rowfacts as the script does
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


rowfacts = _load("rowfacts")
bench_gpu = _load("bench_gpu")

# lines as vLLM 0.26's engine core and the daemon write them (a restart logs them again)
LOG = """\
(EngineCore pid=4242) INFO 12-01 00:34:12 [cuda.py:317] Using TRITON_ATTN attention backend out of potential backends: ['FLASH_ATTN', 'TRITON_ATTN'].
2026-12-01 00:34:10 INFO daemon.engines.vllm_engine: vLLM settings in force: {"block_size": 16, "kv_cache_dtype": "auto"}
(EngineCore pid=4242) INFO 12-01 00:34:12 [mm_encoder_attention.py:230] Using AttentionBackendEnum.FLASH_ATTN for MMEncoderAttention.
(EngineCore pid=5151) INFO 12-01 00:40:01 [cuda.py:317] Using FLASH_ATTN attention backend out of potential backends: ['FLASH_ATTN', 'TRITON_ATTN'].
(EngineCore pid=5151) INFO 12-01 00:40:01 [flash_attn.py:593] Using FlashAttention version 3
2026-12-01 00:40:00 INFO daemon.engines.vllm_engine: vLLM settings in force: {"block_size": 64, "kv_cache_dtype": "fp8", "max_num_seqs": 256}
"""


def test_engine_log_facts_take_the_last_engine() -> None:
    f = rowfacts.engine_log_facts(LOG)
    assert f == {"attention_backend": "FLASH_ATTN", "flash_attn_version": 3, "encoder_attention": "AttentionBackendEnum.FLASH_ATTN",
                 "in_force": {"block_size": 64, "kv_cache_dtype": "fp8", "max_num_seqs": 256}}
    assert rowfacts.engine_log_facts("nothing logged") == {}


def test_commit_from_env_git_or_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OCR_BENCH_COMMIT", "abc123")
    assert rowfacts.git_commit(tmp_path) == "abc123"
    monkeypatch.delenv("OCR_BENCH_COMMIT")
    assert rowfacts.git_commit(tmp_path) == "unknown"  # no git, no file (the device's copy of the tree)
    (tmp_path / ".bench-commit").write_text("def456\n")
    assert rowfacts.git_commit(tmp_path) == "def456"
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "a.txt").write_text("1")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    sha = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert rowfacts.git_commit(repo) == sha
    (repo / "a.txt").write_text("2")
    assert rowfacts.git_commit(repo) == sha + "-dirty"


def test_patch_applied_from_the_marker(tmp_path: Path) -> None:
    m = tmp_path / "pixtral.jsonl"
    assert rowfacts.patch_applied(m) == "stock"  # nobody ran a patched encoder
    m.write_text('{"pid": 11, "mode": "varlen", "kernel": "fa3"}\n')
    assert rowfacts.patch_applied(m) == "varlen/fa3"


def test_daemon_row_config_and_the_facts_it_records(tmp_path: Path) -> None:
    """The daemon row's rules.yaml loads, carries the bench switches as engine.debug (no class
    state), and its recorded facts say guards off, autorotate off, 32 workers: not the defaults."""
    import yaml

    from daemon.config import load_config

    args = bench_gpu.parse_args(["daemon", "--dir", str(tmp_path), "--results", str(tmp_path / "r" / "results.jsonl"),
                                 "--kv-dtype", "fp8", "--pixtral-patch", "off", "--out-tokens", "500"])
    (tmp_path / "inbox").mkdir()
    conf = tmp_path / "rules.yaml"
    conf.write_text(yaml.safe_dump(bench_gpu.daemon_config(args, tmp_path)))
    cfg = load_config(conf)
    e = cfg.engine
    assert (e.debug.ignore_eos, e.debug.page_guards, e.debug.vllm_args) == (True, False, {"jit_monitor_verbose": True})
    assert e.debug.pixtral_marker == args.marker and Path(args.marker).parent == tmp_path / "r"
    assert (e.vllm.pixtral_patch, e.vllm.kv_cache_dtype, e.sampling.max_tokens) == ("off", "fp8", 500)
    facts = rowfacts.daemon_facts(cfg, cpu_count=16)
    assert facts == {"page_guards": False, "ignore_eos": True, "autorotate": False, "crop_borders": True, "text_layer": "ocr", "workers": 32,
                     "render_workers": 8, "stability_delay_s": 0.5,
                     "sampling": {"temperature": 0.2, "top_p": 0.9, "max_tokens": 500, "ignore_eos": True}}
    # the daemon's own rule for 0 (auto) workers
    cfg.daemon.workers = 0
    assert rowfacts.daemon_facts(cfg, cpu_count=16)["workers"] == e.vllm.max_pages_in_flight // 2


def test_engine_rows_config_carries_the_same_switches(tmp_path: Path) -> None:
    args = bench_gpu.parse_args(["vllm-engine", "--results", str(tmp_path / "results.jsonl"), "--iter-log"])
    cfg = bench_gpu.cfg_for(args)
    assert (cfg.debug.ignore_eos, cfg.debug.page_guards, cfg.sampling.max_tokens) == (True, False, 1000)
    assert cfg.debug.vllm_args == {}  # the engine rows set vLLM's logging on their own arguments
    assert cfg.vllm.pixtral_patch == "varlen" and cfg.debug.pixtral_marker == args.marker
    assert bench_gpu.sampling_fields(args) == {"temperature": 0.2, "top_p": 0.9, "max_tokens": 1000, "ignore_eos": True}


def test_report_cell_shows_what_ran() -> None:
    row = {"row": "daemon", "mbt": 16384, "seqs": 256, "kv": "fp8", "attn": "auto", "block": 64, "profile": "default",
           "patch_asked": "varlen", "patch": "per_image/sdpa", "commit": "0123456789abcdef-dirty",
           "in_force": {"block_size": 64, "kv_cache_dtype": "fp8", "max_num_seqs": 256, "max_num_batched_tokens": 16384},
           "engine_log": {"attention_backend": "FLASH_ATTN", "flash_attn_version": 3},
           "sampling": {"temperature": 0.2, "top_p": 0.9, "max_tokens": 1000, "ignore_eos": True},
           "daemon": {"page_guards": False, "autorotate": False, "workers": 32, "render_workers": 8}}
    s = rowfacts.settings_text(row)
    for part in ("kv=fp8", "block=64", "attn=FLASH_ATTN/FA3", "encoder=per_image/sdpa (asked varlen)", "guards=off",
                 "autorotate=off", "workers=32", "max_tokens=1000 ignore_eos", "commit=0123456789-dirty"):
        assert part in s, (part, s)
    stock = rowfacts.settings_text({"row": "seed", "patch": "stock", "patch_asked": "off", "client": "one page at a time"})
    assert "encoder=stock" in stock and "asked" not in stock and "client: one page at a time" in stock
