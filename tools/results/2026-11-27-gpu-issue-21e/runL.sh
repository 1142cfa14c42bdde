#!/usr/bin/env bash
# Issue 21, call L (one H200, after call K): bundle f4's GPU tests (the resident steps, whose
# second-stage tiles finish cells, = the host-driven steps bit for bit), with the finishing
# deliberately broken (-DPYCNO_BREAK_FINISH: must FAIL, so the finishing is on), the order-2
# tests with the tile kernel in float64 too, the probes, and the order-2 check.
set -uo pipefail
F=gpu-bundle/f4; out=/tmp/callL; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
{
for t in gpu gpu_probes; do
  echo "=== $t"; timeout 200 $F/tests/$t --nocapture --test-threads 1 > $out/test-$t.log 2>&1; echo "rc=$?"
  grep -E "^test result|FAILED|panicked" $out/test-$t.log | head -12
done
echo "=== broken finishing (expect FAILED)"
PYCNO_NVRTC_FLAGS=-DPYCNO_BREAK_FINISH timeout 100 $F/tests/gpu --nocapture --test-threads 1 device_steps_equal_host_steps_at_order_2_f32 > $out/broken.log 2>&1; echo "rc=$?"
grep -E "^test result|panicked" $out/broken.log | head -3
echo "=== gpu, order 2, PYCNO_ORDER2_TILES=1"
PYCNO_ORDER2_TILES=1 timeout 200 $F/tests/gpu --nocapture --test-threads 1 order_2 > $out/test-gpu-tiles.log 2>&1; echo "rc=$?"
grep -E "^test result|FAILED|panicked" $out/test-gpu-tiles.log | head -12
} 2>&1 | tee $out/tests.log
timeout 300 $F/tools/order2-gpu-check.sh $F/pycno > $out/order2-gpu.log 2>&1; echo "order2 check rc $?"; grep -E 'FAIL|passed' $out/order2-gpu.log | tail -8
cd /tmp && tar czf "${OUT:-/tmp}/callL.tgz" callL
