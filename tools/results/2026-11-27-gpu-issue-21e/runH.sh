#!/usr/bin/env bash
# Issue 21, call H (one H200, right after call G): bundle f1's GPU tests (the device-resident
# steps, whose tiles finish their cells, equal the host-driven ones, which finish none, bit for
# bit: tests/gpu.rs device_steps_equal_host_steps_at_order_2), those with the tile kernel in
# float64 too (PYCNO_ORDER2_TILES=1), the probes, and the order-2 check (3 ranks, host-driven,
# = 1 rank, device-resident, bit for bit; two kernels = tiles without fused multiply-adds).
set -uo pipefail
F=gpu-bundle/f1; out=/tmp/callH; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
{
for t in gpu gpu_probes; do
  echo "=== $t"; timeout 200 $F/tests/$t --nocapture --test-threads 1 > $out/test-$t.log 2>&1; echo "rc=$?"
  grep -E "^test result|FAILED|panicked" $out/test-$t.log | head -12
done
echo "=== gpu, order 2, PYCNO_ORDER2_TILES=1"
PYCNO_ORDER2_TILES=1 timeout 200 $F/tests/gpu --nocapture --test-threads 1 order_2 > $out/test-gpu-tiles.log 2>&1; echo "rc=$?"
grep -E "^test result|FAILED|panicked" $out/test-gpu-tiles.log | head -12
} 2>&1 | tee $out/tests.log
timeout 300 $F/tools/order2-gpu-check.sh $F/pycno > $out/order2-gpu.log 2>&1; echo "order2 check rc $?"; grep -E 'FAIL|passed' $out/order2-gpu.log | tail -8
cd /tmp && tar czf "${OUT:-/tmp}/callH.tgz" callH
