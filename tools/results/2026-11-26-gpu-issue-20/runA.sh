#!/usr/bin/env bash
# Issue 20, call A (one GPU): the time step in the edge pass (edge_dt) against its own kernel,
# bit for bit (GPU tests) and speed (bench, both paths from the same binary by
# PYCNO_FUSED_DT_CELLS: 0 = never fused, 1e9 = always).
set -uo pipefail
B=${B:-gpu-bundle/b1}; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv,noheader | tee $out/gpu.txt
for t in gpu gpu_probes kernels examples; do
  echo "=== $t"; timeout 300 $B/tests/$t --nocapture --test-threads 1 > $out/test-$t.log 2>&1; echo "rc=$?"
  grep -E "^test result|FAILED|panicked|time step in the edge pass" $out/test-$t.log | head -20
done 2>&1 | tee $out/tests.log
{
for F in 0 1000000000; do
  echo "=== PYCNO_FUSED_DT_CELLS=$F"
  PYCNO_FUSED_DT_CELLS=$F timeout 300 $B/pycno bench --backend cuda --cells 4032,16040,64052,128400,256576,502000,1001898 --repeat 5 2>&1 | grep -E '^ +[0-9]'
  PYCNO_FUSED_DT_CELLS=$F timeout 120 $B/pycno bench --backend cuda --cells 4032,64052 --t-end 1 --repeat 5 2>&1 | grep -E '^ +[0-9]'
done
for K in 4 16 64; do echo "=== PYCNO_DEVICE_STEPS=$K, 4032 cells, t-end 1, default fusion"; PYCNO_DEVICE_STEPS=$K timeout 60 $B/pycno bench --backend cuda --cells 4032 --t-end 1 --repeat 5 2>&1 | grep -E '^ +[0-9]'; done
for F in 0 1000000000; do echo "=== 10^7, PYCNO_FUSED_DT_CELLS=$F"; PYCNO_FUSED_DT_CELLS=$F timeout 200 $B/pycno bench --backend cuda --cells 10000000 --repeat 3 2>&1 | grep -E '^ +[0-9]'; done
} 2>&1 | tee $out/bench.log
