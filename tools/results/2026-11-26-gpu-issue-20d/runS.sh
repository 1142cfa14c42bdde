#!/usr/bin/env bash
# Issue 20, call S (one GPU): the batch choice of the device-resident loop. Graph sizes in
# powers of 2 and a batch that may overshoot its expected steps by a few (new default) against
# powers of 4 with no overshoot (PYCNO_BATCH_SIZES=4 PYCNO_BATCH_SLACK=0, the choice before),
# the same binary, interleaved; then the GPU tests and the order-2 check (results must not
# depend on the batches).
set -uo pipefail
B=${B:-gpu-bundle/s}; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv,noheader | tee $out/gpu.txt
old() { PYCNO_BATCH_SIZES=4 PYCNO_BATCH_SLACK=0 "$@"; }
row() { grep -E '^ +[0-9]'; }
# runS.sh bench | runS.sh tests (two calls: each stays inside a call's ten minutes).
if [ "${1:-bench}" = bench ]; then
{
for r in 1 2; do
  for p in new old; do
    run=""; [ $p = old ] && run=old
    echo "=== $p, round $r, order 1"
    $run timeout 200 $B/pycno bench --backend cuda --cells 4032,16040,64052 --repeat 7 2>&1 | row
    $run timeout 200 $B/pycno bench --backend cuda --cells 4032,16040,64052 --t-end 1 --repeat 7 2>&1 | row
    $run timeout 200 $B/pycno bench --backend cuda --cells 256576,1001898 --repeat 5 2>&1 | row
    echo "=== $p, round $r, order 2"
    $run timeout 200 $B/pycno bench --backend cuda --order 2 --cells 4032,64052 --t-end 1 --repeat 5 2>&1 | row
  done
done
for K in 128 256; do echo "=== new, PYCNO_DEVICE_STEPS=$K, t-end 1"; PYCNO_DEVICE_STEPS=$K timeout 100 $B/pycno bench --backend cuda --cells 4032,16040 --t-end 1 --repeat 7 2>&1 | row; done
} 2>&1 | tee $out/bench.log
exit 0
fi
for t in gpu kernels; do
  echo "=== $t"; timeout 400 $B/tests/$t --nocapture --test-threads 1 > $out/test-$t.log 2>&1; echo "rc=$?"
  grep -E "^test result|FAILED|panicked" $out/test-$t.log | head -20
done 2>&1 | tee $out/tests.log
timeout 400 $B/tools/order2-gpu-check.sh $B/pycno > $out/order2-gpu.log 2>&1; echo "order2 rc=$?" | tee -a $out/tests.log
tail -3 $out/order2-gpu.log | tee -a $out/tests.log
