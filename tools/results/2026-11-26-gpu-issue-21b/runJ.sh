#!/usr/bin/env bash
# Issue 21, call J (one GPU): the final tile kernel (register cap in float32, 256 threads;
# float64 128 threads): GPU tests, the order-2 check, and its speed (f32 and f64) against the
# two kernels (PYCNO_ORDER2_TILES=0) and first order.
set -uo pipefail
B=${B:-gpu-bundle/b8}; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { echo "--- $*"; timeout 150 $B/pycno bench --backend cuda "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
{
C=1001898,10000000
bench --order 1 --cells $C --repeat 3
bench --order 2 --cells $C --repeat 3
PYCNO_ORDER2_TILES=0 bench --order 2 --cells $C --repeat 3
bench --order 2 --cells 1001898 --repeat 3 --profile
echo "=== f64, 10^6"
bench --order 1 --cells 1001898 --repeat 3 --precision f64
bench --order 2 --cells 1001898 --repeat 3 --precision f64
PYCNO_ORDER2_TILES=0 bench --order 2 --cells 1001898 --repeat 3 --precision f64
echo "=== small, f32: order 1, order 2 tiles, two kernels"
bench --order 1 --cells 4032,64052,257620 --t-end 1 --repeat 5
bench --order 2 --cells 4032,64052,257620 --t-end 1 --repeat 5
PYCNO_ORDER2_TILES=0 bench --order 2 --cells 4032,64052,257620 --t-end 1 --repeat 5
} 2>&1 | tee $out/bench.log
for t in gpu kernels gpu_probes; do
  echo "=== $t"; timeout 200 $B/tests/$t --nocapture --test-threads 1 > $out/test-$t.log 2>&1; echo "rc=$?"
  grep -E "^test result|FAILED|panicked" $out/test-$t.log | head -12
done 2>&1 | tee $out/tests.log
timeout 200 $B/tools/order2-gpu-check.sh $B/pycno > $out/order2-gpu.log 2>&1; echo "order2 check rc $?"; grep -E 'FAIL|passed' $out/order2-gpu.log | tail -8
