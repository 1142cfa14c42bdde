#!/usr/bin/env bash
# Issue 21, call Z7 (the same two H200s, right after Z6): r2's tools/order2-gpu-check.sh on
# GPU 0 and its tests/gpu_probes.rs.
set -uo pipefail
S=gpu-bundle/r2; out=${OUT:-/tmp}/callZ7; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
CUDA_VISIBLE_DEVICES=0 timeout 200 $S/tools/order2-gpu-check.sh $S/pycno > $out/order2-gpu.log 2>&1; echo "order2 check rc $?"; grep -E 'FAIL|passed' $out/order2-gpu.log | tail -4
CUDA_VISIBLE_DEVICES=0 timeout 60 $S/tests/gpu_probes --nocapture --test-threads 1 > $out/test-gpu_probes.log 2>&1; echo "probes rc=$?"; grep -E "^test result|FAILED|panicked" $out/test-gpu_probes.log | head
