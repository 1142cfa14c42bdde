#!/usr/bin/env bash
# Issue 20, call Q (one GPU): graphs of every fourth step count up to 64, the first batch
# sized from the first step's time step found at set-up, and the control block copied in and
# out by the graph itself, against the graph sizes before (PYCNO_BATCH_SIZES=2: powers of 2,
# where 20 steps were 16 + 4) and the copies queued beside the graph (PYCNO_GRAPH_COPIES=0),
# the same binary, interleaved. runQ.sh tests | runQ.sh bench ROUND. (callQ-oldkernels: the
# first bundle, built on 1c55087 by mistake, without the copies' switch: sizes only.)
set -uo pipefail
B=${B:-gpu-bundle/q2}; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv,noheader | tee -a $out/gpu.txt
row() { grep -E '^ +[0-9]'; }
case "${1:-bench}" in
tests)
  for t in ${TESTS:-gpu gpu_probes kernels examples}; do
    echo "=== $t ${FILTER:-}"; timeout ${TLIM:-300} $B/tests/$t ${FILTER:-} --nocapture --test-threads 1 > $out/test-$t.log 2>&1; echo "rc=$?"
    grep -E "^test result|FAILED|panicked|blew up|batches" $out/test-$t.log | head -40
  done 2>&1 | tee -a $out/tests.log ;;
bench)
  r=${2:-1}
  for v in old sizes new; do
    case $v in old) e="PYCNO_BATCH_SIZES=2 PYCNO_GRAPH_COPIES=0";; sizes) e="PYCNO_GRAPH_COPIES=0";; new) e="";; esac
    echo "=== $v ($e), round $r"
    env $e timeout 150 $B/pycno bench --backend cuda --cells ${CELLS:-4032,16040,64052,257620,1001898} --repeat 5 2>&1 | row
    env $e timeout 100 $B/pycno bench --backend cuda --cells 4032,64052 --t-end 1 --repeat 7 2>&1 | row
  done 2>&1 | tee $out/bench-$r.log ;;
esac
