#!/usr/bin/env bash
# Issue 21 (second order in the device-resident loop on one GPU), call F (one GPU): the GPU
# tests (device-resident order 2 against host-driven, bit for bit, f32 and f64), the order-2
# check (1 rank, now device-resident, against 3 host-driven ranks), second order's speed
# device-resident against host-driven (PYCNO_DEVICE_STEPS=1) and against first order, and a
# register-cap variant of the order-2 kernels (var/lb3: __launch_bounds__, same arithmetic).
set -uo pipefail
B=${B:-gpu-bundle/b6}; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
for t in gpu kernels gpu_probes; do
  echo "=== $t"; timeout 280 $B/tests/$t --nocapture --test-threads 1 > $out/test-$t.log 2>&1; echo "rc=$?"
  grep -E "^test result|FAILED|panicked" $out/test-$t.log | head -12
done 2>&1 | tee $out/tests.log
grep -E "order 2, k =|order 1, k =" $out/test-gpu.log | head -20
timeout 150 $B/tools/order2-gpu-check.sh $B/pycno > $out/order2-gpu.log 2>&1; echo "order2 check rc $?"; grep -E 'FAIL|passed' $out/order2-gpu.log | tail -8
bench() { timeout 120 $B/pycno bench --backend cuda "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
{
echo "=== small and middle meshes: order 1, order 2 resident, order 2 host-driven"
bench --order 1 --cells 4032,64052,257620 --t-end 1 --repeat 5
bench --order 2 --cells 4032,64052,257620 --t-end 1 --repeat 5
PYCNO_DEVICE_STEPS=1 bench --order 2 --cells 4032,64052,257620 --t-end 1 --repeat 5
echo "=== the paper benchmark's own end time"
bench --order 1 --cells 4032,64052 --repeat 5
bench --order 2 --cells 4032,64052 --repeat 5
echo "=== 1e6, 1e7: order 1, order 2 resident, order 2 host-driven (1e6)"
bench --order 1 --cells 1001898,10000000 --repeat 3
bench --order 2 --cells 1001898,10000000 --repeat 3
PYCNO_DEVICE_STEPS=1 bench --order 2 --cells 1001898 --repeat 3
echo "=== register caps (var/lb3), 1e6 order 2, and its profile"
PYCNO_KERNEL_DIR=$B/var/lb3 bench --order 2 --cells 1001898 --repeat 3
PYCNO_KERNEL_DIR=$B/var/lb3 bench --order 2 --cells 1001898 --repeat 3 --profile
} 2>&1 | tee $out/bench.log
