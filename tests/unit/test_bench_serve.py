"""The CPU side of bench/bench_serve.py (the serve rows run on the GPU machine): the server's
/metrics split and the configs the rows write (the server's flags, the daemon's openai section)."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))  # bench_serve imports bench_gpu and rowfacts as the script does

import bench_gpu  # noqa: E402
import bench_serve  # noqa: E402

SCRAPE = """# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.5",model_name="m"} 3.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="m"} 12.5
vllm:time_to_first_token_seconds_count{engine="0",model_name="m"} 5.0
vllm:time_to_first_token_seconds_sum{engine="1",model_name="m"} 7.5
vllm:time_to_first_token_seconds_count{engine="1",model_name="m"} 5.0
vllm:request_queue_time_seconds_sum{engine="0",model_name="m"} 2.0
vllm:request_queue_time_seconds_count{engine="0",model_name="m"} 10.0
vllm:request_prefill_time_seconds_sum{engine="0",model_name="m"} 4.0e+00
vllm:request_prefill_time_seconds_count{engine="0",model_name="m"} 10.0
"""


def test_metric_sums_add_up_every_engine_and_split_gives_means() -> None:
    before = bench_serve.metric_sums("")
    after = bench_serve.metric_sums(SCRAPE)
    assert after["time_to_first_token_seconds_sum"] == 20.0 and after["time_to_first_token_seconds_count"] == 10.0
    split = bench_serve.split_of(before, after)
    assert split == {"time_to_first_token_mean_s": 2.0, "request_queue_time_mean_s": 0.2,
                     "request_prefill_time_mean_s": 0.4, "requests": 10.0}


def test_rows_write_the_daemons_fp8_settings_and_an_openai_daemon(tmp_path: Path) -> None:
    from daemon.config import load_config
    from daemon.engines.serve import serve_args

    args = bench_gpu.parse_args(["serve", "--kv-dtype", "fp8", "--pixtral-patch", "varlen", "--results", str(tmp_path / "r.jsonl")])
    conf = bench_serve.serve_config(args, tmp_path / "serve.yaml")
    eng = load_config(conf).engine
    assert eng.vllm.pixtral_patch == "varlen" and eng.debug.pixtral_marker == args.marker
    assert eng.vllm.data_parallel_size == 1  # a row's GPU count is what it names (--dp)
    served = serve_args(eng)
    for flag, val in (("--kv-cache-dtype", "fp8"), ("--block-size", "64"), ("--max-num-batched-tokens", "16384"),
                      ("--max-num-seqs", "256"), ("--load-format", "dummy")):
        assert served[served.index(flag) + 1] == val
    args.engine_kind, args.openai_url = "openai", "http://127.0.0.1:8790/v1"
    d = bench_gpu.daemon_config(args, tmp_path)
    assert d["engine"]["kind"] == "openai"
    assert d["engine"]["openai"] == {"base_urls": ["http://127.0.0.1:8790/v1"], "concurrency": 512, "timeout": 1800}
    assert d["engine"]["debug"]["ignore_eos"] is True
