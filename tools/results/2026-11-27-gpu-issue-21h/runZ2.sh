#!/usr/bin/env bash
# Issue 21, call Z2 (the same two H200s, right after Z1): r1's tools/order2-gpu-check.sh (3
# ranks = 1 rank, tiles = two kernels, restarts, f32 and f64) and r1's tests/gpu_probes.rs;
# then the 10^6 bench once more, interleaved with s9 (PYCNO_DT_LIST_BLOCKS=1024), on GPU 0.
set -uo pipefail
S=gpu-bundle/r1; B=gpu-bundle/s9; out=${OUT:-/tmp}/callZ2; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { echo "--- $*"; CUDA_VISIBLE_DEVICES=0 timeout 100 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
CUDA_VISIBLE_DEVICES=0 timeout 200 $S/tools/order2-gpu-check.sh $S/pycno > $out/order2-gpu.log 2>&1; echo "order2 check rc $?"; grep -E 'FAIL|passed' $out/order2-gpu.log | tail -4
CUDA_VISIBLE_DEVICES=0 timeout 100 $S/tests/gpu_probes --nocapture --test-threads 1 > $out/test-gpu_probes.log 2>&1; echo "probes rc=$?"; grep -E "^test result|FAILED|panicked" $out/test-gpu_probes.log | head
C=1001898
{
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_DT_LIST_BLOCKS=1024 $B/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
} 2>&1 | tee $out/bench.log
