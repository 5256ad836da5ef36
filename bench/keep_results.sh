#!/usr/bin/env bash
# After a device session (bench/device_session.sh): keep its raw results in the repository, in
# bench/results/<UTC date>/ (a second session of the same day: <date>-2, -3, ...), so that every
# figure bench/RESULTS.md quotes can be traced to the rows, commit and settings that gave it.
#
#   bash bench/keep_results.sh SRC [NAME]
#
# SRC: what the device call brought back (device_wait.sh: res.tgz, or a folder with
# results.jsonl, report.md, ...). Kept: results.jsonl (each row with its commit, run, settings in
# force and the Pixtral encoder applied), report.md, gpu.txt, sampler/attention rows, the Pixtral
# markers, and every log trimmed (no GPU-memory samples; the first 150 and last 250 lines).
set -eu
src=$1
name=${2:-$(date -u +%F)}
here=$(cd "$(dirname "$0")" && pwd)
dst=$here/results/$name
n=2
while [ -e "$dst" ]; do dst=$here/results/$name-$n; n=$((n + 1)); done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -f "$src" ]; then tar xzf "$src" -C "$tmp"; from=$tmp/res
elif [ -f "$src/res.tgz" ]; then tar xzf "$src/res.tgz" -C "$tmp"; from=$tmp/res
else from=$src; fi
mkdir -p "$dst/logs"
for f in results.jsonl report.md gpu.txt sampler.jsonl attention.jsonl; do
  if [ -f "$from/$f" ]; then cp "$from/$f" "$dst/"; fi
done
for f in "$from"/pixtral-*.jsonl; do
  if [ -f "$f" ]; then cp "$f" "$dst/"; fi
done
# the session's logs and those one folder down (gpu_tests/: bench/gpu_tests.sh's groups), same names
for f in "$from"/*.log "$from"/*/*.log; do
  [ -f "$f" ] || continue
  rel=${f#"$from"/}
  mkdir -p "$dst/logs/$(dirname "$rel")"
  grep -v '^GPUMEM' "$f" > "$tmp/log" || true
  if [ "$(wc -l < "$tmp/log")" -gt 400 ]; then
    { head -n 150 "$tmp/log"; echo "[... $(($(wc -l < "$tmp/log") - 400)) lines trimmed by keep_results.sh ...]"; tail -n 250 "$tmp/log"; } > "$dst/logs/$rel"
  else
    cp "$tmp/log" "$dst/logs/$rel"
  fi
done
echo "kept in $dst:"
ls -R "$dst"
