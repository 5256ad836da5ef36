#!/usr/bin/env bash
# Row gpu_tests of bench/device_session.sh: every test in tests/gpu/ on the one GPU, in four
# groups at once, plus bench/bench_cpu_cost.py (CPU only) beside them. Each group is one pytest
# process running its files one after the other; each engine core takes a fixed KV budget
# (tests/gpu/gpushare.py), so that no test's vLLM start is upset by another test's engine
# exiting. Run one after another they took 281 + 227 + 162 + 150 + 37 s (test_a, b, d, pdf, e in
# sessions A-C) plus test_c and test_f, more than a session's device time leaves beside the bench
# rows; the groups are about equally long (test_a + c; test_b; test_d + e + pdf; test_f).
#
#   bash bench/gpu_tests.sh OUTDIR [LIMIT_S]
#
# The first group starts at once; the others wait until its engine core has compiled and cached
# the model's graphs ("torch.compile took" in its log) or 150 s, so that they load vLLM's compile
# cache instead of writing the same files at the same time. Writes OUTDIR/gpu_<group>.log and
# OUTDIR/cpu_cost.jsonl; prints each group's pytest summary; exit 1 if any group failed.
set -u
out=${1:?OUTDIR}; limit=${2:-900}
mkdir -p "$out"
P="python -m pytest -q -p no:cacheprovider -rA -s"
declare -A FILES=(
  [a]="tests/gpu/test_a_vllm_engine_gpu.py tests/gpu/test_c_pixtral_varlen_gpu.py"
  [b]="tests/gpu/test_b_daemon_gpu.py"
  [d]="tests/gpu/test_d_pixtral_modes_gpu.py tests/gpu/test_e_data_parallel_gpu.py tests/gpu/test_pdf_vllm_gpu.py"
  [f]="tests/gpu/test_f_openai_fleet_gpu.py"
)
declare -A PIDS=()
start() {  # start GROUP: its pytest in its own process group, killed with everything in it at the limit
  local g=$1
  echo "=== gpu group $g start t=${SECONDS}s: ${FILES[$g]}"
  setsid timeout -k 10 $((limit - SECONDS)) $P ${FILES[$g]} > "$out/gpu_$g.log" 2>&1 &
  PIDS[$g]=$!
}
start a
OMP_THREAD_LIMIT=1 timeout 300 python bench/bench_cpu_cost.py --results "$out/cpu_cost.jsonl" > "$out/cpu_cost.log" 2>&1 &
cpu=$!
while [ $SECONDS -lt 150 ] && ! grep -q "torch.compile took" "$out/gpu_a.log" 2>/dev/null; do sleep 2; done
echo "group a compiled (or 150 s): t=${SECONDS}s"
for g in b d f; do start $g; done
rc=0
for g in a b d f; do
  wait "${PIDS[$g]}"; r=$?
  echo "=== gpu group $g rc=$r t=${SECONDS}s"
  grep -E "^(PASSED|FAILED|XFAIL|XPASS|ERROR|SKIPPED)|passed|failed" "$out/gpu_$g.log" | tail -12
  [ $r -eq 0 ] || rc=1
done
wait $cpu; echo "=== cpu_cost rc=$? t=${SECONDS}s"; tail -1 "$out/cpu_cost.jsonl" 2>/dev/null
# nothing of the tests may outlive them (the device kills stragglers only when the call returns)
pkill -9 -f '[V]LLM::' 2>/dev/null; pkill -9 -f '[d]aemon.engines.serve' 2>/dev/null; pkill -9 -f '[d]aemon run' 2>/dev/null
exit $rc
