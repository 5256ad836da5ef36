#!/usr/bin/env bash
# Device call helper for bench/device_session.sh: wait up to $1 seconds for the session to end,
# then bring back what it has so far ($OUT/res.tgz, report.md, results.jsonl, session.log).
end=$((SECONDS + ${1:-560}))
while [ ! -f /tmp/res/DONE ] && [ $SECONDS -lt $end ]; do sleep 3; done
[ -f /tmp/res/DONE ] && echo "SESSION DONE" || echo "SESSION RUNNING"
cat /tmp/res/session.log 2>/dev/null | grep -v "^GPUMEM" | tail -40
cat /tmp/res/report.md 2>/dev/null
tar czf $OUT/res.tgz -C /tmp res 2>/dev/null
cp /tmp/res/report.md /tmp/res/results.jsonl /tmp/res/sampler.jsonl /tmp/res/session.log $OUT/ 2>/dev/null
true
