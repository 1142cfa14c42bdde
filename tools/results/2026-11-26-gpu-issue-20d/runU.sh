#!/usr/bin/env bash
# Issue 21, call U (one GPU): second order's device-resident steps on owned tiles (a stage one
# kernel: reconstruction, edges and the cells' sums with the time step, or the update itself;
# three kernels a step) against the edge tiles (PYCNO_ORDER2_OWNED=0: five kernels a step),
# the same binary, interleaved, with order 1 for the ratio; then the GPU tests and the order-2
# check (the owned tiles must give the host-driven loop's bits).
# runU.sh bench | runU.sh tests. PYCNO_ORDER2_OWNED exists on branch owned-tiles only (not kept).
set -uo pipefail
B=${B:-gpu-bundle/u}; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv,noheader | tee $out/gpu.txt
row() { grep -E '^ +[0-9]'; }
if [ "${1:-bench}" = bench ]; then
{
for r in 1 2; do
  echo "=== round $r: order 1"
  timeout 200 $B/pycno bench --backend cuda --cells 4032,64052 --t-end 1 --repeat 5 2>&1 | row
  timeout 200 $B/pycno bench --backend cuda --cells 1001898,10000000 --repeat 3 2>&1 | row
  for v in 1 0; do
    echo "=== round $r: order 2, PYCNO_ORDER2_OWNED=$v"
    PYCNO_ORDER2_OWNED=$v timeout 200 $B/pycno bench --backend cuda --order 2 --cells 4032,64052 --t-end 1 --repeat 5 2>&1 | row
    PYCNO_ORDER2_OWNED=$v timeout 200 $B/pycno bench --backend cuda --order 2 --cells 1001898,10000000 --repeat 3 2>&1 | row
  done
done
} 2>&1 | tee $out/bench.log
exit 0
fi
for t in gpu gpu_probes examples kernels; do
  echo "=== $t"; timeout 400 $B/tests/$t --nocapture --test-threads 1 > $out/test-$t.log 2>&1; echo "rc=$?"
  grep -E "^test result|FAILED|panicked" $out/test-$t.log | head -20
done 2>&1 | tee $out/tests.log
timeout 300 $B/tools/order2-gpu-check.sh $B/pycno > $out/order2-gpu.log 2>&1; echo "order2 rc=$?" | tee -a $out/tests.log
grep -E "FAIL|passed" $out/order2-gpu.log | tail -5 | tee -a $out/tests.log
