#!/usr/bin/env bash
# Device call: engine smoke + GPU engine tests + first engine throughput rows.
source bench/device_env.sh
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee $OUT/gpu.txt
python -c "import vllm, torch, transformers; print('vllm', vllm.__version__, 'torch', torch.__version__, 'transformers', transformers.__version__)" | tee -a $OUT/gpu.txt
W=/tmp/bw; R=$OUT/results.jsonl
step pages 60 python bench/bench_gpu.py pages --dir $W --docs 32 --pages-per-doc 8
python -c "from daemon.engines.modelfolder import write_dummy_model; write_dummy_model(__import__('pathlib').Path('/tmp/dummymodel'))"
step proc_cost 40 python bench/proc_cost.py /tmp/dummymodel $W/png
step gpu_engine_tests 260 python -m pytest tests/gpu/test_a_vllm_engine_gpu.py -x -q -p no:cacheprovider
step engine_async_16k 170 python bench/bench_gpu.py engine-async --dir $W --results $R --mbt 16384
step engine_async_16k_noresize 120 python bench/bench_gpu.py engine-async --dir $W --results $R --mbt 16384 --no-resize
python bench/bench_gpu.py report --results $R
