#!/usr/bin/env bash
# Issue 20, call P (one GPU): a small mesh's batch of device-resident steps as one cooperative
# launch (kernels/persist.cu) against the CUDA graphs (PYCNO_PERSIST_CELLS=0), the same
# binary. runP.sh tests | runP.sh bench ROUND | runP.sh sums.
set -uo pipefail
B=${B:-gpu-bundle/p1}; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv,noheader | tee -a $out/gpu.txt
row() { grep -E '^ +[0-9]'; }
case "${1:-bench}" in
tests)
  for t in ${TESTS:-gpu}; do
    echo "=== $t ${FILTER:-}"; timeout ${TLIM:-400} $B/tests/$t ${FILTER:-} --nocapture --test-threads 1 > $out/test-$t.log 2>&1; echo "rc=$?"
    grep -E "^test |^test result|FAILED|panicked|blew up|batches" $out/test-$t.log | head -60
  done 2>&1 | tee -a $out/tests.log ;;
sums)
  for n in ${SUM_CELLS:-4032 16040 64052}; do
    for p in 0 10000000; do
      d=$(mktemp -d); PYCNO_PERSIST_CELLS=$p timeout 120 $B/pycno run --cells $n --t-end 0.1 --backend cuda --no-vtk -q --out $d > /dev/null 2>&1
      echo "cells $n persist_cells $p: $(python3 -c "import json;s=json.load(open('$d/stats.json'));print(s['state_checksum'], s['steps'], s['cells'])")"
    done
  done 2>&1 | tee -a $out/sums.log ;;
bench)
  r=${2:-1}
  for p in 0 10000000; do
    echo "=== PYCNO_PERSIST_CELLS=$p, round $r"
    PYCNO_PERSIST_CELLS=$p timeout 150 $B/pycno bench --backend cuda --cells ${CELLS:-4032,16040,64052,257620,1001898} --repeat 5 2>&1 | row
    PYCNO_PERSIST_CELLS=$p timeout 100 $B/pycno bench --backend cuda --cells 4032,64052 --t-end 1 --repeat 7 2>&1 | row
  done 2>&1 | tee $out/bench-$r.log ;;
esac
