#!/usr/bin/env bash
# One benchmark session on the GPU machine, run in the background so that it can outlast one
# device call (10 min): the device tool keeps a machine only while calls follow each other, so
# each call runs `bench/device_wait.sh SECONDS`, which waits and brings back what is done so far.
#
#   bash bench/device_wheels.sh            # here, once: .devwh/part0..6 (vLLM + the daemon's deps)
#   run("mkdir -p /tmp/devparts && cp .devwh/part0 /tmp/devparts/", carry=[".devwh/part0"]), ...
#   one call per part, back to back; then, carrying the last part and .devwh/install.sh:
#   setsid nohup bash bench/device_session.sh >/tmp/res/session.log 2>&1 </dev/null &
#   bash bench/device_wait.sh 560        # in this and every following call
#
# Rows in order of need (the later ones only if the machine is still held): the varlen encoder's
# GPU check, the top-p sampler alone on logits of several shapes, engine (with the time split by
# stage), engine with the per-image encoder, daemon (then a 1-page file dropped 10 s after a
# 300-page PDF), seed, the 16 GB profile, the GPU tests, then fp8 KV cache and
# max_num_batched_tokens 4096 variants. Not in the default list: prof_topp / prof_greedy / prof_fp8
# (a torch profile of 20 decode steps at full batch: CUDA time by kernel, GPU time of vLLM's
# forward/sample ranges, wall time per step; summarised by bench/trace_summary.py), prof_late* (the
# same 800 steps in) and prof_ramp* (the first 45 steps, where the encoder runs), and
# engine_iters / engine_fp8_iters (the engine row with every step's make-up and time logged,
# summarised by bench/iter_summary.py), sampler_trace (vLLM's top-p step timed on every step),
# engine_fp8_jit (fp8 engine row, every step and every kernel JIT compile after start logged),
# daemon_iters / daemon_fp8_iters (the daemon row with its own step timeline and input times),
# attn (decode attention kernels alone, bench/bench_attention.py), engine_fp8_best / daemon_fp8_best
# (fp8 rows with the attention kernel and KV block that attn found fastest).
# ROWS="engine daemon test_b" picks rows. Results: /tmp/res/results.jsonl and report.md.
#
# Rows of one run: every row records the run id ($OCR_BENCH_RUN, set here once per session), the
# commit ($OCR_BENCH_COMMIT: pass it, `OCR_BENCH_COMMIT=$(git rev-parse HEAD)` where the repository
# is, since the device's copy of the tree has no .git; else .bench-commit, else "unknown"), the
# settings in force and the Pixtral encoder that really ran (bench/rowfacts.py). A ratio in
# bench/RESULTS.md divides rows of one run: e.g. ROWS="test_c engine engine_perimage engine_stock
# engine_fp8 daemon daemon_fp8 seed" for the engine/daemon/seed ratios and the encoder with
# varlen, per_image and vLLM's own (stock) attention, each with its time split (--phases).
# Afterwards, where the repository is: `bash bench/keep_results.sh <the res.tgz brought back>`
# commits-ready raw results into bench/results/<UTC date>/.
set -u
export OCR_BENCH_RUN=${OCR_BENCH_RUN:-$(date -u +%Y-%m-%dT%H:%MZ)}
export OCR_BENCH_COMMIT=${OCR_BENCH_COMMIT:-$(git rev-parse HEAD 2>/dev/null || cat .bench-commit 2>/dev/null || echo unknown)}
export OUT=/tmp/res CALL_LIMIT=${SESSION_LIMIT:-1700}
mkdir -p $OUT
# DONE on every exit, a failed install included: device_wait.sh then returns at once instead of
# waiting out its call (2026-12-01 08:11: a missing part cost one 9-minute call of the budget)
trap 'touch $OUT/DONE' EXIT
# The wheel parts carried into this tree go to /tmp/devparts first: the copy below leaves them
# out (they are 400 MB), and install.sh looks for them there (the same 08:11 call: the last part,
# carried with this call, was left out of the copy and the install stopped at an incomplete tar).
mkdir -p /tmp/devparts && cp -n .devwh/part* /tmp/devparts/ 2>/dev/null
rm -rf /tmp/repo && mkdir -p /tmp/repo && tar cf - --exclude='./.devwh/part*' --exclude=./.git . | tar xf - -C /tmp/repo
cd /tmp/repo || exit 1
source bench/device_env.sh || { echo 'install failed: see above'; exit 1; }
python -m compileall -q -j 16 /tmp/site/vllm /tmp/site/transformers >/dev/null 2>&1 &
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee $OUT/gpu.txt
W=/tmp/bw; R=$OUT/results.jsonl
# A row killed by its time limit can leave its daemon (and that daemon's engine core, holding most of
# the GPU's memory) behind: the next row's engine then cannot start. Kill them all between rows.
cleanup() {
  pkill -9 -f '[V]LLM::' 2>/dev/null; pkill -9 -f '[v]llm serve' 2>/dev/null; pkill -9 -f '[d]aemon.engines.serve' 2>/dev/null
  pkill -9 -f '[d]aemon run' 2>/dev/null; pkill -9 -f '[m]ultiprocessing.forkserver' 2>/dev/null; sleep 2
}
B="python bench/bench_gpu.py"
# the bench rows' pages (~40 s of CPU) are made in the background, beside the first rows that need
# none of them (preflight, the GPU tests); a row that needs them waits for them first
( $B pages --dir $W --docs 32 --pages-per-doc 8 > $OUT/pages.log 2>&1; echo "=== pages rc=$? t=${SECONDS}s" ) &
pages_pid=$!
python -c "import vllm, torch, transformers; print('vllm', vllm.__version__, 'torch', torch.__version__, 'transformers', transformers.__version__)" | tee -a $OUT/gpu.txt
echo "run $OCR_BENCH_RUN commit $OCR_BENCH_COMMIT" | tee -a $OUT/gpu.txt
for row in ${ROWS:-test_c sampler engine engine_perimage engine_stock daemon seed profile16 test_b test_a test_d engine_fp8 daemon_fp8 engine_4096}; do
  case $row in preflight|gpu_tests|test_*|sampler|attn|cpu_cost) ;; *) wait $pages_pid 2>/dev/null ;; esac
  case $row in
    test_c)      step test_c 150 python -m pytest tests/gpu/test_c_pixtral_varlen_gpu.py -q -p no:cacheprovider -rA
                 # the varlen encoder is the default only once it matches vLLM's own attention here
                 grep -q "2 passed" $OUT/test_c.log || { echo "varlen encoder check failed: per_image for the rest"; export OCR_DAEMON_PIXTRAL_PATCH=per_image; } ;;
    sampler)     step sampler 180 python bench/bench_sampler.py --results $OUT/sampler.jsonl ;;
    engine)      step engine 300 $B engine-async --dir $W --results $R --phases ;;
    sampler_trace) # top-p step time on every engine step of the row, logit stats every 25th (a diagnostic)
                 step sampler_trace 300 $B engine-async --dir $W --results $R --sampler-trace $OUT/sampler_trace.jsonl ;;
    engine_iters|engine_fp8_iters)
                 # every engine step of the row and its phases (top-p, greedy, top-p again) logged
                 extra=""; [ $row = engine_fp8_iters ] && extra="--kv-dtype fp8"
                 step $row 330 $B engine-async --dir $W --results $R --phases --iter-log $extra
                 python bench/iter_summary.py $OUT/$row.log --json $OUT/${row}_summary.json > $OUT/${row}_summary.txt 2>&1 ;;
    prof_topp|prof_greedy|prof_fp8|prof_late|prof_late_greedy|prof_ramp|prof_ramp_greedy)
                 extra=""
                 case $row in *greedy) extra="--greedy" ;; esac
                 case $row in prof_fp8) extra="--kv-dtype fp8" ;; prof_late*) extra="$extra --profile-delay 800" ;;
                              prof_ramp*) extra="$extra --profile-delay 1 --profile-iters 45" ;; esac
                 VLLM_CUSTOM_SCOPES_FOR_PROFILING=1 step $row 260 $B engine-async --dir $W --results $R --profile-decode $OUT/$row $extra
                 # the traces are too big to bring back: summarise them here, keep the kernel table
                 python bench/trace_summary.py $OUT/$row --json $OUT/${row}_summary.json > $OUT/${row}_summary.txt 2>&1
                 mkdir -p /tmp/traces && find $OUT/$row -name '*.pt.trace.json*' -exec mv {} /tmp/traces/ \; ;;
    engine_fp8_jit) # fp8 engine row with every step and every kernel JIT compile after start logged
                 step engine_fp8_jit 300 $B engine-async --dir $W --results $R --kv-dtype fp8 --iter-log --jit-verbose
                 python bench/iter_summary.py $OUT/engine_fp8_jit.log --json $OUT/engine_fp8_jit_summary.json > $OUT/engine_fp8_jit_summary.txt 2>&1 ;;
    daemon_iters|daemon_fp8_iters|daemon_fp8_nice10)
                 # the daemon row with vLLM's per-step log and each page's input-processing time in
                 # the daemon's log, PASS markers around the timed part: the daemon's own timeline;
                 # daemon_fp8_nice10: render workers 10 nice steps down (A/B of daemon.render_nice)
                 kv=auto; nice=-1
                 case $row in daemon_fp8_iters) kv=fp8 ;; daemon_fp8_nice10) kv=fp8; nice=10 ;; esac
                 step $row 260 $B daemon --dir $W --results $R --kv-dtype $kv --iter-log --render-nice $nice
                 cp $OUT/daemon-default-$kv.log $OUT/${row}_daemon.log  # the next daemon row reuses the name
                 python bench/iter_summary.py $OUT/${row}_daemon.log --json $OUT/${row}_summary.json > $OUT/${row}_summary.txt 2>&1 ;;
    attn)        # decode attention alone per kernel, KV dtype and block size (bench/bench_attention.py)
                 step attn 200 python bench/bench_attention.py --results $OUT/attention.jsonl ;;
    engine_fp8_best|daemon_fp8_best)
                 # fp8 KV with the fastest decode attention and block that the attn row measured
                 best=$(python bench/bench_attention.py --pick fp8 --results $OUT/attention.jsonl)
                 echo "$row: ${best:-vLLM default attention}"
                 if [ $row = engine_fp8_best ]; then
                   step $row 300 $B engine-async --dir $W --results $R --kv-dtype fp8 --iter-log $best
                   log=$OUT/$row.log
                 else
                   step $row 260 $B daemon --dir $W --results $R --kv-dtype fp8 --iter-log $best
                   log=$(ls -t $OUT/daemon-default-fp8*.log | head -1)
                 fi
                 python bench/iter_summary.py $log --json $OUT/${row}_summary.json > $OUT/${row}_summary.txt 2>&1 ;;
    engine_perimage) OCR_DAEMON_PIXTRAL_PATCH=per_image step engine_perimage 300 $B engine-async --dir $W --results $R --phases ;;
    engine_stock) # vLLM's Pixtral encoder as shipped (dense block mask), time split by stage as the engine row
                 OCR_DAEMON_PIXTRAL_PATCH=off step engine_stock 300 $B engine-async --dir $W --results $R --phases --pixtral-patch off ;;
    daemon)      step daemon 400 $B daemon --dir $W --results $R --mixed 10 ;;
    seed)        step seed 240 $B seed --dir $W --results $R --pages 16 ;;
    profile16)   step profile16 300 $B daemon --dir $W --results $R --profile 16gb --docs-limit 12 ;;
    test_b)      step test_b 330 python -m pytest tests/gpu/test_b_daemon_gpu.py -q -p no:cacheprovider -rA ;;
    test_a)      step test_a 420 python -m pytest tests/gpu/test_a_vllm_engine_gpu.py -q -p no:cacheprovider -rA -s ;;
    test_d)      step test_d 420 python -m pytest tests/gpu/test_d_pixtral_modes_gpu.py -q -p no:cacheprovider -rA ;;
    engine_fp8)  step engine_fp8 240 $B engine-async --dir $W --results $R --kv-dtype fp8 ;;
    # the fp8 rows with the encoder's share (input processing, encoder + prefill for 1 token): the
    # varlen/FA3 encoder and vLLM's own as shipped, everything else equal (issue 14's stock row)
    engine_fp8s) step engine_fp8s 260 $B engine-async --dir $W --results $R --kv-dtype fp8 --phases-short ;;
    engine_fp8_stock) OCR_DAEMON_PIXTRAL_PATCH=off step engine_fp8_stock 330 $B engine-async --dir $W --results $R --kv-dtype fp8 --phases-short --pixtral-patch off ;;
    # the same pair on 64 pages: vLLM's own encoder did not finish 256 pages in 179 s
    # (2026-12-01 08:34, 8211f87), where the varlen one took 31.5 s; 64 pages fit a short session
    engine_fp8_64) step engine_fp8_64 240 $B engine-async --dir $W --results $R --kv-dtype fp8 --phases-short --pages 64 ;;
    engine_fp8_stock_64) OCR_DAEMON_PIXTRAL_PATCH=off step engine_fp8_stock_64 400 $B engine-async --dir $W --results $R --kv-dtype fp8 --phases-short --pages 64 --pixtral-patch off ;;
    daemon_fp8)  step daemon_fp8 260 $B daemon --dir $W --results $R --kv-dtype fp8 ;;
    # issue 34: the same row with glibc's default malloc arenas (the daemon limits them to two,
    # daemon/procenv.py; MALLOC_ARENA_MAX=0 turns that off), to see what the limit costs on a GPU
    daemon_fp8_arenas0) MALLOC_ARENA_MAX=0 step daemon_fp8_arenas0 260 $B daemon --dir $W --results $R --kv-dtype fp8 ;;
    # issue 15: the same pages as scans (image-only PDFs) under text_layer auto, the default: every
    # page's text-layer check, then the engine; compare with daemon_fp8 and engine_fp8
    daemon_fp8_scans) step daemon_fp8_scans 260 $B daemon --dir $W --results $R --kv-dtype fp8 --scans --text-layer auto ;;
    engine_4096) step engine_4096 240 $B engine-async --dir $W --results $R --mbt 4096 ;;
    # issue 18 (scale-out). serve / serve_patched: one vllm serve with the daemon's fp8 settings
    # (daemon.engines.serve), vLLM's own encoder / the varlen patch in its engine core; rows
    # <tag>_client (256 pages posted at once, the server's /metrics split) and <tag>_daemon
    # (the daemon, engine.kind openai, on that server). Put engine_fp8 daemon_fp8 in the same run.
    # serve (vLLM's own encoder) on 64 pages / 8 documents: vLLM's encoder did not finish 256 pages
    # in 179 s in-process (2026-12-01 08:34), twice that (client + daemon) would not fit the row;
    # compare it with engine_fp8_stock_64, serve_patched with engine_fp8 / daemon_fp8
    serve)       step serve 560 $B serve --dir $W --results $R --kv-dtype fp8 --pixtral-patch off --pages 64 --docs-limit 8 ;;
    serve_patched) step serve_patched 560 $B serve --dir $W --results $R --kv-dtype fp8 --pixtral-patch varlen --serve-port 8791 ;;
    # the pair of one session with little time: the varlen server on 256 pages, then on the first
    # 64 (serve_varlen_client_64), then the daemon on it; vLLM's encoder served, the client on the
    # same 64 pages only (serve_client)
    serve_patched64) step serve_patched64 420 $B serve --dir $W --results $R --kv-dtype fp8 --pixtral-patch varlen --serve-port 8791 --also-pages 64 ;;
    serve_client64) step serve_client64 330 $B serve --dir $W --results $R --kv-dtype fp8 --pixtral-patch off --pages 64 --client-only ;;
    # cheap checks before the rows that cost minutes (imports, serve flags through vLLM's parser,
    # NVML, Tesseract data): bench/device_preflight.py
    preflight)   step preflight 150 python bench/device_preflight.py ;;
    # every tests/gpu test, four groups at once on the one GPU, and cpu_cost beside them
    # (bench/gpu_tests.sh; fixed KV budgets: tests/gpu/gpushare.py)
    gpu_tests)   step gpu_tests 660 bash bench/gpu_tests.sh $OUT/gpu_tests 640
                 cat $OUT/gpu_tests/cpu_cost.jsonl >> $R 2>/dev/null ;;
    cpu_cost)    step cpu_cost 240 python bench/bench_cpu_cost.py --results $R ;;
    test_pdf)    step test_pdf 360 python -m pytest tests/gpu/test_pdf_vllm_gpu.py -q -p no:cacheprovider -rA ;;
    test_e)      step test_e 420 python -m pytest tests/gpu/test_e_data_parallel_gpu.py -q -p no:cacheprovider -rA -s ;;
    test_f)      step test_f 900 python -m pytest tests/gpu/test_f_openai_fleet_gpu.py -q -p no:cacheprovider -rA -s ;;
    # issue 19 (two or more GPUs; on one GPU the engine refuses to start): vLLM's data parallelism
    # over 2 GPUs, the in-process engine and the daemon; compare with engine_fp8 / daemon_fp8
    engine_dp2)  step engine_dp2 300 $B engine-async --dir $W --results $R --kv-dtype fp8 --dp 2 ;;
    daemon_dp2)  step daemon_dp2 400 $B daemon --dir $W --results $R --kv-dtype fp8 --dp 2 ;;
  esac
  cleanup
  $B report --results $R > $OUT/report.md 2>&1
done
