#!/usr/bin/env bash
# Device call A: the benchmark rows, one machine, one engine setting (mbt 16384, seqs 256, 0.85).
source bench/device_env.sh
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee $OUT/gpu.txt
python -c "import vllm, torch, transformers; print('vllm', vllm.__version__, 'torch', torch.__version__, 'transformers', transformers.__version__)" | tee -a $OUT/gpu.txt
W=/tmp/bw; R=$OUT/results.jsonl
step pages 40 python bench/bench_gpu.py pages --dir $W --docs 32 --pages-per-doc 8
step engine 140 python bench/bench_gpu.py engine-async --dir $W --results $R
step daemon 165 python bench/bench_gpu.py daemon --dir $W --results $R
step seed 125 python bench/bench_gpu.py seed --dir $W --results $R --pages 12
step profile16 110 python bench/bench_gpu.py engine-async --dir $W --results $R --profile 16gb --pages 96
python bench/bench_gpu.py report --results $R | tee $OUT/report.md
