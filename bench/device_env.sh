# Sourced at the start of every device call (see bench/RESULTS.md): installs the carried wheels
# once (vLLM 0.26.0 + the daemon's runtime deps), sets the environment, and defines `step`,
# which runs a command only while enough of the call's time is left, logging to $OUT.
bash .devwh/install.sh >/dev/null || exit 1
# .devx/ (carried beside the parts when the wheel set has grown since .devwh was built): more
# wheels (bench/device-wheels.txt's newer lines) and Tesseract data for the pdf output's line boxes
if [ -d .devx/whl ] && [ ! -f /tmp/site/.extras ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .devx/whl/*.whl && touch /tmp/site/.extras
fi
[ -d .devx/tessdata ] && export TESSDATA_PREFIX=$PWD/.devx/tessdata
export PYTHONPATH=/tmp/site:$PWD VLLM_USE_FLASHINFER_SAMPLER=0 PATH=/tmp/site/bin:$PATH PYTHONUNBUFFERED=1
export TOKENIZERS_PARALLELISM=false
CALL_LIMIT=${CALL_LIMIT:-590}
# step NAME MAX_SECONDS CMD...: skipped when fewer than MAX_SECONDS remain before CALL_LIMIT
step() {
  local name=$1 max=$2; shift 2
  local left=$((CALL_LIMIT - SECONDS))
  if [ "$left" -lt 20 ]; then echo "SKIP $name (no time)"; return 0; fi
  [ "$max" -gt "$left" ] && max=$left
  echo "=== $name (limit ${max}s, t=${SECONDS}s)"
  timeout -k 5 "$max" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "=== $name rc=$rc t=${SECONDS}s"
  grep -h "^RESULT\|passed\|failed\|error" "$OUT/$name.log" | tail -5
  return 0
}
