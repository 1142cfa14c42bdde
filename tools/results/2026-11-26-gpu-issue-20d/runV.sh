#!/usr/bin/env bash
# Issue 20, call V (two GPUs): the multi-GPU check with the batch choice of 7bb8825 (graphs of
# every power of 2, a batch that may overshoot by a few steps; gpu-bundle/s, the code of main
# since 960605c): N GPUs = 1 GPU bit for bit on every path, both orders, at 64052 cells.
set -uo pipefail
B=${B:-gpu-bundle/s}; out="${OUT:-/tmp}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
MGPU_CELLS=64052 timeout 590 $B/tools/multi-gpu-check.sh $B/pycno > $out/multi-gpu.log 2>&1; echo "multi-gpu rc=$?"
grep -E "FAIL|passed" $out/multi-gpu.log | tail -15
