#!/usr/bin/env bash
# Issue 20, call I: the GPU tests of bundle g5 on GPU 0 (the update kernels now share
# update_state with the ghost updates), and the multi-GPU check of the kept kernels.
set -uo pipefail
B=$PWD/${B:-gpu-bundle/g5}; out="${OUT:-/tmp}"
export PYCNO_ROOT=$PWD CUDA_VISIBLE_DEVICES=0
date -u | tee $out/date.txt
for t in gpu gpu_probes examples; do
  echo "=== $t"; timeout 240 $B/tests/$t --test-threads 1 2>&1 | tail -8 | tee $out/test-$t.log
done
unset CUDA_VISIBLE_DEVICES
MGPU_CELLS=64052 timeout 250 $B/tools/multi-gpu-check.sh $B/pycno > $out/multi-gpu.log 2>&1; tail -1 $out/multi-gpu.log; grep FAIL $out/multi-gpu.log
