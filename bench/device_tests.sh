#!/usr/bin/env bash
# Device call B: the GPU tests (daemon end to end + kill -9; then the engine tests if time is left).
source bench/device_env.sh
python -m pytest tests/gpu/test_b_daemon_gpu.py -q -p no:cacheprovider -rA 2>&1 | tee $OUT/gpu_tests.log | tail -15
step gpu_engine_tests 200 python -m pytest "tests/gpu/test_a_vllm_engine_gpu.py::test_pages_from_many_threads_come_back_in_place" -q -p no:cacheprovider -rA
tail -5 $OUT/gpu_engine_tests.log 2>/dev/null
