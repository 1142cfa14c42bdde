#!/usr/bin/env bash
# Issue 20, call B (one GPU): one-block time step and early dependent launch on small meshes,
# the control block in page-locked memory; GPU tests; variants by environment, same binary.
set -uo pipefail
B=${B:-gpu-bundle/b2}; out="${OUT:-/tmp}"; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
for t in gpu gpu_probes kernels; do
  echo "=== $t"; timeout 300 $B/tests/$t --nocapture --test-threads 1 > $out/test-$t.log 2>&1; echo "rc=$?"
  grep -E "^test result|FAILED|panicked" $out/test-$t.log | head -20
done 2>&1 | tee $out/tests.log
bench() { timeout 200 $B/pycno bench --backend cuda "$@" 2>&1 | grep -E '^ +[0-9]'; }
{
for v in "0 0" "16384 0" "0 16384" "16384 16384" "100000 100000"; do
  set -- $v
  echo "=== PYCNO_DT_ONE_BLOCK_CELLS=$1 PYCNO_PDL_EARLY_CELLS=$2"
  export PYCNO_DT_ONE_BLOCK_CELLS=$1 PYCNO_PDL_EARLY_CELLS=$2
  bench --cells 4032,16040,64052 --repeat 7
  bench --cells 4032,16040,64052 --t-end 1 --repeat 7
done
unset PYCNO_DT_ONE_BLOCK_CELLS PYCNO_PDL_EARLY_CELLS
echo "=== default, larger sizes"
bench --cells 128400,256576,1001898 --repeat 5
} 2>&1 | tee $out/bench.log
