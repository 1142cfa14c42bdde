#!/usr/bin/env bash
# Issue 21, call W (one H200): bundle s7 = s6 with the shared cells' count as one atomic of
# acquire and release order (-DPYCNO_FENCE_SC: s6's two full fences) and the time step over a
# list with the blocks the list fills; against s5 (13cfcbc: the kernels of main, d612e69).
# Bench at 10^6 and 10^7 cells, and the GPU tests of s7.
set -uo pipefail
S=gpu-bundle/s7; B=gpu-bundle/s5; out=${OUT:-/tmp}/callW; mkdir -p $out; export PYCNO_ROOT=$PWD
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $out/gpu.txt
bench() { echo "--- $*"; timeout 150 env "$@" 2>&1 | grep -vE '^(paper|    cells)'; }
C=1001898
{
bench X=1 $S/pycno bench --backend cuda --order 1 --cells $C --repeat 3
bench X=1 $B/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_TILE_SHARED=0 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench PYCNO_NVRTC_FLAGS=-DPYCNO_FENCE_SC $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $B/pycno bench --backend cuda --order 2 --cells $C --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 1 --cells 10000000 --repeat 3
bench X=1 $B/pycno bench --backend cuda --order 2 --cells 10000000 --repeat 3
bench X=1 $S/pycno bench --backend cuda --order 2 --cells 10000000 --repeat 3
} 2>&1 | tee $out/bench.log
timeout 120 $S/tests/gpu --nocapture --test-threads 1 > $out/test-gpu.log 2>&1; echo "gpu rc=$?"; grep -E "^test result|FAILED|panicked" $out/test-gpu.log | head
