#!/usr/bin/env bash
# Device call: benchmark rows, same engine settings (mbt 16384, seqs 256, 0.85) for each.
# Usage: bash bench/device_final.sh [ROW...]  (default: engine daemon seed profile16)
# Budget per row on a fresh H200 (measured 2026-11-29): 60-115 s of vLLM import + engine start,
# then the pages (~50 s for 256 pages at 5 pages/s). Run at most two rows per 10-minute call.
source bench/device_env.sh
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee $OUT/gpu.txt
python -c "import vllm, torch, transformers; print('vllm', vllm.__version__, 'torch', torch.__version__, 'transformers', transformers.__version__)" | tee -a $OUT/gpu.txt
W=/tmp/bw; R=$OUT/results.jsonl
[ -d $W/pdf ] || step pages 60 python bench/bench_gpu.py pages --dir $W --docs 32 --pages-per-doc 8
for row in ${@:-engine daemon seed profile16}; do
  case $row in
    engine)    step engine 260 python bench/bench_gpu.py engine-async --dir $W --results $R ;;
    offline)   step offline 280 python bench/bench_gpu.py engine --dir $W --results $R ;;
    daemon)    step daemon 260 python bench/bench_gpu.py daemon --dir $W --results $R ;;
    seed)      step seed 220 python bench/bench_gpu.py seed --dir $W --results $R --pages 12 ;;
    profile16) step profile16 240 python bench/bench_gpu.py engine-async --dir $W --results $R --profile 16gb --pages 96 ;;
  esac
done
python bench/bench_gpu.py report --results $R | tee $OUT/report.md
