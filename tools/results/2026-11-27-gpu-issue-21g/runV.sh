#!/usr/bin/env bash
# Issue 21, call V (two H200s of one host): bundle s6 = d612e69 plus the shared cells (the last
# of a cell's tiles sums or finishes it; PYCNO_TILE_SHARED=0 turns it off). Bench at 10^6 on
# GPU 0 (order 1; order 2 with and without the shared cells); the GPU tests on GPU 0; the
# order-2 section of tools/multi-gpu-check.sh (lines 1-61 and 146-193, finishing asked for).
set -uo pipefail
S=gpu-bundle/s6; out=${OUT:-/tmp}/callV; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { echo "--- $*"; CUDA_VISIBLE_DEVICES=0 timeout 100 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
C=1001898
{
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_TILE_SHARED=0 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
} 2>&1 | tee $out/bench.log
CUDA_VISIBLE_DEVICES=0 timeout 170 $S/tests/gpu --nocapture --test-threads 1 > $out/test-gpu.log 2>&1; echo "gpu rc=$?"; grep -E "^test result|FAILED|panicked" $out/test-gpu.log | head
{ sed -n '1,61p;146,193p' $S/tools/multi-gpu-check.sh; echo 'echo "multi-gpu order 2: $pass passed, $fail failed"'; echo '[ "$fail" -eq 0 ]'; } > $out/mgpu-o2.sh
timeout 200 bash $out/mgpu-o2.sh $S/pycno > $out/mgpu-o2.log 2>&1; echo "check rc $?"; grep -E "FAIL|passed" $out/mgpu-o2.log | tail -6
